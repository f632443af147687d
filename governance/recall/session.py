"""The session's requirements: what the user has just said about their own task counts in that session at
once (DESIGN.md, "Trust boundaries"; docs/governance.md, "The session's requirements").

What the user stated in this session about their task — a request that names a value ("最后导出 PDF"), a
boundary ("别覆盖原文件", "don't publish yet"), a correction ("改成 PPTX"), a standing instruction, a stage
fact ("v3 is the confirmed version") — is read from the requirements the extractor wrote from the user's
turns (meta["requirement"], services/requirements.py decided what each replaces) and pinned for this
session among the constraints, labelled as the user's (turn, time) and awaiting confirmation. A later
requirement that replaced an earlier one sets it aside here: the earlier one is listed under "no longer in
force" for this session, saying who replaced it and with what, and the user's turn that asked for it is
not offered as evidence. A correction that could replace two requirements equally is pinned as ambiguous,
naming both, rather than guessed. A requirement a reviewer rejected is not in force; what it replaced is
again, and the packet says so.

A correction of a rule in force — the same key, or a `contradicts` link to an unkeyed rule — sets that rule
aside in this session only (listed first under "no longer in force", the correction pinned in its place).
Every other session, agent and scope keeps the rule pinned, and its block names the pending change by id
(never its text: the constraints slot holds no agent-relayed words outside their session). A binding rule
(its key in `binding_keys`, `rules_binding`, or a long-term commitment under four-eyes) is never set aside:
its block says that the user asked for a change and who must decide.

Nothing is written: a requirement in force in its session is a reading of what was extracted, so a
confirmation (then the rule for everyone), a rejection or a forget needs no clean-up, and nothing can outlive
its session. Whose session: the requirement's own scope (never an ancestor's or a child's read), its
session, and its author: the agent that relayed it (another agent using the same session name does not get
it), or a person's token (any reader of that session). The scope's `session_overrides` setting may ask for
the second, or switch the session exception off.

Cost: one statement when the request names a session or a pinned rule has a `contradicts` link from a
proposal (the rules' rows carry their relations): the scope's settings, this session's requirements (an
index range: memory_session_requirements) and the linked corrections, capped."""

from __future__ import annotations

import dataclasses
import json

from governance.models import RelationKind, Status, activation
from governance.permissions.sessions import POLICY_SQL, SessionPolicy, binding_reason, override_refused
from governance.recall.rank import KEYED_MATCH
from governance.recall.recall import RELATION_FIELDS, fetch
from governance.recall.session_requirements import requirements_in_force
from governance.recall.session_rows import (
    LIVE,
    member,
    not_own,
    pending,
    said_by,
    since,
    turn_of,
    untangle,
    who,
)
from governance.recall.state import Hit, RecallState
from governance.runtime.replica import read_connection
from governance.services import parts

# Corrections of pinned rules read per request, this session's first, newest first: a flood of fabricated
# proposals against one rule costs a bounded read and a bounded packet.
LOOKUP_LIMIT = 20
# This session's requirements read per request (the newest): what a session has said stays bounded.
SESSION_LIMIT = 60
# Pending changes named on a pinned rule (the newest), the others counted.
PENDING_SHOWN = 1

# What rank and pack read of a row (recall.COLUMNS without what adjudication needed: it has run).
ROW = (
    "m.id, m.scope_id, m.kind, m.key, m.revision, m.status, m.text, m.source_kind, m.source_ref, m.session,"
    " m.speaker, m.call_id, m.task_type, m.occurred_at, m.confidence, m.importance, m.meta, m.created_at,"
    " (m.confirmed_at IS NOT NULL) AS confirmed, m.confirmed_at"
)
_EPISODE = (
    "(SELECT r.target_id FROM governance_relation r WHERE r.source_id = m.id AND r.kind = 'derived_from'"
    " ORDER BY r.id LIMIT 1)"
)

