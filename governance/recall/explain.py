"""Why not this memory? For one stored turn and any memory the reader may read: where it fell out of the
read path and why — from the stored packet when it names the memory (used, skipped with its stage, in the
negative context), else by replaying that turn's request (as the reader, with the reader's grants, as of
the turn's time, nothing stored or reinforced) and following the memory through the stages:

- not eligible (status, scope, validity, task type, after the turn's time),
- not matched by any path (no search found it),
- cut by fusion (found, but below the fused cut-off, or folded into a repeat),
- out of force (superseded or outdated: the negative context),
- dropped at rank (overridden, or cold and a weak match),
- not placed by pack (over budget, or not among the best of its slot)."""

from __future__ import annotations

from dataclasses import dataclass, field

from governance.models import Memory, Status, Turn
from governance.redaction.masking import withheld

NOT_ELIGIBLE, NO_PATH, FUSION, OUT_OF_FORCE, RANK, BUDGET, PACK, USED = (
    "not eligible",
    "not matched by any path",
    "cut by fusion",
    "out of force",
    "dropped at rank",
    "over budget",
    "not placed",
    "used",
)
PATH_WORDS = {
    "lexical": "by words",
    "vector": "by meaning",
    "recent": "as a recent turn",
    "keyed": "as a keyed fact in force",
}


@dataclass
class WhyNot:
    memory: Memory
    verdict: str  # one of the constants above
    stage: str  # the stage it fell out at ("" when used)
    reason: str  # a plain sentence
    source: str  # "stored" (the turn's own packet) or "replay" (the turn replayed now)
    found_by: list[str] = field(default_factory=list)
    slot: str = ""


def _from_packet(turn: Turn, memory: Memory, packet: dict) -> WhyNot | None:
    for slot, blocks in (packet or {}).items():
        if not isinstance(blocks, list):
            continue
        for b in blocks:
            if not isinstance(b, dict) or b.get("memory_id") != memory.pk:
                continue
            reason = str(b.get("reason") or "")
            if slot == "skipped":
                stage = b.get("stage") or ("pack" if reason == "did not fit the token budget" else "")
                verdict = BUDGET if stage == "pack" else RANK if stage == "rank" else stage or "left out"
                return WhyNot(
                    memory, verdict, stage, reason or "no reason recorded", "stored", slot=b.get("slot", "")
                )
            if slot == "negative":
                return WhyNot(
                    memory, OUT_OF_FORCE, "adjudicate", reason or "no longer in force", "stored", slot=slot
                )
            return WhyNot(memory, USED, "", reason or f"placed in {slot}", "stored", slot=slot)
    return None


def _ineligible(memory: Memory, state) -> str:
    e = state.eligibility
    if withheld(memory.status) or memory.purged_at is not None:
        return "it is forgotten: it is never recalled or shown again"
    if memory.scope_id not in e.scope_ids:
        return (
            "it lives in a scope this turn does not read (a read sees its own scope and the scopes above it, "
            "within the asker's grants)"
        )
    if memory.status not in e.statuses:
        return {
            Status.RETIRED: "it is retired: no longer recalled",
            Status.REJECTED: "it was rejected by a reviewer",
            Status.SUPERSEDED: "it is superseded, and this strategy does not bring what was replaced",
        }.get(memory.status, f"its status ({memory.status}) is never recalled")
    if memory.valid_from and memory.valid_from > e.at:
        return "it was not valid yet at the turn's time (valid from a later date)"
    if memory.valid_until and memory.valid_until <= e.at:
        return "its validity had ended at the turn's time"
    if memory.task_type and memory.task_type != e.task_type:
        return f"it is meant only for tasks of type “{memory.task_type}”"
    if e.as_of is not None and memory.occurred_at and memory.occurred_at > e.as_of:
        return "it happened after the turn's time"
    return ""


