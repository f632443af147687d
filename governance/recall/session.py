"""Session overrides: what the user has just said about their own task counts in that session at once
(DESIGN.md, "Trust boundaries"; docs/governance.md, "Session overrides").

A correction the user stated in a session (extracted from a user turn, or written with source kind
`user` and the session) that contradicts a rule pinned in force (the same key, or a `contradicts` link
to an unkeyed rule: conflict detection makes both when the correction is written) is, in *that*
session only, in force in the rule's place: the packet pins it, labelled "in force for this session
(the user, turn …), awaiting confirmation", and lists the rule under "no longer in force" for this
session, saying why. Everywhere else the rule stays pinned and names the pending change. Nothing is
written: the override is a reading of the proposal, so confirming it (the next revision for everyone)
or rejecting it (the rule again at the session's next turn, and the packet says so) needs no clean-up,
and an override can never outlive its session.

Whose session: the correction's own scope (never an ancestor's or a child's read), its session, and its
author: the agent that relayed it (another agent using the same session name sees a pending change),
or a person's token (the end user's or a trusted app's: any reader of that session). A scope can ask
for the second (`session_overrides = end_user`) or switch overrides off. A binding rule (its key in
`binding_keys`, `rules_binding`, or a long-term commitment under four-eyes) is never set aside: the
packet says that the user asked for a change and who must decide.

Cost: no query at all unless a pinned rule has a `contradicts` link from a proposal (its row carries
its relations, recall.COLUMNS); then one statement (primary-key probes, and the visible scopes'
settings), capped at LOOKUP_LIMIT rows. Runs with the relations stage (`full`)."""

from __future__ import annotations

import json

from governance.models import PrincipalKind, RelationKind, Status, activation
from governance.permissions.sessions import (
    POLICY_SQL,
    SessionPolicy,
    binding_reason,
    override_refused,
    told_by,
)
from governance.recall.rank import KEYED_MATCH
from governance.recall.recall import RELATION_FIELDS
from governance.recall.state import Hit, RecallState
from governance.runtime.replica import read_connection

# Corrections read per request, this session's first, newest first: a flood of fabricated proposals
# against one rule costs a bounded read and a bounded packet.
LOOKUP_LIMIT = 20
# Pending changes named on a pinned rule (the newest), the others counted.
PENDING_SHOWN = 1
LIVE = (Status.CANDIDATE, Status.PROPOSED)

WHY_OTHER_SESSION = "from another conversation"
WHY_OTHER_AGENT = "relayed by another agent"

# What rank and pack read of a row (recall.COLUMNS without what adjudication needed: it has run).
ROW = (
    "m.id, m.scope_id, m.kind, m.key, m.revision, m.status, m.text, m.source_kind, m.source_ref, m.session,"
    " m.speaker, m.call_id, m.task_type, m.occurred_at, m.confidence, m.importance, m.meta, m.created_at,"
    " (m.confirmed_at IS NOT NULL) AS confirmed"
)

_SQL = """
WITH policy AS (
POLICY_SQL), found AS (
  SELECT SELECT_LIST, pair.rule_id, m.created_by_id, p.kind AS author_kind,
         (SELECT r.tier FROM governance_memory r WHERE r.id = pair.rule_id) AS rule_tier
    FROM unnest(%(cids)s::bigint[], %(rids)s::bigint[]) AS pair(cid, rule_id)
    JOIN governance_memory m ON m.id = pair.cid
    LEFT JOIN governance_principal p ON p.id = m.created_by_id
   WHERE m.scope_id = ANY(%(visible)s) AND m.purged_at IS NULL AND m.source_kind = 'user'
     AND m.kind <> 'episodic'
     AND (m.status IN ('candidate', 'proposed')
          OR (m.status = 'rejected' AND m.session = %(session)s AND m.scope_id = %(scope)s))
     AND (%(as_of)s::timestamptz IS NULL OR coalesce(m.occurred_at, m.created_at) <= %(as_of)s)
   ORDER BY (m.session = %(session)s AND m.scope_id = %(scope)s) DESC, m.id DESC
   LIMIT %(limit)s
)
SELECT policy.all_binding, policy.binding_keys, policy.four_eyes, policy.strictness, found.*
  FROM policy LEFT JOIN found ON true
"""


def _proposals_against(pinned: dict[int, Hit]) -> dict[int, list[int]]:
    """Proposal id → the pinned rules it contradicts, from the relations the rules' rows carry."""
    against: dict[int, list[int]] = {}
    for hit in pinned.values():
        for rel in hit.row.get("relations") or ():
            if (
                rel["kind"] == RelationKind.CONTRADICTS
                and rel["target_id"] == hit.id
                and rel["source_id"] not in pinned
            ):
                against.setdefault(rel["source_id"], []).append(hit.id)
    return against


def _lookup(state: RecallState, against: dict[int, list[int]]) -> tuple[SessionPolicy, list[dict]]:
    pairs = [(c, r) for c, rules in against.items() for r in rules]
    with read_connection().cursor() as cursor:
        cursor.execute(
            _SQL.replace("POLICY_SQL", POLICY_SQL).replace(
                "SELECT_LIST", f"{ROW}, {activation.activation_sql('%(at)s')} AS activation"
            ),
            {
                "at": state.at,
                "visible": list(state.eligibility.scope_ids),
                "scope": state.scope.id,
                "session": state.session,
                "cids": [c for c, _ in pairs],
                "rids": [r for _, r in pairs],
                "as_of": state.as_of,
                "limit": LOOKUP_LIMIT,
            },
        )
        names = [c.name for c in cursor.description]
        rows = [_decoded(dict(zip(names, row, strict=True))) for row in cursor.fetchall()]
    policy = SessionPolicy.of_row(rows[0]) if rows else SessionPolicy()
    return policy, [r for r in rows if r.get("id") is not None]


