"""Deterministic checks of an assembled packet against a task's expectations. A check reads only the
packet (slots and their blocks) and the ids the task's labels were loaded as; no model, no text
similarity, no tolerance. Each category names the checks that judge it, so a category is never passed
or failed by a check that has nothing to do with it; the cross-scope check judges every category."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from devtools.evaluation.suite import EvalTask, Expect
from governance.recall.strategies import ACTIVATION, ADJUDICATE, LEXICAL, RELATIONS, VECTOR

SLOTS = (
    "task",
    "constraints",
    "recent",
    "evidence",
    "preferences",
    "relations",
    "external",
    "negative",
    "skipped",
)
# Slots whose blocks the agent may act on. `negative` says what is no longer in force; `skipped` did not fit.
USABLE = frozenset(SLOTS) - {"negative", "skipped"}
# Listed but not presented as usable context: `negative` (no longer in force) and `skipped` (left out,
# with the reason), neither of which the rendered packet text offers the agent as something to act on.
NOT_PRESENTED = frozenset({"negative", "skipped"})
# Slots that present a memory as a rule in force.
RULE_SLOTS = frozenset({"constraints", "preferences"})
CONFLICT_MARKERS = ("contradict", "conflict", "冲突", "矛盾")


@dataclass
class Loaded:
    """What a label became when the task was loaded: its memory id and stored text."""

    id: int
    text: str = ""


@dataclass
class Score:
    passed: bool
    failures: list[str] = field(default_factory=list)


def blocks(packet: dict) -> Iterator[tuple[str, dict]]:
    """(slot, block) for every block that names a memory, in every slot (a slot is a list or one block)."""
    for slot in SLOTS:
        value = packet.get(slot)
        items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
        for block in items:
            if isinstance(block, dict) and block.get("memory_id") is not None:
                yield slot, block


def placements(packet: dict) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for slot, block in blocks(packet):
        out.setdefault(int(block["memory_id"]), set()).add(slot)
    return out


def _usable_blocks(packet: dict, memory_id: int) -> list[tuple[str, dict]]:
    return [(s, b) for s, b in blocks(packet) if s in USABLE and int(b["memory_id"]) == memory_id]


def _id(ids: dict[str, Loaded], label: str) -> int | None:
    loaded = ids.get(label)
    return loaded.id if loaded else None


Check = Callable[[Expect, dict, dict[str, Loaded]], list[str]]


def check_include(e: Expect, packet: dict, ids: dict[str, Loaded]) -> list[str]:
    where = placements(packet)
    out = []
    for label in e.include:
        mid = _id(ids, label)
        if mid is None:
            out.append(f"{label}: was never loaded")
        elif not where.get(mid, set()) & USABLE:
            out.append(
                f"{label} (#{mid}): missing from the usable slots (found in {sorted(where.get(mid, []))})"
            )
    return out


def check_slots(e: Expect, packet: dict, ids: dict[str, Loaded]) -> list[str]:
    where = placements(packet)
    return [
        f"{label}: expected in {slot}, found in {sorted(where.get(_id(ids, label) or -1, []))}"
        for label, slot in e.slots
        if slot not in where.get(_id(ids, label) or -1, set())
    ]


def check_not_in_force(e: Expect, packet: dict, ids: dict[str, Loaded]) -> list[str]:
    where = placements(packet)
    return [
        f"{label} (#{_id(ids, label)}): no longer in force but presented in {sorted(where[mid] - NOT_PRESENTED)}"
        for label in e.not_in_force
        if (mid := _id(ids, label) or -1) in where and where[mid] - NOT_PRESENTED
    ]


def check_absent(e: Expect, packet: dict, ids: dict[str, Loaded]) -> list[str]:
    where = placements(packet)
    return [
        f"{label} (#{_id(ids, label)}): must never appear, found in {sorted(where[mid])}"
        for label in e.absent
        if (mid := _id(ids, label) or -1) in where
    ]


def _names(block: dict, memory: Loaded) -> bool:
    """Does a negative block say what replaced it? By the new memory's id in a field, or its text."""
    for key, value in block.items():
        if key != "memory_id" and value == memory.id:
            return True
        if isinstance(value, dict | list) and _names_nested(value, memory.id):
            return True
    return bool(memory.text) and memory.text in json.dumps(block, ensure_ascii=False)


