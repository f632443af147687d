"""Who may do what where: the one place the API, the dashboard and the services ask.

A principal holds the grants given to it and to the groups it belongs to. A grant on a scope covers
that scope's whole subtree. Each action names the roles that allow it; nothing else decides."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from django.db.models import Exists, Q, QuerySet

from governance.errors import NotFound, PermissionDenied
from governance.models import ROLE_RANK, Grant, Principal, Role, Scope


class Action(StrEnum):
    READ = "read"  # see memories, turns, audit of the scope
    ASK_CONTEXT = "ask_context"  # recall / context packets
    WRITE_CANDIDATE = "write_candidate"  # record events, candidates, proposals
    CONFIRM = "confirm"  # confirm or reject proposals and promotions; write `active` directly
    SUPERSEDE = "supersede"
    RETIRE = "retire"
    FORGET_SOFT = "forget_soft"
    FORGET_HARD = "forget_hard"
    MANAGE_GRANTS = "manage_grants"
    MANAGE_POLICY = "manage_policy"


_ALL = {Role.AGENT, Role.VIEWER, Role.REVIEWER, Role.CURATOR, Role.OWNER}
ACTION_ROLES: dict[Action, set[str]] = {
    Action.READ: _ALL,
    Action.ASK_CONTEXT: {Role.AGENT, Role.REVIEWER, Role.CURATOR, Role.OWNER},
    Action.WRITE_CANDIDATE: {Role.AGENT, Role.REVIEWER, Role.CURATOR, Role.OWNER},
    Action.CONFIRM: {Role.REVIEWER, Role.CURATOR, Role.OWNER},
    Action.SUPERSEDE: {Role.CURATOR, Role.OWNER},
    Action.RETIRE: {Role.CURATOR, Role.OWNER},
    Action.FORGET_SOFT: {Role.CURATOR, Role.OWNER},
    Action.FORGET_HARD: {Role.OWNER},
    Action.MANAGE_GRANTS: {Role.OWNER},
    Action.MANAGE_POLICY: {Role.OWNER},
}

DENIAL_REASONS: dict[Action, str] = {
    Action.READ: "Reading this scope needs a grant on it or on a scope above it.",
    Action.ASK_CONTEXT: "Asking for context needs the agent, reviewer, curator or owner role on this scope.",
    Action.WRITE_CANDIDATE: "Writing memories needs the agent, reviewer, curator or owner role on this scope.",
    Action.CONFIRM: "Confirming or rejecting (or writing an active memory) needs the reviewer role or above.",
    Action.SUPERSEDE: "Superseding a memory needs the curator or owner role on its scope.",
    Action.RETIRE: "Retiring a memory needs the curator or owner role on its scope.",
    Action.FORGET_SOFT: "Forgetting a memory needs the curator or owner role on its scope.",
    Action.FORGET_HARD: "A hard forget (purging the text) needs the owner role on the memory's scope.",
    Action.MANAGE_GRANTS: "Changing grants needs the owner role on the scope.",
    Action.MANAGE_POLICY: "Changing retention policies needs the owner role on the scope.",
}


def _holders(principal: Principal) -> Q:
    """Grants that apply to the principal: its own and its groups' (Principal.principal_ids), as a
    subquery, so a permission check is one round trip instead of two."""
    groups = Principal.groups.through.objects.filter(from_principal_id=principal.pk).values("to_principal_id")
    return Q(principal_id=principal.pk) | Q(principal_id__in=groups)


def grants_for(principal: Principal) -> QuerySet[Grant]:
    return Grant.objects.filter(_holders(principal)).select_related("scope")


def _grants_covering(principal: Principal, scope: Scope) -> QuerySet[Grant]:
    return Grant.objects.filter(_holders(principal), scope__tree__ancestor_of=scope.tree)


def roles_at(principal: Principal, scope: Scope) -> set[str]:
    """Every role the principal holds on `scope` through a grant on it or on an ancestor."""
    return set(_grants_covering(principal, scope).values_list("role", flat=True).distinct())


def highest_rank(roles: set[str]) -> int:
    return max((ROLE_RANK[Role(r)] for r in roles), default=0)


def can(principal: Principal | None, scope: Scope, action: Action) -> bool:
    if principal is None:  # the system itself (tasks, reconciler): audited as "system"
        return True
    return bool(roles_at(principal, scope) & ACTION_ROLES[action])


def require(principal: Principal | None, scope: Scope, action: Action) -> None:
    """Raise NotFound when the caller cannot see the scope at all (no existence leak), PermissionDenied
    with a reason when it can see but not act."""
    if principal is None:
        return
    require_roles(roles_at(principal, scope), action)


def require_roles(roles: set[str] | frozenset[str], action: Action) -> None:
    """`require` for roles already read (ScopeAccess.roles)."""
    if not roles:
        raise NotFound()
    if not roles & ACTION_ROLES[action]:
        raise PermissionDenied(DENIAL_REASONS[action], action=str(action))


@dataclass(frozen=True)
class ScopeAccess:
    """A scope as one caller sees it, read in one query before a context or recall request."""

    scope: Scope
    roles: frozenset[str]  # roles_at(principal, scope)
    visible: bool  # selectors.memory.scope_visible's rule: a grant on the scope, above it or below it
    scope_ids: tuple[int, ...]  # the scope and its ancestors (visible_scope_ids once roles are checked)


def scope_access(principal: Principal | None, path: str) -> ScopeAccess | None:
    """The scope at `path` with the caller's roles there, whether it may see the scope at all, and the
    ids a read there may see: one round trip where scope_visible, require and visible_scope_ids take
    four. None when no scope has that path."""
    grant, scope_table = Grant._meta.db_table, Scope._meta.db_table
    members = Principal.groups.through._meta.db_table
    holders = (f"(g.principal_id = %(p)s OR g.principal_id IN"
               f" (SELECT to_principal_id FROM {members} WHERE from_principal_id = %(p)s))")
    covering = f"FROM {grant} g JOIN {scope_table} gs ON gs.id = g.scope_id WHERE {holders}"
    found = list(Scope.objects.raw(
        f"SELECT s.*,"
        f" ARRAY(SELECT DISTINCT g.role {covering} AND gs.tree @> s.tree) AS access_roles,"
        f" EXISTS(SELECT 1 {covering} AND (gs.tree @> s.tree OR gs.tree <@ s.tree)) AS access_visible,"
        f" ARRAY(SELECT a.id FROM {scope_table} a WHERE a.tree @> s.tree) AS access_ids"
        f" FROM {scope_table} s WHERE s.path = %(path)s",
        {"p": principal.pk if principal is not None else None, "path": (path or "").strip().strip("/")},
    ))
    if not found:
        return None
    scope = found[0]
    return ScopeAccess(
        scope=scope, roles=frozenset(scope.access_roles),
        visible=principal is None or scope.access_visible, scope_ids=tuple(scope.access_ids),
    )


def visible_scope_ids(principal: Principal, scope: Scope) -> list[int]:
    """Scopes whose memories a read in `scope` may see: `scope` and its ancestors, provided the caller
    holds a grant that covers `scope`. Never a sibling, never another workspace."""
    ancestors = Scope.objects.ancestors_of(scope)
    if principal is not None:  # one query: no covering grant, no rows
        ancestors = ancestors.filter(Exists(_grants_covering(principal, scope)))
    return list(ancestors.values_list("pk", flat=True))


def readable_scopes(principal: Principal) -> QuerySet[Scope]:
    """Every scope the principal may read (the subtrees of its grants): for lists and dashboards."""
    trees = list(grants_for(principal).values_list("scope__tree", flat=True))
    if not trees:
        return Scope.objects.none()
    q = Q()
    for tree in trees:
        q |= Q(tree__descendant_of=tree)
    return Scope.objects.filter(q)


# --- Review rules (four-eyes) and revocation -----------------------------------------------------------


def requires_four_eyes(scope: Scope) -> bool:
    """A scope asks for two different reviewers when it, or any scope above it, says so: a workspace-wide
    rule cannot be side-stepped by writing in a sub-scope."""
    return Scope.objects.ancestors_of(scope).filter(require_two_reviewers=True).exists()


def approvals_needed(memory) -> int:
    """How many distinct reviewers must confirm this memory before it becomes active."""
    from governance.models import Tier

    return 2 if memory.tier == Tier.LONG and requires_four_eyes(memory.scope) else 1


def can_grant(principal: Principal | None, scope: Scope, role: str) -> bool:
    """Owners give and take back roles up to their own rank (never above it) on their subtree."""
    if principal is None:
        return True
    roles = roles_at(principal, scope)
    return bool(roles & ACTION_ROLES[Action.MANAGE_GRANTS]) and ROLE_RANK[Role(role)] <= highest_rank(roles)


AUDIT_VERIFY_DENIED = "Verifying the audit chain needs the owner role on some scope."
GROUP_MANAGE_DENIED = (
    "Changing who belongs to a group (or holds an agent's tokens) needs the owner role over every scope "
    "where that group or agent holds a role, at that role's rank or above."
)


def can_verify_audit(principal: Principal | None) -> bool:
    return principal is None or grants_for(principal).filter(role=Role.OWNER).exists()


def can_manage_principal(actor: Principal | None, target: Principal) -> bool:
    """Adding a member to a group hands the member every role of the group, and a token acts with every
    role of its agent: so it is allowed only to whoever could grant each of those roles directly."""
    if actor is None:
        return True
    held = list(Grant.objects.filter(principal=target).select_related("scope"))
    if not held:
        return can_verify_audit(actor)  # nothing to pass on: any owner may organise it
    return all(can_grant(actor, g.scope, g.role) for g in held)


# --- Opening child scopes (the scopes API) -------------------------------------------------------------

SCOPE_CREATE_DENIED = (
    "Opening a scope under this one needs the right to write memories here, with one of these roles: {roles}."
)


def child_scope_roles() -> set[str]:
    """Roles that may open a child scope: those that may write in the parent, at or above the rank of
    settings.SCOPE_CREATE_ROLE (default `agent`: an agent opens the task scopes it works in)."""
    from django.conf import settings

    lowest = ROLE_RANK[Role(settings.SCOPE_CREATE_ROLE)]
    return {r for r in ACTION_ROLES[Action.WRITE_CANDIDATE] if ROLE_RANK[Role(r)] >= lowest}


def require_create_child_scope(principal: Principal | None, parent: Scope) -> None:
    """NotFound when the caller holds no role on the parent (no existence leak, another workspace
    included); PermissionDenied with the roles that would allow it when it holds one that does not."""
    if principal is None:
        return
    roles = roles_at(principal, parent)
    if not roles:
        raise NotFound()
    allowed = child_scope_roles()
    if not roles & allowed:
        names = ", ".join(r for r in Role.values if r in allowed)
        raise PermissionDenied(SCOPE_CREATE_DENIED.format(roles=names), action="create_scope")
