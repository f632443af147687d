"""What the session stage reads of a correction's or requirement's row, shared by the corrections of rules
(recall/session.py) and the session's requirements (recall/session_requirements.py): whose conversation it
is, who said it, how a block names it, and how a pair's contradiction is untangled once the blocks say it."""

from __future__ import annotations

from governance.models import PrincipalKind, Status
from governance.permissions.sessions import told_by
from governance.recall.state import RecallState

LIVE = (Status.CANDIDATE, Status.PROPOSED)
WHY_OTHER_SESSION = "from another conversation"
WHY_OTHER_AGENT = "relayed by another agent"


def turn_of(row: dict) -> str:
    return row.get("source_ref") or ""


def who(row: dict) -> str:
    return told_by(row.get("author_kind"))


def not_own(state: RecallState, row: dict) -> str | None:
    """None when the correction is this conversation's, else why it is not."""
    if not state.session or row["session"] != state.session or row["scope_id"] != state.scope.id:
        return WHY_OTHER_SESSION
    if row.get("author_kind") == PrincipalKind.USER:
        return None
    mine = state.principal is not None and row.get("created_by_id") == state.principal.pk
    return None if mine else WHY_OTHER_AGENT


def member(row: dict) -> dict:
    """The correction as a member of another block (its own memory_id: a forget redacts it there too)."""
    return {
        "memory_id": row["id"],
        "key": row["key"],
        "revision": row["revision"],
        "status": row["status"],
        "text": row["text"],
        "session": row["session"],
        "turn": turn_of(row),
        "told_by": who(row),
    }


def pending(row: dict, why_not: str) -> dict:
    """A change waiting elsewhere, as the rule's block names it: by id, never its words (an agent relayed
    them; the constraints slot carries no agent text outside the conversation it was said in)."""
    return {
        "memory_id": row["id"],
        "key": row["key"],
        "revision": row["revision"],
        "status": row["status"],
        "told_by": who(row),
        "why_not_in_force": why_not,
    }


def said_by(row: dict) -> str:
    turn = turn_of(row)
    return f"the user, turn {turn}" if turn else "the user"


def since(row: dict) -> str | None:
    at = row.get("occurred_at") or row.get("created_at")
    return at.isoformat() if at else None


def untangle(state: RecallState, correction_id: int, rule_id: int) -> None:
    """The pair's contradiction is said by the blocks themselves: no "contradicts"/"loses to" flags and no
    relation block between them (the rule "winning" would tell the agent the opposite of the packet)."""
    pair = {correction_id, rule_id}
    state.relations = [
        r
        for r in state.relations
        if not (r.get("kind") == "contradicts" and {r.get("memory_id"), r.get("contradicts")} == pair)
    ]
    for hit in [*state.hits.values(), *state.constraints, *state.preferences, *state.negative]:
        if hit.id in pair:
            other = (pair - {hit.id}).pop()
            hit.flags = [
                f for f in hit.flags if f != f"contradicts {other}" and not f.startswith(f"loses to {other}:")
            ]


__all__ = [
    "LIVE",
    "WHY_OTHER_AGENT",
    "WHY_OTHER_SESSION",
    "member",
    "not_own",
    "pending",
    "said_by",
    "since",
    "turn_of",
    "untangle",
    "who",
]
