"""Who may do what where: the one place the API, the dashboard, the selectors and the services ask.

A principal holds the grants given to it and to the groups it belongs to. A grant on a scope covers
that scope's whole subtree. Each action names the roles that allow it; nothing else decides.

A request made with an API token acts with the smaller of the token's bound (a scope subtree and a
highest role, fixed at issue) and its principal's grants as they are now: the authentication attaches
the bound to the principal object (`TokenBound`), and every function here applies it. So a grant added
after the token was issued never widens what the token may do, and a grant taken away narrows it at once.

Three sets of scopes, each with its own name:
- `reading_scope_ids(p, scope)`: what a read *in* `scope` sees: the scope and its ancestors;
- `governed_scopes(p)`: the subtrees of p's grants: where it acts, and what lists and dashboards show
  (turns, grants, audit, outbox, review queue);
- `memory_readable_scopes(p)`: the governed subtrees and every scope above them: the memories a caller
  may read by id or in a list (an ancestor's memory is part of what a read in its subtree sees)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from django.db.models import Exists, Q, QuerySet

from governance.errors import NotFound, PermissionDenied
from governance.models import ROLE_RANK, ApiToken, Grant, Memory, Outbox, Principal, Role, Scope, Tier


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



# --- Roles ---------------------------------------------------------------------------------------------


def role_rank(role: str) -> int:
    return ROLE_RANK[Role(role)]


def highest_rank(roles: set[str] | frozenset[str]) -> int:
    return max((role_rank(r) for r in roles), default=0)


def roles_up_to(max_role: str) -> frozenset[str]:
    """The roles a holder of `max_role` may use or hand on: itself and every role ranked below it
    (`agent` and `viewer` rank the same and are side by side: neither includes the other)."""
    return frozenset(r for r in Role.values if r == max_role or role_rank(r) < role_rank(max_role))


def may_grant_role(roles: set[str] | frozenset[str], role: str) -> bool:
    """Given the roles a principal holds on a scope: may it give (or take back) `role` there? Owners
    only, and never above their own rank."""
    return bool(roles & ACTION_ROLES[Action.MANAGE_GRANTS]) and role_rank(role) <= highest_rank(roles)


# --- Token bounds --------------------------------------------------------------------------------------


def under(tree: str, root: str) -> bool:
    """Whether ltree `tree` is `root` or lies below it."""
    tree, root = str(tree), str(root)
    return tree == root or tree.startswith(root + ".")


@dataclass(frozen=True)
class TokenBound:
    """What a token was issued for: the subtree of the scope with ltree `tree`, roles up to `max_role`."""

    tree: str
    max_role: str
    path: str = ""  # the bound scope's path (for audit-log filtering by path)

    @property
    def roles(self) -> frozenset[str]:
        return roles_up_to(self.max_role)

    def clip(self, grant_tree: str, role: str) -> str | None:
        """The part of a grant the token may use: the deeper of the grant's and the bound's scope when
        one lies inside the other and the role is within the cap; None when nothing is left."""
        if role not in self.roles:
            return None
        if under(grant_tree, self.tree):
            return str(grant_tree)
        if under(self.tree, grant_tree):
            return self.tree
        return None


def bound_of(principal: Principal | None) -> TokenBound | None:
    """The bound of the token the principal is acting with (None: a signed-in person, or no bound)."""
    return getattr(principal, "token_bound", None)


def bind_token(principal: Principal, token: ApiToken, scope_tree: str | None, scope_path: str = "") -> Principal:
    """Attach `token`'s bound to the principal object it authenticates (called once per request)."""
    principal.token_bound = TokenBound(str(scope_tree), token.max_role, scope_path) if token.scope_id else None
    return principal


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
    holders = (f"(g.principal_id = %(p)s OR g.principal_id IN"
               f" (SELECT to_principal_id FROM {members} WHERE from_principal_id = %(p)s))")
    # Unbound: both bound conditions are true for every row and the planner folds them away.
    usable = "(%(bt)s::ltree IS NULL OR (g.role = ANY(%(roles)s::text[])))"
    covering = f"FROM {grant} g JOIN {scope_table} gs ON gs.id = g.scope_id WHERE {holders} AND {usable}"
    clipped = "(CASE WHEN %(bt)s::ltree IS NULL OR gs.tree <@ %(bt)s::ltree THEN gs.tree ELSE %(bt)s::ltree END)"
    related = "(%(bt)s::ltree IS NULL OR gs.tree <@ %(bt)s::ltree OR gs.tree @> %(bt)s::ltree)"
    found = list(Scope.objects.raw(
        f"SELECT s.*,"
        f" ARRAY(SELECT DISTINCT g.role {covering} AND gs.tree @> s.tree"
        f"  AND (%(bt)s::ltree IS NULL OR s.tree <@ %(bt)s::ltree)) AS access_roles,"
        f" EXISTS(SELECT 1 {covering} AND {related}"
        f"  AND ({clipped} @> s.tree OR {clipped} <@ s.tree)) AS access_visible,"
        f" ARRAY(SELECT a.id FROM {scope_table} a WHERE a.tree @> s.tree) AS access_ids"
        f" FROM {scope_table} s WHERE s.path = %(path)s",
        {"p": principal.pk if principal is not None else None, "path": (path or "").strip().strip("/"),
         "bt": bound.tree if bound else None, "roles": sorted(bound.roles) if bound else None},
    ))
    if not found:
        return None
    scope = found[0]
    return ScopeAccess(
        scope=scope, roles=frozenset(scope.access_roles),
        visible=principal is None or scope.access_visible, scope_ids=tuple(scope.access_ids),
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
    scopes = Scope.objects.all() if principal is None else _subtrees([t for t, _ in effective_grants(principal)])
    return scopes.filter(tree__descendant_of=within.tree) if within is not None else scopes


def memory_readable_scopes(principal: Principal | None) -> QuerySet[Scope]:
    """Scopes whose memories the principal may read by id or in a list: its governed subtrees and every
    scope above them (a read in a scope sees its ancestors' memories)."""
    if principal is None:
        return Scope.objects.all()
    return _subtrees([t for t, _ in effective_grants(principal)], with_ancestors=True)


def turn_readable_scopes(principal: Principal | None) -> QuerySet[Scope]:
    """Scopes whose turns the principal may read, in the API and the dashboard alike: its governed
    subtrees only. A turn is someone's request, not shared memory: a grant on a project never shows the
    turns asked at the workspace above it."""
    return governed_scopes(principal)


def visible_scope(principal: Principal | None, path: str) -> Scope:
    """The scope at `path` if it is among the principal's memory-readable scopes; NotFound otherwise,
    the same for an unknown path and another workspace's."""
    scope = memory_readable_scopes(principal).filter(path=(path or "").strip().strip("/")).first()
    if scope is None:
        raise NotFound()
    return scope


def governed_scope(principal: Principal | None, path: str | None) -> Scope:
    """The scope at `path` when the principal may use a role on it; the same NotFound for an unknown
    path, another workspace's and one above the caller's grants."""
    scope = Scope.objects.filter(path=(path or "").strip().strip("/")).first()
    if scope is None:
        raise NotFound()
    require(principal, scope, Action.READ)
    return scope


# Former names, kept so code written against them elsewhere keeps working.
visible_scope_ids = reading_scope_ids
readable_scopes = governed_scopes


# --- Review rules (four-eyes) --------------------------------------------------------------------------


def requires_four_eyes(scope: Scope) -> bool:
    """A scope asks for two different reviewers when it, or any scope above it, says so: a workspace-wide
    rule cannot be side-stepped by writing in a sub-scope."""
    return Scope.objects.ancestors_of(scope).filter(require_two_reviewers=True).exists()


def four_eyes_trees(trees: set[str]) -> set[str]:
    """`requires_four_eyes` for many scopes at once (one query): those of `trees` under a four-eyes scope."""
    if not trees:
        return set()
    rule_trees = list(Scope.objects.filter(require_two_reviewers=True).values_list("tree", flat=True))
    return {t for t in trees if any(under(t, r) for r in rule_trees)}


def approvals_needed(memory: Memory, four_eyes: bool | None = None) -> int:
    """How many distinct reviewers must confirm this memory before it becomes active (`four_eyes`:
    requires_four_eyes(memory.scope) when already known)."""
    if four_eyes is None:
        four_eyes = requires_four_eyes(memory.scope)
    return 2 if memory.tier == Tier.LONG and four_eyes else 1


def approvers(memory: Memory) -> list[int]:
    """Ids of the reviewers whose approval of this memory is recorded (the system actor is not counted)."""
    return [a for a in memory.meta.get("approvals", []) if a is not None]


# --- Audit, principals, tokens, outbox -----------------------------------------------------------------

AUDIT_VERIFY_DENIED = "Verifying the audit chain needs the owner role on some scope."
GROUP_MANAGE_DENIED = (
    "Changing who belongs to a group (or holds an agent's tokens) needs the owner role over every scope "
    "where that group or agent holds a role, at that role's rank or above."
)




def can_verify_audit(principal: Principal | None) -> bool:
    """Walking the audit chain is offered (API and dashboard alike) to owners of some scope."""
    return principal is None or any(r == Role.OWNER for _, r in effective_grants(principal))


def can_manage_principal(actor: Principal | None, target: Principal) -> bool:
    """Adding a member to a group hands the member every role of the group: so it is allowed only to
    whoever could grant each role the group (or agent) holds, its groups' included, directly."""
    if actor is None:
        return True
    held = list(grants_for(target))
    if not held:
        return can_verify_audit(actor)  # nothing to pass on: any owner may organise it
    roles = RoleMap.of(actor)
    return all(roles.may_grant(g.scope, g.role) for g in held)


def principal_visible(actor: Principal | None, target: Principal) -> bool:
    """Whether the actor may learn that `target` exists: itself, a principal with no grant yet, or one
    holding a grant (its own or its groups') in a scope the actor may read. Everyone else is the same
    NotFound as an unknown name, so names do not leak across workspaces."""
    if actor is None or actor.pk == target.pk:
        return True
    held = grants_for(target)
    if not held.exists():
        return True
    return held.filter(scope__in=memory_readable_scopes(actor)).exists()


TOKEN_ISSUE_DENIED = "Issuing a token needs the owner role on its scope, at the token's highest role or above."
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
