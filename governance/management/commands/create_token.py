"""Create (or reuse) a principal with a grant on a scope and print a new API token on the last line."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

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

    def handle(self, *args, name, scope, role, kind, **options):
        try:
            # The command runs as the operator of the installation: the system actor, audited as "system".
            scope_obj = scope_ensure(path=scope, actor=None)
            principal = principal_ensure(name=name, kind=kind, actor=None)
            grant_add(principal=principal, scope=scope_obj, role=role, actor=None)
            raw = token_issue(principal=principal, actor=None)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"principal {principal.name} ({principal.kind}) has {role} on {scope_obj.path}")
        self.stdout.write(raw)