def _names_nested(value, memory_id: int) -> bool:
    if isinstance(value, dict):
        return any(v == memory_id or _names_nested(v, memory_id) for v in value.values())
    if isinstance(value, list):
        return any(v == memory_id or _names_nested(v, memory_id) for v in value)
    return False


def check_negative(e: Expect, packet: dict, ids: dict[str, Loaded]) -> list[str]:
    out = []
    for old, new in e.negative:
        old_id, new_mem = _id(ids, old), ids.get(new)
        if old_id is None or new_mem is None:
            out.append(f"{old}/{new}: was never loaded")
            continue
        negs = [b for s, b in blocks(packet) if s == "negative" and int(b["memory_id"]) == old_id]
        if not negs:
            out.append(f"{old} (#{old_id}): not listed in negative context")
        elif not any(_names(b, new_mem) for b in negs):
            out.append(
                f"{old} (#{old_id}): negative context does not say it was replaced by {new} (#{new_mem.id})"
            )
    return out


def check_sources(e: Expect, packet: dict, ids: dict[str, Loaded]) -> list[str]:
    out = []
    for label, kind, refs in e.sources:
        mid = _id(ids, label)
        found = _usable_blocks(packet, mid) if mid else []
        if not found:
            out.append(f"{label}: not in the packet, so not attributed")
            continue
        cited = [(b.get("source") or {}) for _, b in found]
        if not any(src.get("kind") == kind and src.get("ref") in refs for src in cited):
            out.append(f"{label} (#{mid}): cited as {cited}, expected kind={kind} ref in {list(refs)}")
    return out


def check_proposals(e: Expect, packet: dict, ids: dict[str, Loaded]) -> list[str]:
    out = []
    for label in e.proposals:
        mid = _id(ids, label) or -1
        for slot, block in blocks(packet):
            if int(block["memory_id"]) != mid or slot not in USABLE:
                continue
            if slot in RULE_SLOTS or block.get("status") == "active":
                out.append(
                    f"{label} (#{mid}): a guess presented as confirmed (slot {slot}, status {block.get('status')})"
                )
    return out


def _flags_conflict(block: dict) -> bool:
    text = json.dumps({k: v for k, v in block.items() if k != "text"}, ensure_ascii=False).lower()
    return any(marker in text for marker in CONFLICT_MARKERS)


def check_conflicts(e: Expect, packet: dict, ids: dict[str, Loaded]) -> list[str]:
    """The winner is usable and not flagged as losing; the loser is never a rule; the conflict is said:
    the loser is in negative context, or a block of either names the contradiction."""
    out = []
    for winner, loser in e.conflicts:
        w, lo = _id(ids, winner), _id(ids, loser)
        if w is None or lo is None:
            out.append(f"{winner}/{loser}: was never loaded")
            continue
        where = placements(packet)
        if not where.get(w, set()) & USABLE:
            out.append(f"{winner} (#{w}): the winning memory is not usable in the packet")
        if where.get(lo, set()) & RULE_SLOTS:
            out.append(f"{loser} (#{lo}): the losing side of a contradiction is presented as a rule")
        said = "negative" in where.get(lo, set()) or any(
            _flags_conflict(b) for _, b in blocks(packet) if int(b["memory_id"]) in (w, lo)
        )
        if not said:
            out.append(f"{winner}/{loser}: the packet does not flag the contradiction")
    return out


def check_supports(e: Expect, packet: dict, ids: dict[str, Loaded]) -> list[str]:
    """Each supporter is usable and its block says which fact it supports."""
    out = []
    for supporter, fact in e.supports:
        s, f = _id(ids, supporter), _id(ids, fact)
        shown = [b for slot, b in _usable_blocks(packet, s or -1)]
        if not shown:
            out.append(f"{supporter} (#{s}): the support of {fact} is missing from the usable slots")
        elif not any(b.get("supports") == f for b in shown):
            out.append(f"{supporter} (#{s}): in the packet, but not marked as supporting {fact} (#{f})")
    return out


# What the rule's block carries when this session's correction does not set it aside (recall/session.py).
HOLDS = {"binding": "binding_request", "rejected": "override_rejected", "pending": "pending_changes"}


def _members(value) -> list[dict]:
    return value if isinstance(value, list) else [value] if isinstance(value, dict) else []