_SQL = """
WITH policy AS (
POLICY_SQL), found AS (
  SELECT SELECT_LIST, pair.rule_id, m.created_by_id, p.kind AS author_kind,
         (SELECT r.tier FROM governance_memory r WHERE r.id = pair.rule_id) AS rule_tier,
         EPISODE AS episode_id, 'against' AS part
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
), mine AS (
  SELECT SELECT_LIST, NULL::bigint AS rule_id, m.created_by_id, p.kind AS author_kind, NULL::varchar AS rule_tier,
         EPISODE AS episode_id, 'session' AS part
    FROM governance_memory m
    LEFT JOIN governance_principal p ON p.id = m.created_by_id
   WHERE %(session)s <> '' AND m.scope_id = %(scope)s AND m.session = %(session)s AND m.session <> ''
     AND m.source_kind = 'user' AND m.kind <> 'episodic' AND m.purged_at IS NULL
     AND m.status IN ('candidate', 'proposed', 'rejected', 'active') AND m.meta ? 'requirement'
     AND (%(as_of)s::timestamptz IS NULL OR coalesce(m.occurred_at, m.created_at) <= %(as_of)s)
   ORDER BY m.occurred_at DESC, m.id DESC
   LIMIT %(session_limit)s
)
SELECT policy.all_binding, policy.binding_keys, policy.four_eyes, policy.strictness, x.*
  FROM policy LEFT JOIN (SELECT * FROM found UNION ALL SELECT * FROM mine) x ON true
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


def _lookup(
    state: RecallState, against: dict[int, list[int]]
) -> tuple[SessionPolicy, list[dict], list[dict]]:
    pairs = [(c, r) for c, rules in against.items() for r in rules]
    with read_connection().cursor() as cursor:
        cursor.execute(
            _SQL.replace("POLICY_SQL", POLICY_SQL)
            .replace("SELECT_LIST", f"{ROW}, {activation.activation_sql('%(at)s')} AS activation")
            .replace("EPISODE", _EPISODE),
            {
                "at": state.at,
                "visible": list(state.eligibility.scope_ids),
                "scope": state.scope.id,
                "session": state.session or "",
                "cids": [c for c, _ in pairs],
                "rids": [r for _, r in pairs],
                "as_of": state.as_of,
                "limit": LOOKUP_LIMIT,
                "session_limit": SESSION_LIMIT,
            },
        )
        names = [c.name for c in cursor.description]
        rows = [_decoded(dict(zip(names, row, strict=True))) for row in cursor.fetchall()]
    policy = SessionPolicy.of_row(rows[0]) if rows else SessionPolicy()
    rows = [r for r in rows if r.get("id") is not None]
    return policy, [r for r in rows if r["part"] == "against"], [r for r in rows if r["part"] == "session"]


def _decoded(row: dict) -> dict:
    # A raw cursor leaves json undecoded; rows are read like the search stages' (recall.COLUMNS).
    for name in ("meta", "relations"):
        if isinstance(row.get(name), str):
            row[name] = json.loads(row[name])
    if row.get("relations") is not None:
        row["relations"] = [dict(zip(RELATION_FIELDS, r, strict=True)) for r in row["relations"]]
    return row


def session_overrides(state: RecallState) -> tuple[int, int, dict]:
    """Pin this session's requirements and apply its corrections of the pinned rules (see the module's
    docstring). Returns (rows read, requirements and corrections in force here): not candidates, so the
    trace counts them in their own unit."""
    _replaced_elsewhere(state)
    pinned = {h.id: h for h in state.constraints + state.preferences}
    against = _proposals_against(pinned)
    if not against and not state.session:
        return 0, 0, {"unit": "corrections"}
    policy, corrections, mine = _lookup(state, against)
    decided, applied = _corrections_of_rules(state, policy, corrections, pinned)
    applied += requirements_in_force(state, policy, mine, decided)
    return len(corrections) + len(mine), applied, {"unit": "corrections"}


def _replaced_elsewhere(state: RecallState) -> None:
    """A requirement of another conversation that its user replaced later (services/requirements.py marks
    it) is no evidence standing alone here: it goes to negative context as outdated, with what replaced it
    (in force nowhere yet: it waits for a reviewer, and the packet says so). No query unless one is found
    and its replacement was not read already."""
    found = {
        hit.id: ((hit.row.get("meta") or {}).get("requirement") or {}).get("replaced_by")
        for hit in state.hits.values()
        if not (hit.row.get("session") == state.session and hit.row.get("scope_id") == state.scope.id)
    }
    found = {i: r for i, r in found.items() if isinstance(r, dict) and r.get("memory_id")}
    if not found:
        return
    known = {h.id: h.row for h in [*state.hits.values(), *state.constraints]}
    missing = [r["memory_id"] for r in found.values() if r["memory_id"] not in known]
    if missing:
        known.update(fetch(state, missing, statuses=(Status.CANDIDATE, Status.PROPOSED, Status.ACTIVE)))
    for memory_id, replaced_by in found.items():
        later = known.get(replaced_by["memory_id"])
        if later is None or later["status"] not in (*LIVE, Status.ACTIVE):
            continue  # rejected or forgotten since: the earlier requirement is what the user said last
        hit = state.hits.pop(memory_id)
        waiting = "" if later["status"] == Status.ACTIVE else ", awaiting a reviewer"
        hit.extra["outdated"] = {
            "why": f"the user replaced it later in the conversation (memory {later['id']}{waiting})",
            "link": "replaced",
            "memory_id": memory_id,
            "key": hit.row.get("key"),
            "revision": hit.row.get("revision"),
            "status": hit.row.get("status"),
            "replaced_by": {
                "memory_id": later["id"],
                "key": later["key"],
                "revision": later["revision"],
                "text": later["text"],
                "status": later["status"],
            },
        }
        hit.extra["replaced_by"] = hit.extra["outdated"]["replaced_by"]
        state.negative.append(hit)


def _corrections_of_rules(
    state: RecallState, policy: SessionPolicy, rows: list[dict], pinned: dict[int, Hit]
) -> tuple[set[int], int]:
    """Corrections of the pinned rules: this session's newest one per rule overrides it here (or is said on
    a binding rule, or is refused by the scope's setting); the others are pending changes, by id. Returns
    the corrections that spoke for a rule here and how many override one."""
    decided: set[int] = set()  # rules this session's newest correction already spoke for
    spoke: set[int] = set()
    applied = 0
    for row in rows:  # this session's first, newest first
        rule = pinned.get(row["rule_id"])
        if rule is None or "set_aside" in rule.extra:
            continue
        why_not = not_own(state, row)
        if why_not is None:
            if row["rule_id"] in decided:
                continue  # an older correction of the same rule in this session
            decided.add(row["rule_id"])
            spoke.add(row["id"])
            why_not = _decide(state, policy, row, rule)
            if why_not is None:
                applied += 1
                continue
        if row["status"] in LIVE and why_not:
            changes = rule.extra.setdefault("pending_changes", [])
            if len(changes) < PENDING_SHOWN:
                changes.append(pending(row, why_not))
            else:
                rule.extra["pending_more"] = rule.extra.get("pending_more", 0) + 1
    return spoke, applied


def _decide(state: RecallState, policy: SessionPolicy, row: dict, rule: Hit) -> str | None:
    """This session's newest correction of `rule`: a rejection is said on the rule, a binding rule holds
    and names the request, a scope's policy may refuse it (returns why, for the pending change), and
    otherwise it overrides the rule here (returns None). "" when it was said on the rule."""
    # In its own session the user's words may be said on the rule (they are this conversation's); a
    # change from anywhere else is named by id only (`pending`).
    if row["status"] == Status.REJECTED:
        rule.extra["override_rejected"] = member(row)
        untangle(state, row["id"], rule.id)
        return ""
    binding = binding_reason(policy, rule.row.get("key"), row.get("rule_tier"))
    if binding:
        rule.extra["binding_request"] = {**member(row), "why": binding, "decide": "a reviewer"}
        state.hits.pop(row["id"], None)
        untangle(state, row["id"], rule.id)
        return ""
    refused = override_refused(policy, who(row))
    if refused:
        return refused
    _override(state, row, rule)
    return None


def _override(state: RecallState, row: dict, rule: Hit) -> None:
    """The correction takes the rule's place among the pinned blocks; the rule goes to negative context."""
    hit = state.hits.pop(row["id"], None) or Hit(id=row["id"], row=row, fused=KEYED_MATCH)
    hit.paths.add("session")
    turn = turn_of(row)
    corrected = (
        f"the user corrected it in this session (turn {turn})"
        if turn
        else "the user corrected it in this session"
    )
    hit.extra["session_override"] = {
        "session": row["session"],
        "turn": turn,
        "told_by": who(row),
        "since": since(row),
        "awaiting": "confirmation",
        "replaces": {
            "memory_id": rule.id,
            "key": rule.row["key"],
            "revision": rule.row["revision"],
            "status": rule.row["status"],
            "text": rule.row["text"],
        },
    }
    hit.extra["pinned_why"] = f"in force for this session ({said_by(row)}), awaiting confirmation"
    # A correction of one clause of the rule ("可以发布了" against "…,别覆盖原文件,也先不要发布"): the rule's
    # other clauses stay in force beside it, and only the clause it touched is set aside (services/parts.py).
    standing = parts.standing_part(rule.row["text"], row["text"])
    for slot in (state.constraints, state.preferences):
        for i, held in enumerate(slot):
            if held.id == rule.id:
                slot[i : i + 1] = [_part(rule, standing, "in force"), hit] if standing else [hit]
    state.hits.pop(rule.id, None)
    if standing:
        rule = _part(rule, parts.replaced_part(rule.row["text"], standing), "set aside")
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
    untangle(state, row["id"], rule.id)


def _part(rule: Hit, text: str, part: str) -> Hit:
    """The rule's block for one part of it: the part still in force, or the part the correction took."""
    return dataclasses.replace(
        rule,
        row={**rule.row, "text": text},
        extra={**rule.extra, "part_of": {"memory_id": rule.id, "text": rule.row["text"], "part": part}},
        paths=set(rule.paths),
        flags=list(rule.flags),
    )


__all__ = ["LOOKUP_LIMIT", "SESSION_LIMIT", "session_overrides"]
