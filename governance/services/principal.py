from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from governance.errors import InvalidInput, NotFound, PermissionDenied
from governance.models import ROLE_RANK, ApiToken, Grant, Principal, PrincipalKind, Role, Scope, hash_token
from governance.permissions import Action, highest_rank, require, roles_at
from governance.services.audit import AuditEntry, audit_record
from governance.services.outbox import outbox_emit

GRANT_ABOVE_OWN = "Nobody can grant a role above their own."


def principal_for_user(user) -> Principal:
    """The principal of a Django user (created on first use)."""
    principal = getattr(user, "principal", None)
    if principal is not None:
        return principal
    principal, _ = Principal.objects.get_or_create(
        user=user, defaults={"kind": PrincipalKind.USER, "name": user.get_username()}
    )
    return principal


def principal_ensure(*, name: str, kind: str, actor: Principal | None) -> Principal:
    if kind not in PrincipalKind.values:
        raise InvalidInput(f"kind must be one of: {', '.join(PrincipalKind.values)}.", field="kind")
    with transaction.atomic():
        principal, created = Principal.objects.get_or_create(name=name, defaults={"kind": kind})
        if created:
            audit_record(actor=actor, entry=AuditEntry("principal.create", "principal", str(principal.pk),
                                                       data={"kind": kind, "name": name}))
        return principal


def token_issue(*, principal: Principal, actor: Principal | None) -> str:
    """Create an API token for `principal`; the raw key is returned once and only its hash is kept."""
    raw = ApiToken.generate()
    with transaction.atomic():
        token = ApiToken.objects.create(principal=principal, prefix=raw[4:12], key_hash=hash_token(raw))
        audit_record(actor=actor, entry=AuditEntry("token.issue", "token", str(token.pk),
                                                   data={"principal": principal.name, "prefix": token.prefix}))
    return raw


def token_revoke(*, token_id: int, actor: Principal | None) -> None:
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().filter(pk=token_id, revoked_at__isnull=True).first()
        if token is None:
            raise NotFound()
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        audit_record(actor=actor, entry=AuditEntry("token.revoke", "token", str(token.pk),
                                                   data={"principal": token.principal.name}))


def grant_add(*, principal: Principal, scope: Scope, role: str, actor: Principal | None) -> Grant:
    """Give `role` on `scope`'s subtree. The actor must be an owner there and cannot grant above its own rank."""
    if role not in Role.values:
        raise InvalidInput(f"role must be one of: {', '.join(Role.values)}.", field="role")
    with transaction.atomic():
        require(actor, scope, Action.MANAGE_GRANTS)
        if actor is not None and ROLE_RANK[Role(role)] > highest_rank(roles_at(actor, scope)):
            raise PermissionDenied(GRANT_ABOVE_OWN)
        grant, created = Grant.objects.get_or_create(
            principal=principal, scope=scope, role=role, defaults={"granted_by": actor}
        )
        if created:
            audit_record(actor=actor, entry=AuditEntry(
                "grant.add", "grant", str(grant.pk), scope.path, "", role, "",
                {"principal": principal.name, "role": role},
            ))
            outbox_emit(topic="grant.changed", payload={"scope_id": scope.pk, "principal_id": principal.pk})
        return grant


def grant_revoke(*, grant_id: int, actor: Principal | None, reason: str = "") -> None:
    with transaction.atomic():
        grant = Grant.objects.select_for_update().select_related("scope", "principal").filter(pk=grant_id).first()
        if grant is None:
            raise NotFound()
        require(actor, grant.scope, Action.MANAGE_GRANTS)
        if actor is not None and ROLE_RANK[Role(grant.role)] > highest_rank(roles_at(actor, grant.scope)):
            raise PermissionDenied(GRANT_ABOVE_OWN)
        audit_record(actor=actor, entry=AuditEntry(
            "grant.revoke", "grant", str(grant.pk), grant.scope.path, grant.role, "", reason,
            {"principal": grant.principal.name, "role": grant.role},
        ))
        outbox_emit(topic="grant.changed", payload={"scope_id": grant.scope_id, "principal_id": grant.principal_id})
        grant.delete()


def user_ensure(*, username: str, password: str | None = None, actor: Principal | None) -> Principal:
    """A Django user with its principal (used by the demo loader and admin commands)."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created and password:
        user.set_password(password)
        user.save(update_fields=["password"])
    return principal_for_user(user)
