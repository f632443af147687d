"""Rules about administering the tree itself: who creates workspaces, who renames, moves, archives and
configures scopes, what an archived scope accepts, what agents may write in a scope, and who may open a
child scope. The settings a scope holds (agent write policy, lowest role for child scopes) are rules a
scope *above* can tighten but never a scope below relax: the strictest along the ancestors applies."""

from __future__ import annotations

from governance.errors import NotFound, PermissionDenied, ScopeArchived
from governance.models import AgentWrite, Principal, PrincipalKind, Role, Scope
from governance.permissions.access import require, roles_at
from governance.permissions.bounds import bound_of, under
from governance.permissions.roles import ACTION_ROLES, Action, role_rank

WORKSPACE_CREATE_DENIED = (
    "Creating a workspace needs a site administrator (a Django superuser) signed in or "
    "using an unbound personal token."
)
AGENT_WRITE_NONE = "Agents may not write in this scope (its agent write policy is 'none')."
AGENT_WRITE_EPISODES = (
    "Agents may only record episodes in this scope (its agent write policy is 'episodes'); "
    "a person writes or confirms other memories here."
)
MOVE_ACROSS_WORKSPACES = "A scope moves only within its own workspace."
MOVE_INTO_ITSELF = "A scope cannot move under itself or one of its own descendants."
MOVE_ROOT = "A workspace's root scope cannot move; rename the workspace instead."
FOUR_EYES_OFF_REASON = "Say why four-eyes is turned off; the reason goes into the audit log."
ARCHIVE_ROOT = "A workspace's root scope cannot be archived."

_STRICTNESS = {AgentWrite.PROPOSE: 0, AgentWrite.EPISODES: 1, AgentWrite.NONE: 2}


# --- Workspaces ---------------------------------------------------------------------------------------


def is_site_admin(principal: Principal | None) -> bool:
    """A Django superuser acting as itself: signed in, or with an unbound personal token. A token bound to a
    scope never acts outside it, so it never creates workspaces; agents and teams never are site admins."""
    if principal is None:
        return True
    if principal.kind != PrincipalKind.USER or principal.user_id is None or bound_of(principal) is not None:
        return False
    return bool(principal.user.is_active and principal.user.is_superuser)


def require_workspace_create(principal: Principal | None) -> None:
    if not is_site_admin(principal):
        raise PermissionDenied(WORKSPACE_CREATE_DENIED, action="create_workspace")


# --- Administering a scope (rename, move, archive, settings) ------------------------------------------


def require_administer(principal: Principal | None, scope: Scope) -> None:
    """Renaming, moving, archiving and configuring a scope (and renaming its workspace, at the root) is
    the owner's: the same right as changing its policies. NotFound outside the caller's scopes."""
    require(principal, scope, Action.MANAGE_POLICY)


WORKSPACE_ADMIN_DENIED = "Renaming a workspace needs the owner role on its root scope."


def require_workspace_admin(principal: Principal | None, root: Scope) -> None:
    """Renaming a workspace: the owner role on its root. The caller already knows the workspace (it holds
    a role somewhere in it), so a refusal is a 403 with the reason, not a 404."""
    if principal is not None and not roles_at(principal, root) & ACTION_ROLES[Action.MANAGE_POLICY]:
        raise PermissionDenied(WORKSPACE_ADMIN_DENIED, action="rename_workspace")


def require_move(principal: Principal | None, scope: Scope, new_parent: Scope) -> None:
    """Moving needs the owner role on the scope and on its new parent; never across workspaces, never
    under itself, never the root."""
    require_administer(principal, scope)
    require(principal, new_parent, Action.MANAGE_POLICY)
    if scope.parent_id is None:
        raise PermissionDenied(MOVE_ROOT, action="move_scope")
    if new_parent.workspace_id != scope.workspace_id:
        raise PermissionDenied(MOVE_ACROSS_WORKSPACES, action="move_scope")
    if under(str(new_parent.tree), str(scope.tree)):
        raise PermissionDenied(MOVE_INTO_ITSELF, action="move_scope")


def settings_kept_on_move(scope: Scope, new_parent: Scope) -> dict:
    """What a move must set on `scope` itself so that it stays under every rule it was under: four-eyes,
    the agent write policy, an archive and the lowest role for child scopes come from the scope or above
    it, so moving a sub-scope out from under its parent would otherwise relax them (one owner's act
    taking a subtree out of another's four-eyes). The stricter of the old and the new place holds; to
    relax a rule afterwards is the scope's settings change, audited like any other. Returns
    {field: value} for the fields that change (empty when the new place is at least as strict)."""
    from governance.permissions.review import requires_four_eyes

    kept: dict = {}
    old_parent = scope.parent
    if (
        not scope.require_two_reviewers
        and requires_four_eyes(old_parent)
        and not requires_four_eyes(new_parent)
    ):
        kept["require_two_reviewers"] = True
    old_policy, new_policy = agent_write_policy(old_parent), agent_write_policy(new_parent)
    rank = lambda p: _STRICTNESS[AgentWrite(p)]  # noqa: E731
    if rank(old_policy) > max(rank(new_policy), rank(scope.agent_write)):
        kept["agent_write"] = old_policy
    closed = archived_scope(old_parent)
    if scope.archived_at is None and closed is not None and archived_scope(new_parent) is None:
        kept["archived_at"] = closed.archived_at
    old_role, new_role = child_scope_lowest_role(old_parent), child_scope_lowest_role(new_parent)
    if role_rank(old_role) > max(role_rank(new_role), role_rank(scope.child_scope_role or Role.AGENT)):
        kept["child_scope_role"] = old_role
    return kept


