"""Create (or reuse) a principal with a grant on a scope and print a new API token on the last line. The
token is bound to that scope's subtree and that role; a name held by a principal of another kind is refused."""

from __future__ import annotations

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from governance.errors import DomainError
from governance.models import PrincipalKind, Role
from governance.services.principal import grant_add, principal_ensure, token_issue
from governance.services.scope import scope_ensure


class Command(BaseCommand):
    help = "Create or reuse principal NAME with ROLE on SCOPE (created when missing) and print a new token."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--scope", required=True, help="scope path, e.g. acme/slides")
        parser.add_argument("--role", default=Role.AGENT, choices=Role.values)
        parser.add_argument("--kind", default=PrincipalKind.AGENT, choices=PrincipalKind.values)
        parser.add_argument(
            "--expires-in-days",
            type=int,
            default=None,
            help="the token stops working after this many days (default: until revoked)",
        )

    def handle(self, *args, name, scope, role, kind, expires_in_days, **options):
        if expires_in_days is not None and expires_in_days < 1:
            raise CommandError("--expires-in-days is a whole number of days, at least 1.")
        expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
        try:
            # The command runs as the operator of the installation: the system actor, audited as "system".
            # One transaction: a refused name leaves no scope or grant behind.
            with transaction.atomic():
                scope_obj = scope_ensure(path=scope, actor=None)
                principal = principal_ensure(name=name, kind=kind, actor=None)
                grant_add(principal=principal, scope=scope_obj, role=role, actor=None)
                raw = token_issue(
                    principal=principal, scope=scope_obj, max_role=role, expires_at=expires_at, actor=None
                )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"principal {principal.name} ({principal.kind}) has {role} on {scope_obj.path}")
        until = f", until {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else ""
        self.stdout.write(f"the token acts in {scope_obj.path} and below, up to {role}{until}")
        self.stdout.write(raw)
