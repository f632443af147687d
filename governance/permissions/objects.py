"""Rules about objects other than memories: the audit chain check, principals, tokens, outbox rows."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from governance.errors import NotFound, PermissionDenied
from governance.models import ApiToken, Outbox, Principal, PrincipalKind, Role, Scope, Workspace
from governance.permissions.access import (
    RoleMap,
    can,
    can_grant,
    effective_grants,
    governed_scopes,
    grants_for,
    memory_readable_scopes,
    roles_at,
)
from governance.permissions.resolve import workspace_root, workspace_roots
from governance.permissions.roles import ACTION_ROLES, DENIAL_REASONS, Action
from governance.permissions.scopes import is_site_admin

AUDIT_VERIFY_DENIED = "Verifying the audit chain needs the owner role on some scope."
GROUP_MANAGE_DENIED = (
    "Changing who belongs to a group (or holds an agent's tokens) needs the owner role over every scope "
    "where that group or agent holds a role, at that role's rank or above."
)


def can_start_evaluation(principal: Principal | None, workspace_root: Scope) -> bool:
    """Uploading a conversation file for evaluation: owners of the workspace (its root scope), and site
    administrators."""
    return is_site_admin(principal) or can(principal, workspace_root, Action.EVALUATE)


def require_evaluation_start(principal: Principal | None, workspace_root: Scope) -> None:
    """NotFound when the caller holds no role in the workspace (no existence leak); a reason otherwise."""
    if can_start_evaluation(principal, workspace_root):
        return
    if not memory_readable_scopes(principal).filter(workspace_id=workspace_root.workspace_id).exists():
        raise NotFound()
    raise PermissionDenied(DENIAL_REASONS[Action.EVALUATE], action=str(Action.EVALUATE))


def evaluation_roots(principal: Principal | None) -> list[Scope]:
    """The workspace roots where the principal may start an evaluation (the upload form's choices)."""
    roots = workspace_roots().select_related("workspace").order_by("path")
    if is_site_admin(principal):
        return list(roots)
    roles = RoleMap.of(principal)
    return [
        r for r in roots.filter(pk__in=memory_readable_scopes(principal)) if roles.can(r, Action.EVALUATE)
    ]


def evaluation_workspace_ids(principal: Principal | None) -> list[int] | None:
    """Workspaces whose evaluation runs the principal may see: those where it holds any grant (None: all,
    for the system and site administrators). The site-wide replay suite's runs (no workspace) are seen by
    every signed-in person."""
    if is_site_admin(principal):
        return None
    return sorted(set(memory_readable_scopes(principal).values_list("workspace_id", flat=True)))


def _owned_roots(actor: Principal) -> list[tuple[Scope, str]]:
    """(root scope of the workspace, role) for each usable grant."""
    rows = [(int(tree.split(".")[0]), role) for tree, role in effective_grants(actor)]
    roots = {s.pk: s for s in Scope.objects.filter(pk__in={r for r, _ in rows})}
    return [(roots[r], role) for r, role in rows if r in roots]


def can_verify_audit(principal: Principal | None) -> bool:
    """Walking the audit chain is offered (API and dashboard alike) to owners of some scope."""
    return principal is None or any(r == Role.OWNER for _, r in effective_grants(principal))


def require_verify_audit(principal: Principal | None) -> None:
    """`can_verify_audit` as a check, for the API's and the dashboard's chain check alike."""
    if not can_verify_audit(principal):
        raise PermissionDenied(AUDIT_VERIFY_DENIED)


def can_manage_principal(actor: Principal | None, target: Principal) -> bool:
    """Adding a member to a group hands the member every role of the group: so it is allowed only to
    whoever could grant each role the group (or agent) holds, its groups' included, directly."""
    if actor is None:
        return True
    held = list(grants_for(target))
    if not held:
        # Nothing to pass on: an owner of some scope may organise it; a team only in its home workspace
        # (a team without a home only the system).
        if target.kind == PrincipalKind.GROUP:
            return target.workspace_id is not None and any(
                r == Role.OWNER and s.workspace_id == target.workspace_id for s, r in _owned_roots(actor)
            )
        return can_verify_audit(actor)
    roles = RoleMap.of(actor)
    return all(roles.may_grant(g.scope, g.role) for g in held)


TOKEN_ISSUE_DENIED = (
    "Issuing a token needs the owner role on its scope, at the token's highest role or above."
)
TOKEN_REVOKE_DENIED = "A token is revoked by its own principal or by an owner over the token's scope."


def can_issue_token(actor: Principal | None, scope: Scope, max_role: str) -> bool:
    """A token bound to `scope` and `max_role` never acts beyond what the issuer could grant there."""
    return can_grant(actor, scope, max_role)


def can_revoke_token(actor: Principal | None, token: ApiToken) -> bool:
    """The token's own principal, or an owner over the token's scope (for a token without a bound: whoever
    may manage its principal)."""
    if actor is None or token.principal_id == actor.pk:
        return True
    if token.scope_id is None:
        return can_manage_principal(actor, token.principal)
    return can(actor, token.scope, Action.MANAGE_GRANTS)


def tokens_visible_to(actor: Principal | None) -> QuerySet[ApiToken]:
    """Tokens the actor may list (and revoke): its own, and those bound inside a subtree it owns."""
    qs = ApiToken.objects.select_related("principal", "scope")
    if actor is None:
        return qs
    q = Q(principal_id=actor.pk)
    for tree in RoleMap.of(actor).trees(Action.MANAGE_GRANTS):
        q |= Q(scope__tree__descendant_of=tree)
    return qs.filter(q)


def outbox_scopes(outbox: Outbox) -> list[Scope]:
    """The scopes an outbox row speaks about: its memory's, its payload's scope, or its payload's memories'."""
    if outbox.memory_id:
        return [outbox.memory.scope]
    payload = outbox.payload or {}
    if payload.get("scope_id"):
        return list(Scope.objects.filter(pk=payload["scope_id"]))
    ids = [int(i) for i in payload.get("memory_ids") or [] if str(i).isdigit()]
    return list(Scope.objects.filter(memories__pk__in=ids).distinct()) if ids else []


def require_outbox_read(principal: Principal | None, outbox: Outbox) -> None:
    """An outbox row is read by whoever may read every scope it speaks about; a row about no scope (a
    group's membership, say) only by the system. Unknown and not-yours are the same NotFound."""
    if principal is None:
        return
    scopes = outbox_scopes(outbox)
    if not scopes:
        raise NotFound()
    roles = RoleMap.of(principal)
    if not all(roles.at(s) for s in scopes):
        raise NotFound()


def outbox_for_reader(actor: Principal | None, outbox_id: int) -> Outbox:
    """The resolver of an outbox row by id (permissions.resolve's convention): whoever may read every scope
    it speaks about (require_outbox_read); unknown and not-yours are the same NotFound."""
    outbox = (
        Outbox.objects.select_related("memory__scope")
        .prefetch_related("deliveries")
        .filter(pk=outbox_id)
        .first()
    )
    if outbox is None:
        raise NotFound()
    require_outbox_read(actor, outbox)
    return outbox


TEAM_CREATE_DENIED = "Creating a team needs the owner role on some scope of its workspace."


def owned_workspaces(principal: Principal | None) -> list[int]:
    """Ids of the workspaces where the principal may use the owner role on some scope (sorted)."""
    if principal is None:
        return []
    return sorted({s.workspace_id for s, r in _owned_roots(principal) if r == Role.OWNER})


def can_create_team(principal: Principal | None, workspace: Workspace | None = None) -> bool:
    """A new team holds nothing yet: any owner of some scope of its workspace may create one there (then
    grant it roles up to their own, and add members by can_manage_principal). Without `workspace`:
    whether the principal may create one in some workspace (the page's offer)."""
    if principal is None:
        return True
    return any(
        r == Role.OWNER and (workspace is None or s.workspace_id == workspace.pk)
        for s, r in _owned_roots(principal)
    )


# --- Webhooks: a workspace's outbound events ------------------------------------------------------------


def can_manage_webhooks(principal: Principal | None, workspace: Workspace) -> bool:
    """Subscriptions see every event of the whole workspace, so only its owners (the owner role on the
    workspace's root scope, within a token's bound) manage them and read their delivery log."""
    return can(principal, workspace_root(workspace), Action.MANAGE_WEBHOOKS)


def require_manage_webhooks(principal: Principal | None, workspace: Workspace) -> None:
    """A member of the workspace who is not its owner gets a 403 with the reason; anyone else the same
    404 as for a workspace that does not exist."""
    if principal is None:
        return
    roles = roles_at(principal, workspace_root(workspace))
    if roles & ACTION_ROLES[Action.MANAGE_WEBHOOKS]:
        return
    if roles or governed_scopes(principal).filter(workspace=workspace).exists():
        raise PermissionDenied(DENIAL_REASONS[Action.MANAGE_WEBHOOKS], action=str(Action.MANAGE_WEBHOOKS))
    raise NotFound()


def webhook_workspaces(principal: Principal | None) -> QuerySet[Workspace]:
    """The workspaces whose webhooks the principal manages."""
    roots = workspace_roots().select_related("workspace").order_by("path")
    if principal is None:
        return Workspace.objects.filter(pk__in=roots.values("workspace_id")).order_by("slug")
    ids = [
        s.workspace_id
        for s in roots.filter(pk__in=governed_scopes(principal).values("pk"))
        if can(principal, s, Action.MANAGE_WEBHOOKS)
    ]
    return Workspace.objects.filter(pk__in=ids).order_by("slug")