def check_session(e: Expect, packet: dict, ids: dict[str, Loaded]) -> list[str]:
    """A session correction either sets the rule aside in this session (pinned in its place, labelled; the
    rule in negative context naming it) or the rule holds in force and its block says why."""
    out = []
    for fix, rule, how in e.session:
        f, r = _id(ids, fix), _id(ids, rule)
        rule_blocks = [b for s, b in blocks(packet) if s in RULE_SLOTS and int(b["memory_id"]) == r]
        if how == "overrides":
            pinned = [b for s, b in blocks(packet) if s in RULE_SLOTS and int(b["memory_id"]) == f]
            if not any(
                (b.get("session_override") or {}).get("replaces", {}).get("memory_id") == r for b in pinned
            ):
                out.append(f"{fix} (#{f}): not pinned as in force for this session in place of {rule} (#{r})")
            negs = [b for s, b in blocks(packet) if s == "negative" and int(b["memory_id"]) == r]
            if not any((b.get("set_aside") or {}).get("by", {}).get("memory_id") == f for b in negs):
                out.append(f"{rule} (#{r}): not listed as set aside for this session by {fix} (#{f})")
            if rule_blocks:
                out.append(f"{rule} (#{r}): still pinned although this session's correction sets it aside")
            continue
        field_name = HOLDS[how]
        if not any(m.get("memory_id") == f for b in rule_blocks for m in _members(b.get(field_name))):
            out.append(
                f"{rule} (#{r}): pinned without saying {how} for {fix} (#{f})"
                if rule_blocks
                else f"{rule} (#{r}): not pinned in force"
            )
        if any(int(b["memory_id"]) == f for s, b in blocks(packet) if s in RULE_SLOTS):
            out.append(f"{fix} (#{f}): pinned as in force although the rule holds ({how})")
    return out


def check_repeats(e: Expect, packet: dict, ids: dict[str, Loaded]) -> list[str]:
    """What the write of a repeated statement did (read from the stored rows: it is a write-path check)."""
    from governance.models import Memory

    out = []
    for repeat, original, decision in e.repeats:
        rid, oid = _id(ids, repeat), _id(ids, original)
        if rid is None or oid is None:
            out.append(f"{repeat}/{original}: never loaded")
            continue
        if decision == "reinforced" and rid != oid:
            out.append(f"{repeat} (#{rid}): stored again instead of reinforcing {original} (#{oid})")
        elif decision == "separate" and rid == oid:
            out.append(f"{repeat}: merged into {original} (#{oid}) although it is another statement or scope")
        elif decision == "proposed":
            rows = {m.pk: m for m in Memory.objects.filter(pk__in=(rid, oid))}
            new, old = rows.get(rid), rows.get(oid)
            if rid == oid or new is None or old is None:
                out.append(f"{repeat}: not stored as a proposal of its own")
            elif (new.status, new.key, new.revision) != ("proposed", old.key, old.revision + 1):
                out.append(
                    f"{repeat} (#{rid}): {new.status} {new.key} r{new.revision}, not the proposed next "
                    f"revision of {original} ({old.key} r{old.revision})"
                )
            elif any(int(b["memory_id"]) == rid for slot, b in blocks(packet) if slot in RULE_SLOTS):
                out.append(f"{repeat} (#{rid}): a proposal presented as a rule in force")
    return out


def check_disputes(e: Expect, packet: dict, ids: dict[str, Loaded]) -> list[str]:
    """A dispute nobody decided: both sides usable, each block marked in dispute with the other and naming
    the newer one; a memory that contradicts nothing is never marked."""
    out = []
    for newer, older in e.disputes:
        n, o = _id(ids, newer), _id(ids, older)
        for label, mid, other in ((newer, n, o), (older, o, n)):
            shown = [b for _, b in _usable_blocks(packet, mid or -1)]
            if not shown:
                out.append(f"{label} (#{mid}): not usable in the packet although only in dispute")
            elif not any(
                (b.get("in_dispute") or {}).get("newer") == n
                and ((b.get("in_dispute") or {}).get("with") or {}).get("memory_id") == other
                for b in shown
            ):
                out.append(f"{label} (#{mid}): not marked in dispute with #{other} (newer: #{n})")
    for label in e.undisputed:
        mid = _id(ids, label)
        if any(b.get("in_dispute") for _, b in blocks(packet) if int(b["memory_id"]) == mid):
            out.append(f"{label} (#{mid}): marked in dispute, but it contradicts nothing")
    return out


