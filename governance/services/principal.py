from __future__ import annotations

from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from governance.errors import AgentRoleCap, Conflict, InvalidInput, LastOwner, NotFound, PermissionDenied
from governance.models import ApiToken, Grant, Principal, PrincipalKind, Role, Scope, hash_token
from governance.permissions import (
    GRANT_ABOVE_OWN,
    LAST_OWNER,
    TOKEN_ISSUE_DENIED,
    TOKEN_REVOKE_DENIED,
    UNKNOWN_PRINCIPAL,
    Action,
    agent_may_hold,
    can_issue_token,
    can_revoke_token,
    lock_owner_grants,
    owner_left,
    principal_visible,
    require,
    require_grant,
)
from governance.services.audit import AuditEntry, audit_record
from governance.services.outbox import outbox_emit

__all__ = [
    "GRANT_ABOVE_OWN",
    "GRANT_REVOKE_REASON_REQUIRED",
    "TOKEN_REVOKE_REASON_REQUIRED",
    "PRINCIPAL_KIND_TAKEN",
    "token_issue",
    "token_revoke",
    "grant_add",
    "grant_revoke",
]

PRINCIPAL_KIND_TAKEN = "The name {name!r} belongs to a principal of kind {kind}; choose another name."
TEAM_NAME_TAKEN_HERE = (
    "A team of this workspace is already called {name!r}; the team cannot make it its home."
)
# Whoever takes a grant away says why, in the dashboard, the API and a command alike: the audit event keeps it.
GRANT_REVOKE_REASON_REQUIRED = "Say why the grant is revoked; the reason goes into the audit log."
TOKEN_REVOKE_REASON_REQUIRED = "Say why the token is revoked; the reason goes into the audit log."
TOKEN_EXPIRY_PAST = "A token's expiry must lie in the future."
TOKEN_BOUND_PARTIAL = "A token's bound is a scope and a highest role together."


def principal_for_user(user) -> Principal:
    """The principal of a Django user (created on first use)."""
    principal = getattr(user, "principal", None)
    if principal is not None:
        return principal
    principal, _ = Principal.objects.get_or_create(
        user=user, defaults={"kind": PrincipalKind.USER, "name": user.get_username()}
    )
    return principal


def principal_ensure(*, name: str, kind: str, actor: Principal | None, workspace=None) -> Principal:
    """The principal `name` of `kind`, created when missing (a team with `workspace` as its home; without
    one, it takes the workspace of its first grant, which only the system may give it)."""
    if kind not in PrincipalKind.values:
        raise InvalidInput(f"kind must be one of: {', '.join(PrincipalKind.values)}.", field="kind")
    home = workspace if kind == PrincipalKind.GROUP else None
    with transaction.atomic():
        # A team's name is its workspace's; every other name is the installation's (models.Principal).
        # Without a home, the one team of that name the system already has (if only one) is meant.
        teams = (
            list(Principal.objects.filter(name=name, kind=PrincipalKind.GROUP)[:2]) if kind == "group" else []
        )
        if home is None and len(teams) == 1:
            principal, created = teams[0], False
        else:
            principal, created = Principal.objects.get_or_create(
                name=name, workspace=home, defaults={"kind": kind}
            )
        if principal.kind != kind:  # never hand out (a token for) a person's or a team's name as an agent
            raise Conflict(PRINCIPAL_KIND_TAKEN.format(name=name, kind=principal.kind), field="name")
        if created:
            audit_record(
                actor=actor,
                entry=AuditEntry(
                    "principal.create",
                    "principal",
                    str(principal.pk),
                    data={"kind": kind, "name": name},
                    workspace_id=home.pk if home is not None else None,
                ),
            )
        return principal


def token_issue(
    *,
    principal: Principal,
    actor: Principal | None,
    scope: Scope | None = None,
    max_role: str = "",
    expires_at: datetime | None = None,
) -> str:
    """Create an API token for `principal`, bound to `scope`'s subtree and roles up to `max_role`, valid
    until `expires_at` (None: until revoked); the raw key is returned once and only its hash is kept.
    Only the system actor may issue a token without a bound (it is then limited by grants alone)."""
    if max_role and max_role not in Role.values:
        raise InvalidInput(f"role must be one of: {', '.join(Role.values)}.", field="max_role")
    if (scope is None) != (not max_role) or (scope is None and actor is not None):
        raise InvalidInput(TOKEN_BOUND_PARTIAL, field="scope")
    if expires_at is not None and expires_at <= timezone.now():
        raise InvalidInput(TOKEN_EXPIRY_PAST, field="expires_at")
    if principal.kind == PrincipalKind.AGENT and max_role and not agent_may_hold(max_role):
        raise AgentRoleCap(field="role")
    raw = ApiToken.generate()
    with transaction.atomic():
        if scope is not None and not can_issue_token(actor, scope, max_role):
            require(actor, scope, Action.READ)  # outside the issuer's scopes: NotFound, as for a read
            raise PermissionDenied(TOKEN_ISSUE_DENIED)
        token = ApiToken.objects.create(
            principal=principal,
            prefix=raw[4:12],
            key_hash=hash_token(raw),
            scope=scope,
            max_role=max_role,
            expires_at=expires_at,
        )
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "token.issue",
                "token",
                str(token.pk),
                scope.path if scope else "",
                data={
                    "principal": principal.name,
                    "prefix": token.prefix,
                    "max_role": max_role,
                    "expires_at": expires_at.isoformat() if expires_at else None,
                },
            ),
        )
    return raw


