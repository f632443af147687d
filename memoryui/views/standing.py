"""Where a page offers a person nothing to do, it says what they can do and whom to ask, from their roles
(governance.permissions: CAN_DO, holders), never only "not for you"."""

from __future__ import annotations

from governance.models import Status
from governance.permissions import CAN_DO, Action, holders, role_rank

ENDINGS = {
    Status.ACTIVE: (Action.SUPERSEDE, "supersede, retire or forget it"),
    Status.CANDIDATE: (Action.CONFIRM, "confirm or reject it"),
    Status.PROPOSED: (Action.CONFIRM, "confirm or reject it"),
    Status.SUPERSEDED: (Action.RETIRE, "retire or forget it"),
    Status.RETIRED: (Action.FORGET_SOFT, "forget it"),
    Status.REJECTED: (Action.FORGET_SOFT, "forget it"),
}
WHO = {
    Action.SUPERSEDE: "Curators and owners",
    Action.RETIRE: "Curators and owners",
    Action.FORGET_SOFT: "Curators and owners",
    Action.CONFIRM: "Reviewers, curators and owners",
}


def no_action_line(roles_here: set[str], memory) -> str:
    """For a memory page with no action open to the reader: what their role lets them do in the memory's
    scope, and who may decide this memory (names, at most five)."""
    path = memory.scope.path
    if roles_here:
        role = max(roles_here, key=role_rank)
        line = f"You are {role} on {path}: you can {CAN_DO[role]} there"
        if role_rank(role) >= role_rank("reviewer") and memory.status not in (
            Status.CANDIDATE,
            Status.PROPOSED,
        ):
            line += f"; this memory is {memory.status}, not a proposal"
        line += "."
    else:
        line = f"This memory belongs to {path}, a scope above your grants: you may read it here."
    ending = ENDINGS.get(Status(memory.status))
    if ending is not None:
        action, words = ending
        names = holders(memory.scope, action)
        who = f" ({', '.join(names)})" if names else ""
        line += f" {WHO[action]} of {path}{who} can {words}."
    return line