# Which checks judge which category. `absent` (nothing from another scope, nothing forgotten) judges all.
CATEGORY_CHECKS: dict[str, tuple[Check, ...]] = {
    "delayed_recall": (check_include, check_absent),
    "scope_boundary": (check_include, check_absent),
    "source_distinction": (check_include, check_slots, check_sources, check_proposals, check_absent),
    "revision": (check_include, check_negative, check_not_in_force, check_absent),
    "stale_suppression": (check_include, check_not_in_force, check_absent),
    "evidence_attribution": (check_include, check_sources, check_absent),
    "conflict_handling": (check_include, check_conflicts, check_absent),
    "temporal_commitment": (check_include, check_not_in_force, check_absent),
    # The episode itself is judged like a superseded memory: only in negative, naming what replaced it.
    "stale_episode": (check_include, check_negative, check_not_in_force, check_absent),
    "episode_correction": (check_include, check_negative, check_not_in_force, check_absent),
    "exact_term": (check_include, check_absent),
    "support_chain": (check_include, check_supports, check_absent),
    "correction_in_conversation": (
        check_include,
        check_slots,
        check_session,
        check_not_in_force,
        check_absent,
    ),
    "near_duplicate": (check_include, check_slots, check_proposals, check_repeats, check_absent),
    "unkeyed_contradiction": (
        check_include,
        check_disputes,
        check_negative,
        check_not_in_force,
        check_absent,
    ),
    "agent_only": (
        check_include,
        check_slots,
        check_negative,
        check_not_in_force,
        check_session,
        check_absent,
    ),
}


# The pipeline stage a category cannot be passed without (governance/recall/strategies.py): a strategy
# without it should fail the category; that is what makes the ablation table an ablation.
CATEGORY_NEEDS: dict[str, str] = {
    "delayed_recall": VECTOR,  # anything older than the last turns must be searched for
    "scope_boundary": VECTOR,
    "source_distinction": VECTOR,
    "revision": ADJUDICATE,  # supersedes → negative context naming the replacement
    "stale_suppression": VECTOR,  # superseded/retired/forgotten are filtered by status in every strategy
    "evidence_attribution": VECTOR,
    "conflict_handling": ADJUDICATE,  # contradicts → flagged, winner said
    "temporal_commitment": ACTIVATION,  # a short-term trace decays out of a later session
    # Provenance: the episode a superseded rule was learned from, or one a later episode replaced, is
    # still active itself; only reading its links (derived_from / source ref / supersedes) tells.
    "stale_episode": RELATIONS,
    "episode_correction": RELATIONS,
    "exact_term": LEXICAL,  # the exact identifier, in a log the vector path ranks below its near-duplicates
    # The review behind a rule shares no words with the question: only following `supports` finds it.
    "support_chain": RELATIONS,
    # This session's corrections of the pinned rules: read from the contradicts links (recall/session.py).
    "correction_in_conversation": RELATIONS,
    # The repeat is decided at write (services/near_duplicate.py); reading it back needs the vector path.
    # Its ablation is the write check turned off (MEMORY_NEAR_DUPLICATES=false), not a recall stage.
    "near_duplicate": VECTOR,
    # A dispute is marked, and a settled one's loser listed as no longer in force, by adjudication.
    "unkeyed_contradiction": ADJUDICATE,
    # The session's requirements and corrections, read from the user's relayed turns (recall/session.py).
    "agent_only": RELATIONS,
}


def score(task: EvalTask, packet: dict, ids: dict[str, Loaded]) -> Score:
    failures = [f for check in CATEGORY_CHECKS[task.category] for f in check(task.expect, packet, ids)]
    return Score(passed=not failures, failures=failures)


def constraint_retention(task: EvalTask, packet: dict, ids: dict[str, Loaded]) -> tuple[int, int]:
    """(retained, expected): rules in force that the packet keeps usable."""
    where = placements(packet)
    kept = sum(1 for label in task.expect.constraints if where.get(_id(ids, label) or -1, set()) & USABLE)
    return kept, len(task.expect.constraints)


def stale_used(task: EvalTask, packet: dict, ids: dict[str, Loaded]) -> bool | None:
    """Whether a memory no longer in force is presented as usable; None when the task has none."""
    if not task.expect.stale:
        return None
    where = placements(packet)
    return any(where.get(_id(ids, label) or -1, set()) & USABLE for label in task.expect.stale)