def token_revoke(*, token_id: int, actor: Principal | None, reason: str) -> ApiToken:
    """Revoke a token, saying why (an empty reason is InvalidInput, field reason, once the actor may
    revoke it): its own principal or an owner over its scope may (permissions.can_revoke_token).
    Whoever cannot even see the token's scope gets the same NotFound as for an unknown token."""
    reason = reason.strip()
    with transaction.atomic():
        token = (
            ApiToken.objects.select_for_update(of=("self",))
            .select_related("principal", "scope")
            .filter(pk=token_id, revoked_at__isnull=True)
            .first()
        )
        if token is None:
            raise NotFound()
        if not can_revoke_token(actor, token):
            if token.scope_id is not None:
                require(actor, token.scope, Action.READ)
            elif not principal_visible(actor, token.principal):
                raise NotFound()
            raise PermissionDenied(TOKEN_REVOKE_DENIED)
        if not reason:
            raise InvalidInput(TOKEN_REVOKE_REASON_REQUIRED, field="reason")
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "token.revoke",
                "token",
                str(token.pk),
                token.scope.path if token.scope_id else "",
                reason=reason,
                data={"principal": token.principal.name},
            ),
        )
        return token


def grant_add(*, principal: Principal, scope: Scope, role: str, actor: Principal | None) -> Grant:
    """Give `role` on `scope`'s subtree. The actor must be an owner there and cannot grant above its own rank."""
    if role not in Role.values:
        raise InvalidInput(f"role must be one of: {', '.join(Role.values)}.", field="role")
    with transaction.atomic():
        require_grant(actor, scope, role)
        require_grantable(principal, scope, role, actor)
        grant, created = Grant.objects.get_or_create(
            principal=principal, scope=scope, role=role, defaults={"granted_by": actor}
        )
        if created:
            audit_record(
                actor=actor,
                entry=AuditEntry(
                    "grant.add",
                    "grant",
                    str(grant.pk),
                    scope.path,
                    "",
                    role,
                    "",
                    {"principal": principal.name, "role": role},
                ),
            )
            outbox_emit(topic="grant.changed", payload={"scope_id": scope.pk, "principal_id": principal.pk})
        return grant


def require_grantable(principal: Principal, scope: Scope, role: str, actor: Principal | None) -> None:
    """The walls a grant keeps, whoever gives it: a team holds roles only in its home workspace (another
    workspace's team is the same answer as an unknown name; a team the system made without a home takes
    the workspace of its first grant, from the system only); an agent, or a team with an agent among its
    members, holds at most the agent role."""
    if principal.kind == PrincipalKind.GROUP:
        if principal.workspace_id is None and actor is None:
            if Principal.objects.filter(workspace=scope.workspace_id, name=principal.name).exists():
                raise Conflict(TEAM_NAME_TAKEN_HERE.format(name=principal.name), field="principal")
            Principal.objects.filter(pk=principal.pk, workspace__isnull=True).update(
                workspace=scope.workspace_id
            )
            principal.workspace_id = scope.workspace_id
        if principal.workspace_id != scope.workspace_id:
            raise InvalidInput(UNKNOWN_PRINCIPAL, field="principal")
        if not agent_may_hold(role) and principal.members.filter(kind=PrincipalKind.AGENT).exists():
            raise AgentRoleCap(field="role")
    elif principal.kind == PrincipalKind.AGENT and not agent_may_hold(role):
        raise AgentRoleCap(field="role")


def grant_revoke(*, grant_id: int, actor: Principal | None, reason: str) -> None:
    """Take a grant away, saying why (an empty reason is InvalidInput, field reason, once the actor may
    revoke it). The actor must be able to grant that role there; an owner grant is refused (LastOwner,
    409) when its scope would be left without an owner (permissions.owners)."""
    reason = reason.strip()
    with transaction.atomic():
        grant = Grant.objects.select_related("scope", "principal").filter(pk=grant_id).first()
        if grant is None:
            raise NotFound()
        require_grant(actor, grant.scope, grant.role)
        if not reason:
            raise InvalidInput(GRANT_REVOKE_REASON_REQUIRED, field="reason")
        if grant.role == Role.OWNER:
            lock_owner_grants(grant.scope)  # this grant among them: concurrent revokes are decided in turn
            if not Grant.objects.filter(pk=grant_id).exists():
                raise NotFound()
            # Again under the lock: a revoke decided just before this one may have taken the actor's own
            # owner grant, and a person who is no longer an owner removes no one.
            require_grant(actor, grant.scope, grant.role)
            if not owner_left(grant.scope, without_grant=grant.pk):
                raise LastOwner(LAST_OWNER.format(path=grant.scope.path))
        else:
            Grant.objects.select_for_update().filter(pk=grant_id).first()
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "grant.revoke",
                "grant",
                str(grant.pk),
                grant.scope.path,
                grant.role,
                "",
                reason,
                {"principal": grant.principal.name, "role": grant.role},
            ),
        )
        outbox_emit(
            topic="grant.changed", payload={"scope_id": grant.scope_id, "principal_id": grant.principal_id}
        )
        grant.delete()


def user_ensure(*, username: str, password: str | None = None, actor: Principal | None) -> Principal:
    """A Django user with its principal (used by the demo loader and admin commands)."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created and password:
        user.set_password(password)
        user.save(update_fields=["password"])
    return principal_for_user(user)