def _replayed(turn: Turn, memory: Memory, principal) -> WhyNot:
    from governance.recall.pack import pack
    from governance.recall.packet import stages_run

    req = turn.request or {}
    state = stages_run(
        principal=principal,
        scope=turn.scope,
        query=turn.query,
        strategy=turn.strategy or "full",
        as_of=turn.as_of or turn.created_at,
        session=turn.session,
        task=req.get("task"),
    )
    why = _ineligible(memory, state)
    if why:
        return WhyNot(memory, NOT_ELIGIBLE, "eligible", why, "replay")
    found = [p for p, ranked in state.lists.items() if any(i == memory.pk for i, _ in ranked)]
    found += ["recent"] * any(h.id == memory.pk for h in state.recent)
    found += ["keyed"] * any(h.id == memory.pk for h in state.constraints + state.preferences)
    found_words = [PATH_WORDS.get(p, p) for p in found]
    for (hit, slot, reason), stage in zip(state.dropped, state.dropped_by, strict=False):
        if hit.id == memory.pk:
            return WhyNot(
                memory, RANK if stage == "rank" else stage, stage, reason, "replay", found_words, slot
            )
    if any(h.id == memory.pk for h in state.negative):
        return WhyNot(
            memory,
            OUT_OF_FORCE,
            "adjudicate",
            "it is no longer in force: it went to the negative "
            "context (superseded, or outdated by a newer memory)",
            "replay",
            found_words,
            "negative",
        )
    if not found and memory.pk not in state.hits:
        return WhyNot(
            memory,
            NO_PATH,
            "search",
            "no search path found it for this query: none of its words "
            "matched, it was not among the nearest by meaning, and it is neither a recent turn of the "
            "session nor a keyed fact in force",
            "replay",
        )
    in_lists = {p for p in found if p in state.lists}
    if in_lists and memory.pk not in state.hits and memory.pk not in {h.id for h in state.evidence}:
        return WhyNot(
            memory,
            FUSION,
            "fuse",
            "found, but the fused ranking put it below the cut-off (or folded "
            "it into a repeat of the same turn), so it went no further",
            "replay",
            found_words,
        )
    packet, _ = pack(state, int(req.get("budget_tokens") or turn.budget_limit or 2000))
    placed = _from_packet(turn, memory, packet)
    if placed is not None:
        placed.source, placed.found_by = "replay", found_words
        return placed
    if memory.pk in state.hits and memory.pk not in {h.id for h in state.evidence}:
        return WhyNot(memory, RANK, "rank", "ranked out of the evidence", "replay", found_words)
    return WhyNot(
        memory,
        PACK,
        "pack",
        "not among the best of its slot (a slot holds the ten best) or already placed as a recent turn",
        "replay",
        found_words,
    )


def why_not(turn: Turn, memory: Memory, principal, masked_packet: dict) -> WhyNot:
    """The answer for one memory: from the turn's (already masked) stored packet when it names it, else by
    replaying the turn. A replay the reader may not run (no ASK_CONTEXT there) raises its DomainError."""
    stored = _from_packet(turn, memory, masked_packet)
    if stored is not None:
        return stored
    replayed = _replayed(turn, memory, principal)
    if replayed.verdict == USED:
        # The turn's own packet does not hold it, yet a replay now would use it: what the search paths find
        # changed after the turn (most often: memories still waiting for their vector then, found by meaning
        # now). Said as such, never as "used" for a turn that did not use it.
        pending = next(
            (
                s.get("out", 0)
                for s in (turn.trace or {}).get("stages", [])
                if isinstance(s, dict) and s.get("name") == "pending"
            ),
            0,
        )
        waiting = (
            f" ({pending} memories of the scope were still waiting for their vector then)" if pending else ""
        )
        return WhyNot(
            memory,
            NO_PATH,
            "search",
            "this turn's search did not bring it" + waiting + "; a "
            "replay now would use it, so what the search finds has changed since the turn",
            "replay",
            replayed.found_by,
            replayed.slot,
        )
    return replayed