def _decoded(row: dict) -> dict:
    # A raw cursor leaves json undecoded; rows are read like the search stages' (recall.COLUMNS).
    for name in ("meta", "relations"):
        if isinstance(row.get(name), str):
            row[name] = json.loads(row[name])
    if row.get("relations") is not None:
        row["relations"] = [dict(zip(RELATION_FIELDS, r, strict=True)) for r in row["relations"]]
    return row


def _turn(row: dict) -> str:
    return row.get("source_ref") or ""


def _who(row: dict) -> str:
    return told_by(row.get("author_kind"))


def _own(state: RecallState, row: dict) -> str | None:
    """None when the correction is this conversation's, else why it is not."""
    if not state.session or row["session"] != state.session or row["scope_id"] != state.scope.id:
        return WHY_OTHER_SESSION
    if row.get("author_kind") == PrincipalKind.USER:
        return None
    mine = state.principal is not None and row.get("created_by_id") == state.principal.pk
    return None if mine else WHY_OTHER_AGENT


def _member(row: dict) -> dict:
    """The correction as a member of another block (its own memory_id: a forget redacts it there too)."""
    return {
        "memory_id": row["id"],
        "key": row["key"],
        "revision": row["revision"],
        "status": row["status"],
        "text": row["text"],
        "session": row["session"],
        "turn": _turn(row),
        "told_by": _who(row),
    }


def _label(row: dict) -> str:
    return f"{row['key']} r{row['revision']}" if row.get("key") else f"memory {row['id']}"


def session_overrides(state: RecallState) -> tuple[int, int]:
    """Apply this session's corrections to the pinned rules (see the module's docstring)."""
    pinned = {h.id: h for h in state.constraints + state.preferences}
    against = _proposals_against(pinned)
    if not against:
        return 0, 0
    policy, rows = _lookup(state, against)
    decided: set[int] = set()  # rules this session's newest correction already spoke for
    applied = 0
    for row in rows:  # this session's first, newest first
        rule = pinned.get(row["rule_id"])
        if rule is None or "set_aside" in rule.extra:
            continue
        why_not = _own(state, row)
        if why_not is None:
            if row["rule_id"] in decided:
                continue  # an older correction of the same rule in this session
            decided.add(row["rule_id"])
            why_not = _decide(state, policy, row, rule)
            if why_not is None:
                applied += 1
                continue
        if row["status"] in LIVE and why_not:
            pending = rule.extra.setdefault("pending_changes", [])
            if len(pending) < PENDING_SHOWN:
                pending.append({**_member(row), "why_not_in_force": why_not})
            else:
                rule.extra["pending_more"] = rule.extra.get("pending_more", 0) + 1
    return len(rows), applied


def _decide(state: RecallState, policy: SessionPolicy, row: dict, rule: Hit) -> str | None:
    """This session's newest correction of `rule`: a rejection is said on the rule, a binding rule holds
    and names the request, a scope's policy may refuse it (returns why, for the pending change), and
    otherwise it overrides the rule here (returns None). "" when it was said on the rule."""
    if row["status"] == Status.REJECTED:
        rule.extra["override_rejected"] = _member(row)
        _untangle(state, row["id"], rule.id)
        return ""
    binding = binding_reason(policy, rule.row.get("key"), row.get("rule_tier"))
    if binding:
        rule.extra["binding_request"] = {**_member(row), "why": binding, "decide": "a reviewer"}
        state.hits.pop(row["id"], None)
        _untangle(state, row["id"], rule.id)
        return ""
    refused = override_refused(policy, _who(row))
    if refused:
        return refused
    _override(state, row, rule)
    return None


def _override(state: RecallState, row: dict, rule: Hit) -> None:
    """The correction takes the rule's place among the pinned blocks; the rule goes to negative context."""
    hit = state.hits.pop(row["id"], None) or Hit(id=row["id"], row=row, fused=KEYED_MATCH)
    hit.paths.add("session")
    turn = _turn(row)
    said = f"the user, turn {turn}" if turn else "the user"
    corrected = (
        f"the user corrected it in this session (turn {turn})"
        if turn
        else "the user corrected it in this session"
    )
    hit.extra["session_override"] = {
        "session": row["session"],
        "turn": turn,
        "told_by": _who(row),
        "since": _when(row),
        "awaiting": "confirmation",
        "replaces": {
            "memory_id": rule.id,
            "key": rule.row["key"],
            "revision": rule.row["revision"],
            "status": rule.row["status"],
            "text": rule.row["text"],
        },
    }
    hit.extra["pinned_why"] = f"in force for this session ({said}), awaiting confirmation"
    for slot in (state.constraints, state.preferences):
        for i, held in enumerate(slot):
            if held.id == rule.id:
                slot[i] = hit
    state.hits.pop(rule.id, None)
    rule.extra["set_aside"] = {
        "session": row["session"],
        "why": f"{corrected}; the correction awaits confirmation, and this rule stays in force outside this "
        "session until a reviewer decides",
        "by": {
            "memory_id": row["id"],
            "key": row["key"],
            "revision": row["revision"],
            "status": row["status"],
            "text": row["text"],
        },
    }
    state.negative.insert(0, rule)
    _untangle(state, row["id"], rule.id)


def _when(row: dict) -> str | None:
    at = row.get("occurred_at") or row.get("created_at")
    return at.isoformat() if at else None


def _untangle(state: RecallState, correction_id: int, rule_id: int) -> None:
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


__all__ = ["LOOKUP_LIMIT", "session_overrides"]
