"""Roles a principal may use where (its grants, its groups', narrowed by its token's bound), the decisions
built on them, and the three named sets of scopes."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, Q, QuerySet

from governance.errors import NotFound, PermissionDenied
from governance.models import Grant, Memory, Principal, Scope, Status
from governance.permissions.bounds import bound_of, under
from governance.permissions.roles import (
    ACTION_ROLES,
    DENIAL_REASONS,
    Action,
    highest_rank,
    may_grant_role,
)

# --- Grants as a principal may use them now ------------------------------------------------------------


def _holders(principal: Principal) -> Q:
    """Grants that apply to the principal: its own and its groups' (Principal.principal_ids), as a
    subquery, so a permission check is one round trip instead of two."""
    groups = Principal.groups.through.objects.filter(from_principal_id=principal.pk).values("to_principal_id")
    return Q(principal_id=principal.pk) | Q(principal_id__in=groups)


def grants_for(principal: Principal) -> QuerySet[Grant]:
    """The grants a principal holds (its own and its groups'), before any token bound: what it could do
    signed in. Decisions use `effective_grants`, which applies the bound."""
    return Grant.objects.filter(_holders(principal)).select_related("scope")


def effective_grants(principal: Principal) -> list[tuple[str, str]]:
    """(scope tree, role) pairs the principal may use now: its and its groups' grants, each narrowed to
    the token's bound (its subtree, its role cap) when the request carries one. One query."""
    rows = Grant.objects.filter(_holders(principal)).values_list("scope__tree", "role")
    bound = bound_of(principal)
    if bound is None:
        return [(str(t), r) for t, r in rows]
    clipped = ((bound.clip(t, r), r) for t, r in rows)
    return [(t, r) for t, r in clipped if t is not None]


def governed_roots(principal: Principal) -> list[str]:
    """Paths of the roots of the principal's governed subtrees (for data keyed by scope path, such as
    audit events). One query."""
    rows = Grant.objects.filter(_holders(principal)).values_list("scope__tree", "scope__path", "role")
    bound = bound_of(principal)
    if bound is None:
        return sorted({p for _, p, _ in rows})
    return sorted({p if bound.clip(t, r) == str(t) else bound.path for t, p, r in rows if bound.clip(t, r)})


def _covering(principal: Principal, scope: Scope) -> QuerySet[Grant] | None:
    """Grants that cover `scope` and that the principal may use there; None when the token's bound
    excludes the scope altogether."""
    bound = bound_of(principal)
    qs = Grant.objects.filter(_holders(principal), scope__tree__ancestor_of=scope.tree)
    if bound is None:
        return qs
    if not under(scope.tree, bound.tree):
        return None
    return qs.filter(role__in=bound.roles)


def roles_at(principal: Principal, scope: Scope) -> set[str]:
    """Every role the principal may use on `scope`: granted on it or on an ancestor, within the bound."""
    covering = _covering(principal, scope)
    if covering is None:
        return set()
    return set(covering.values_list("role", flat=True).distinct())


@dataclass
class RoleMap:
    """A principal's usable roles by scope, read once (one query) for a page that asks about many scopes."""

    grants: list[tuple[str, str]]

    @classmethod
    def of(cls, principal: Principal) -> RoleMap:
        return cls(grants=effective_grants(principal))

    def at(self, scope: Scope) -> set[str]:
        return {role for tree, role in self.grants if under(scope.tree, tree)}

    def can(self, scope: Scope, action: Action) -> bool:
        return bool(self.at(scope) & ACTION_ROLES[action])

    def rank(self, scope: Scope) -> int:
        return highest_rank(self.at(scope))

    def may_grant(self, scope: Scope, role: str) -> bool:
        return may_grant_role(self.at(scope), role)

    def trees(self, action: Action | None = None) -> list[str]:
        """Roots of the subtrees where the principal holds a role allowing `action` (any role: None)."""
        allowed = ACTION_ROLES[action] if action else None
        return [t for t, r in self.grants if allowed is None or r in allowed]


# --- Decisions -----------------------------------------------------------------------------------------


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


def can_grant(principal: Principal | None, scope: Scope, role: str) -> bool:
    """Owners give and take back roles up to their own rank (never above it) on their subtree."""
    if principal is None:
        return True
    return may_grant_role(roles_at(principal, scope), role)


GRANT_ABOVE_OWN = "Nobody can grant a role above their own."


def require_grant(principal: Principal | None, scope: Scope, role: str) -> None:
    """`can_grant` as a check: NotFound outside the caller's scopes, a reason otherwise."""
    if principal is None:
        return
    roles = roles_at(principal, scope)
    require_roles(roles, Action.MANAGE_GRANTS)
    if not may_grant_role(roles, role):
        raise PermissionDenied(GRANT_ABOVE_OWN)


@dataclass(frozen=True)
class ScopeAccess:
    """A scope as one caller sees it, read in one query before a context or recall request."""

    scope: Scope
    roles: frozenset[str]  # roles_at(principal, scope)
    visible: bool  # the scope is in memory_readable_scopes(principal)
    scope_ids: tuple[int, ...]  # the scope and its ancestors (reading_scope_ids once roles are checked)


def scope_access(principal: Principal | None, path: str) -> ScopeAccess | None:
    """The scope at `path` with the caller's roles there, whether it may see the scope at all, and the
    ids a read there may see: one round trip where the separate checks take four. The token bound is
    part of the same statement. None when no scope has that path."""
    grant, scope_table = Grant._meta.db_table, Scope._meta.db_table
    members = Principal.groups.through._meta.db_table
    bound = bound_of(principal)
    holders = (
        f"(g.principal_id = %(p)s OR g.principal_id IN"
        f" (SELECT to_principal_id FROM {members} WHERE from_principal_id = %(p)s))"
    )
    # Unbound: both bound conditions are true for every row and the planner folds them away.
    usable = "(%(bt)s::ltree IS NULL OR (g.role = ANY(%(roles)s::text[])))"
    covering = f"FROM {grant} g JOIN {scope_table} gs ON gs.id = g.scope_id WHERE {holders} AND {usable}"
    clipped = (
        "(CASE WHEN %(bt)s::ltree IS NULL OR gs.tree <@ %(bt)s::ltree THEN gs.tree ELSE %(bt)s::ltree END)"
    )
    related = "(%(bt)s::ltree IS NULL OR gs.tree <@ %(bt)s::ltree OR gs.tree @> %(bt)s::ltree)"
    found = list(
        Scope.objects.raw(
            f"SELECT s.*,"
            f" ARRAY(SELECT DISTINCT g.role {covering} AND gs.tree @> s.tree"
            f"  AND (%(bt)s::ltree IS NULL OR s.tree <@ %(bt)s::ltree)) AS access_roles,"
            f" EXISTS(SELECT 1 {covering} AND {related}"
            f"  AND ({clipped} @> s.tree OR {clipped} <@ s.tree)) AS access_visible,"
            f" ARRAY(SELECT a.id FROM {scope_table} a WHERE a.tree @> s.tree) AS access_ids"
            f" FROM {scope_table} s WHERE s.path = %(path)s",
            {
                "p": principal.pk if principal is not None else None,
                "path": (path or "").strip().strip("/"),
                "bt": bound.tree if bound else None,
                "roles": sorted(bound.roles) if bound else None,
            },
        )
    )
    if not found:
        return None
    scope = found[0]
    return ScopeAccess(
        scope=scope,
        roles=frozenset(scope.access_roles),
        visible=principal is None or scope.access_visible,
        scope_ids=tuple(scope.access_ids),
    )


# --- The three sets of scopes --------------------------------------------------------------------------


def reading_scope_ids(principal: Principal | None, scope: Scope) -> list[int]:
    """Scopes whose memories a read in `scope` may see: `scope` and its ancestors, provided the caller
    may use a role on `scope`. Never a sibling, never another workspace."""
    ancestors = Scope.objects.ancestors_of(scope)
    if principal is not None:  # one query: no usable covering grant, no rows
        covering = _covering(principal, scope)
        if covering is None:
            return []
        ancestors = ancestors.filter(Exists(covering))
    return list(ancestors.values_list("pk", flat=True))


def _subtrees(trees: list[str], *, with_ancestors: bool = False) -> QuerySet[Scope]:
    if not trees:
        return Scope.objects.none()
    q = Q()
    for tree in set(trees):
        q |= Q(tree__descendant_of=tree)
        if with_ancestors:
            q |= Q(tree__ancestor_of=tree)
    return Scope.objects.filter(q)


def governed_scopes(principal: Principal | None, within: Scope | None = None) -> QuerySet[Scope]:
    """The subtrees of the principal's usable grants (within `within`'s subtree when given): where it
    acts, and what lists and the dashboard show."""
    scopes = (
        Scope.objects.all() if principal is None else _subtrees([t for t, _ in effective_grants(principal)])
    )
    return scopes.filter(tree__descendant_of=within.tree) if within is not None else scopes


def forget_reach(principal: Principal | None, scope: Scope) -> list[int]:
    """The scopes a forget of a memory of `scope` may rewrite (its words in stored turns and in the turns
    they were read from): the scope's subtree, which is what could have seen the memory (a read sees its
    scope and those above it), and of it only what the forgetting principal governs. A sibling scope, or
    a part of the subtree granted to others only, is never touched."""
    return list(governed_scopes(principal, within=scope).values_list("pk", flat=True))


def deciding_scopes(principal: Principal, action: Action) -> QuerySet[Scope]:
    """The part of the governed scopes where the principal may use a role allowing `action` now (within
    its token's bound): where it may decide, e.g. confirm a proposal or dismiss a dispute. One query
    (the grants); the answer is a lazy queryset, empty without a query when no grant allows it."""
    return _subtrees(RoleMap.of(principal).trees(action))


def memory_readable_scopes(principal: Principal | None) -> QuerySet[Scope]:
    """Scopes whose memories the principal may read by id or in a list: its governed subtrees and every
    scope above them (a read in a scope sees its ancestors' memories)."""
    if principal is None:
        return Scope.objects.all()
    return _subtrees([t for t, _ in effective_grants(principal)], with_ancestors=True)


def can_read_memory(principal: Principal | None, memory) -> bool:
    """Whether the principal may read this memory (by id, in the API and the dashboard alike): its scope
    is among memory_readable_scopes. One query."""
    return principal is None or memory_readable_scopes(principal).filter(pk=memory.scope_id).exists()


def memory_texts_readable(principal: Principal | None, memory_ids) -> bool:
    """Whether the principal may still be shown the text of every one of these memories: each readable by
    it (can_read_memory's rule) and none forgotten. What a stored answer that quotes them needs before it
    is replayed (governance/services/idempotency.py). One query."""
    ids = set(memory_ids)
    if not ids:
        return True
    shown = Memory.objects.filter(pk__in=ids, purged_at__isnull=True).exclude(status=Status.FORGOTTEN)
    if principal is not None:
        shown = shown.filter(scope__in=memory_readable_scopes(principal))
    return shown.count() == len(ids)


def turn_readable_scopes(principal: Principal | None) -> QuerySet[Scope]:
    """Scopes whose turns the principal may read, in the API and the dashboard alike: its governed
    subtrees only. A turn is someone's request, not shared memory: a grant on a project never shows the
    turns asked at the workspace above it."""
    return governed_scopes(principal)


# --- Who can do what where (the Members page and GET /workspaces/{slug}/members) --------------------------


@dataclass
class MatrixCell:
    roles: set[str]
    via: list[str]  # where each role comes from: "direct", "from <path>", "team <name>"


def role_matrix(scopes: list[Scope]) -> dict[int, dict[int, MatrixCell]]:
    """{principal id: {scope id: MatrixCell}} for every principal holding a role on any of `scopes`
    (all in one workspace): granted there, inherited from an ancestor, or held through a team. Teams
    appear as rows of their own. Two queries, whatever the number of scopes and principals."""
    if not scopes:
        return {}
    grants = list(
        Grant.objects.filter(scope__workspace_id=scopes[0].workspace_id).values_list(
            "principal_id", "role", "scope__tree", "scope__path", "principal__name"
        )
    )
    teams = {g[0] for g in grants}
    memberships = list(
        Principal.groups.through.objects.filter(to_principal_id__in=teams).values_list(
            "from_principal_id", "to_principal_id"
        )
    )
    holders: dict[int, list[tuple[int | None, str, str, str, str]]] = {}
    for principal_id, role, tree, path, name in grants:
        holders.setdefault(principal_id, []).append((None, role, str(tree), path, name))
    for member_id, team_id in memberships:
        for _, role, tree, path, name in [g for g in holders.get(team_id, []) if g[0] is None]:
            holders.setdefault(member_id, []).append((team_id, role, tree, path, name))
    matrix: dict[int, dict[int, MatrixCell]] = {}
    for principal_id, held in holders.items():
        for scope in scopes:
            cell = None
            for team_id, role, tree, path, name in held:
                if not under(str(scope.tree), tree):
                    continue
                cell = cell or MatrixCell(roles=set(), via=[])
                cell.roles.add(role)
                source = (
                    f"team {name}"
                    if team_id is not None
                    else ("direct" if path == scope.path else f"from {path}")
                )
                cell.via.append(f"{role}: {source}")
            if cell is not None:
                matrix.setdefault(principal_id, {})[scope.pk] = cell
    return matrix
