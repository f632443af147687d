"""Which proposals are in force in their own session (a session override, governance.recall.session),
for the review queue: a reviewer sees what the agent is acting on while the proposal waits. The rules
are governance.permissions.sessions'; the read path applies the same ones per request."""

from __future__ import annotations

from governance.models import Kind, Memory, SourceKind, Status
from governance.permissions.sessions import (
    SessionPolicy,
    binding_reason,
    override_refused,
    session_policy,
    told_by,
)


def _scope_ids(memory: Memory) -> tuple[int, ...]:
    # The scope's tree is the ltree of its ancestors' ids, itself last: no query for the chain.
    return tuple(int(part) for part in str(memory.scope.tree or memory.scope_id).split("."))


def session_override_notes(memories: list[Memory], rules_of: dict[int, list[Memory]]) -> dict[int, dict]:
    """memory id → {session, turn, since, told_by, rules: [...], state: in_force | binding | refused, why}
    for each session correction of a rule in force; one query per distinct scope among them (none when
    no proposal was said in a session)."""
    policies: dict[tuple[int, ...], SessionPolicy] = {}
    notes = {}
    for m in memories:
        rules = [
            r for r in rules_of.get(m.pk, []) if r.status == Status.ACTIVE and r.confirmed_at is not None
        ]
        if not rules or not m.session or m.source_kind != SourceKind.USER or m.kind == Kind.EPISODIC:
            continue
        chain = _scope_ids(m)
        if chain not in policies:
            policies[chain] = session_policy(chain)
        policy = policies[chain]
        teller = told_by(m.created_by.kind if m.created_by_id else None)
        binding = next((why for r in rules if (why := binding_reason(policy, r.key, r.tier))), None)
        refused = override_refused(policy, teller)
        state = "binding" if binding else "refused" if refused else "in_force"
        notes[m.pk] = {
            "session": m.session,
            "turn": m.source_ref,
            "since": m.created_at,
            "told_by": teller,
            "rules": rules,
            "state": state,
            "why": binding or refused or "",
        }
    return notes