def require_four_eyes_change(principal: Principal | None, scope: Scope, *, on: bool, reason: str) -> None:
    """Four-eyes on or off is a policy change: the owner's. Turning it off weakens governance, so it also
    needs a reason, kept in the audit event next to the actor, old and new value. (One owner suffices:
    an owner can already grant a second reviewer role to anyone, so a two-person rule here would be
    side-stepped by the same person; the audit trail is what makes it answerable.)"""
    require_administer(principal, scope)
    if not on and not (reason or "").strip():
        from governance.errors import InvalidInput

        raise InvalidInput(FOUR_EYES_OFF_REASON, field="reason")


# --- What a scope accepts ------------------------------------------------------------------------------


def archived_scope(scope: Scope) -> Scope | None:
    """The scope itself or the nearest archived scope above it, if any (an archived project closes its
    tasks too). One query."""
    return Scope.objects.ancestors_of(scope).filter(archived_at__isnull=False).order_by("-tree").first()


def agent_write_policy(scope: Scope) -> str:
    """The strictest agent write policy on the scope or above it. One query."""
    policies = set(Scope.objects.ancestors_of(scope).values_list("agent_write", flat=True))
    return max(policies or {AgentWrite.PROPOSE}, key=lambda p: _STRICTNESS[AgentWrite(p)])


def require_writable(principal: Principal | None, scope: Scope, *, episodes_only: bool) -> None:
    """A new memory (or event, or child scope) in `scope`: refused (409 scope_archived) in an archived
    subtree, whoever writes; and for an agent, refused (403) where the agent write policy forbids it
    (`episodes_only`: every memory written is an episodic trace). The role check is separate (require).
    One query: the ancestors' archive marks and policies together."""
    rows = list(Scope.objects.ancestors_of(scope).values_list("archived_at", "agent_write"))
    if any(archived is not None for archived, _ in rows):
        raise ScopeArchived()
    if principal is None or principal.kind != PrincipalKind.AGENT:
        return
    policy = max((p for _, p in rows), default=AgentWrite.PROPOSE, key=lambda p: _STRICTNESS[AgentWrite(p)])
    if policy == AgentWrite.NONE:
        raise PermissionDenied(AGENT_WRITE_NONE, action="write_candidate")
    if policy == AgentWrite.EPISODES and not episodes_only:
        raise PermissionDenied(AGENT_WRITE_EPISODES, action="write_candidate")


def may_write_candidates(principal: Principal | None, scope: Scope) -> bool:
    """Whether memories other than episodes written by `principal` in `scope` are accepted: event ingestion
    asks before extracting candidates, so an agent under the 'episodes' policy still records its turns."""
    return (
        principal is None
        or principal.kind != PrincipalKind.AGENT
        or agent_write_policy(scope) == AgentWrite.PROPOSE
    )


# --- Opening child scopes -------------------------------------------------------------------------------


def child_scope_lowest_role(parent: Scope | None = None) -> str:
    """The lowest role that may open a child under `parent`: the highest of settings.SCOPE_CREATE_ROLE and
    every child_scope_role set on `parent` or above it."""
    from django.conf import settings

    roles = {settings.SCOPE_CREATE_ROLE}
    if parent is not None:
        roles |= {
            r for r in Scope.objects.ancestors_of(parent).values_list("child_scope_role", flat=True) if r
        }
    return max(roles, key=role_rank)


def child_scope_roles(parent: Scope | None = None) -> set[str]:
    """Roles that may open a child scope: those that may write in the parent, at or above the rank of
    child_scope_lowest_role(parent) (default `agent`: an agent opens the task scopes it works in)."""
    lowest = role_rank(child_scope_lowest_role(parent))
    return {r for r in ACTION_ROLES[Action.WRITE_CANDIDATE] if role_rank(r) >= lowest}


SCOPE_CREATE_DENIED = (
    "Opening a scope under this one needs the right to write memories here, with one of these roles: {roles}."
)


def require_create_child_scope(principal: Principal | None, parent: Scope) -> None:
    """NotFound when the caller holds no role on the parent (no existence leak, another workspace
    included); PermissionDenied with the roles that would allow it when it holds one that does not;
    ScopeArchived under an archived scope."""
    if principal is not None:
        roles = roles_at(principal, parent)
        if not roles:
            raise NotFound()
        allowed = child_scope_roles(parent)
        if not roles & allowed:
            names = ", ".join(r for r in Role.values if r in allowed)
            raise PermissionDenied(SCOPE_CREATE_DENIED.format(roles=names), action="create_scope")
    if archived_scope(parent) is not None:
        raise ScopeArchived()
