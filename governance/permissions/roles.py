"""Actions, the roles that allow each, and role ranks."""

from __future__ import annotations

from enum import StrEnum

from governance.models import ROLE_RANK, Role


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
    LINK = "link"  # relate two memories by hand (supports, contradicts, derived from), or remove a link
    EVALUATE = "evaluate"  # start an evaluation run of an uploaded conversation file (on the workspace root)
    MANAGE_WEBHOOKS = "manage_webhooks"  # a workspace's outbound events: asked on its root scope
    EXPORT = "export"  # take a scope subtree out as a file (governance.services.portability)
    IMPORT = "import"  # bring an exported subtree in under a scope


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
    # A hand-made link changes how packets adjudicate (a contradiction is flagged, evidence grouped): a
    # curation step, like superseding. Agents' evidence links are made by the system's own services.
    Action.LINK: {Role.CURATOR, Role.OWNER},
    # An upload costs worker time and imports a whole file: the workspace's owners decide.
    Action.EVALUATE: {Role.OWNER},
    Action.MANAGE_WEBHOOKS: {Role.OWNER},
    # An export carries every memory, grant and audit event of the subtree: those who govern it whole.
    Action.EXPORT: {Role.CURATOR, Role.OWNER},
    # An import writes memories in force and grants: only an owner of the target may.
    Action.IMPORT: {Role.OWNER},
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
    Action.LINK: "Linking memories by hand (or removing a link) needs the curator or owner role on the linking "
    "memory's scope.",
    Action.EVALUATE: "Starting an evaluation needs the owner role on the workspace (or a site administrator).",
    Action.MANAGE_WEBHOOKS: "Webhooks of a workspace are managed by the owners of the whole workspace.",
    Action.EXPORT: "Exporting a scope needs the curator or owner role on it.",
    Action.IMPORT: "Importing into a scope needs the owner role on it.",
}


# --- Roles ---------------------------------------------------------------------------------------------

# An agent principal may hold (directly, through a team, or as a token's bound) only roles of this rank
# or below: agent and viewer. Agents propose, people decide.
AGENT_MAX_ROLE = Role.AGENT


def agent_may_hold(role: str) -> bool:
    return role_rank(role) <= role_rank(AGENT_MAX_ROLE)


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


# What each role gives, in the words the Members page and the API use (an action stands for each word).
PERMISSION_WORDS: dict[str, Action] = {
    "read": Action.READ,
    "propose": Action.WRITE_CANDIDATE,
    "confirm": Action.CONFIRM,
    "revoke": Action.RETIRE,  # supersede, retire, forget memories
    "administer": Action.MANAGE_GRANTS,  # grants, teams, invitations, scope settings
}


def role_permissions(roles: set[str] | frozenset[str]) -> list[str]:
    """The permission words the roles give together, in PERMISSION_WORDS order."""
    return [word for word, action in PERMISSION_WORDS.items() if set(roles) & ACTION_ROLES[action]]
