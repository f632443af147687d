"""Stage 5, pack: put blocks into the packet's slots within the token budget.

Pinned blocks (the current task, the constraints in force — the scope's rules and this session's
requirements — and tool calls still waiting for their result) go first; if they alone do not fit, the
request fails with PinnedOverBudget — never a silent cut. Then the user's latest turn, then the optional
slots by priority (negative context, preferences, recent rounds, evidence, relations, external evidence),
each slot first within its share of what is left (SHARES), so a flood of logs in one slot costs that slot,
never the user's words or the evidence; what a slot leaves unused goes to the others in a second round.
Every block goes whole or not at all; a tool call and its result form one unit; a long tool result or reply
goes as a digest with a locator (recall/digest.py). What did not fit is listed in `skipped`. The final count
is made on the rendered text itself, so `used` is exact."""

from __future__ import annotations

from governance.errors import PinnedOverBudget
from governance.models import Kind, SourceKind, Status
from governance.recall.digest import digest
from governance.recall.state import Hit, RecallState
from governance.recall.tokens import count_tokens
from governance.redaction.render import render_block, render_packet_text, slot_header

# What a request without `budget_tokens` gets (docs/api.md): room for the rules, the session's
# requirements, a few rounds and the best evidence.
DEFAULT_BUDGET_TOKENS = 2000
# The hand-off (only when the request asks for it) goes first among the optional slots: it was asked for.
OPTIONAL_ORDER = ("handoff", "negative", "preferences", "recent", "evidence", "relations", "external")
# The share of what is left after the pinned blocks and the user's latest turn that each optional slot
# takes before the others have had theirs (evidence: whatever remains). A slot may take more in the second
# round, from what the others left.
SHARES = {
    "handoff": 0.25,
    "negative": 0.15,
    "preferences": 0.10,
    "recent": 0.35,
    "evidence": 1.0,
    "relations": 0.05,
    "external": 0.10,
}
# A tool's result or an assistant's reply longer than this goes in as a digest (recall/digest.py); the
# user's own words only past USER_DIGEST_CHARS (a pasted document), so their request is read whole.
DIGEST_CHARS = 320
USER_DIGEST_CHARS = 2400
PINNED_REASON = "pinned: {why}"
LATEST_REASON = "the user's latest turn"
REPEATING = ("relations", "handoff")
# Who said what a block holds, by the memory's source (docs/api.md, "said_by").
SAID_BY = {
    SourceKind.USER: "user",
    SourceKind.ASSISTANT: "assistant",
    SourceKind.TOOL_RESULT: "tool",
    SourceKind.REVIEWER: "person",
    SourceKind.EXTERNAL_DOCUMENT: "document",
    SourceKind.MODEL_INFERENCE: "model",
    SourceKind.SUMMARY: "summary",
}


def unconfirmed(row: dict) -> bool:
    """An active rule-like memory nobody with the confirm right has confirmed (an agent wrote it): it is
    shown as unconfirmed, never as a fact in force. Plain episodes are evidence whoever wrote them."""
    plain_episode = row.get("key") is None and row.get("kind") in (Kind.EPISODIC, Kind.WORKING)
    return row.get("status") == Status.ACTIVE and row.get("confirmed") is False and not plain_episode


def block(hit: Hit, slot: str, reason: str) -> dict:
    row = hit.row
    out = {
        "memory_id": hit.id,
        "kind": row["kind"],
        "key": row["key"],
        "revision": row["revision"],
        "status": row["status"],
        "text": row["text"],
        "source": {"kind": row["source_kind"], "ref": row["source_ref"]},
        "score": round(hit.score, 6),
        "reason": reason,
    }
    role = (row.get("meta") or {}).get("role")
    if role:
        out["role"] = role
    said_by = "tool" if role == "tool_call" else SAID_BY.get(row.get("source_kind"))
    if said_by:
        out["said_by"] = said_by
    if row.get("speaker"):
        out["speaker"] = row["speaker"]
    if row.get("call_id"):
        out["call_id"] = row["call_id"]
    if row.get("session"):
        out["session"] = row["session"]
    if unconfirmed(row):
        out["unconfirmed"] = True
    if hit.flags:
        out["flags"] = list(hit.flags)
    out.update({k: v for k, v in hit.extra.items() if k in BLOCK_EXTRAS})
    if (out.get("outdated") or {}).get("status") == Status.FORGOTTEN:
        out["text"] = ""  # a message whose ask was forgotten is named by id, never quoted
    return out


# What the stages note on a hit that its block carries (recall/adjudicate.py, recall/session.py).
BLOCK_EXTRAS = (
    "replaced_by",
    "supported_by",
    "supports",
    "outdated",
    "session_override",
    "set_aside",
    "binding_request",
    "override_rejected",
    "pending_changes",
    "pending_more",
    "in_dispute",
    "session_requirement",
    "replaced_in_session",
    "part_of",
)


def _evidence_reason(hit: Hit) -> str:
    paths = ", ".join(sorted(hit.paths)) or "search"
    reason = f"matched by {paths}"
    if hit.row["status"] != Status.ACTIVE:
        reason += f"; {hit.row['status']}: not confirmed, shown as unconfirmed"
    elif unconfirmed(hit.row):
        reason += "; active but not confirmed by a person with the confirm right: shown as unconfirmed"
    return reason


def _negative_reason(hit: Hit) -> str:
    outdated = hit.extra.get("outdated")
    if hit.extra.get("set_aside"):
        return f"no longer in force for this session: {hit.extra['set_aside']['why']}"
    return f"outdated: {outdated['why']}" if outdated else "superseded: no longer in force"


def _is_external(hit: Hit) -> bool:
    return hit.row["kind"] == Kind.EXTERNAL or hit.row["source_kind"] == SourceKind.EXTERNAL_DOCUMENT


class Packer:
    def __init__(self, limit: int, *, handoff: bool = False):
        self.limit = limit
        self.used = 0
        self.packet: dict[str, list[dict]] = {
            name: []
            for name in (
                "task",
                "constraints",
                "recent",
                "evidence",
                "preferences",
                "relations",
                "external",
                "negative",
            )
        }
        if handoff:
            self.packet["handoff"] = []
        self.skipped: list[dict] = []
        self.placed: set[int] = set()
        self.slot_used: dict[str, int] = {}

    def cost(self, unit: list[tuple[str, dict]]) -> int:
        new_slots = {slot for slot, _ in unit if not self.packet[slot]}
        return sum(count_tokens(render_block(slot, b)) + 1 for slot, b in unit) + sum(
            count_tokens(slot_header(s)) + 1 for s in new_slots
        )

    def _fresh(self, unit: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
        # A memory appears once; relation blocks describe links between memories and hand-off lines summarise
        # them: those may repeat an id.
        return [
            (s, b)
            for s, b in unit
            if s in REPEATING
            or b.get("memory_id") is None
            or b["memory_id"] not in self.placed
            # a requirement partly replaced: the part in force is pinned, the part taken set aside
            or b.get("part_of")
        ]

    def add(
        self, unit: list[tuple[str, dict]], *, pinned: bool = False, cap: int | None = None
    ) -> bool | None:
        """Place a unit whole. False (and listed in `skipped`) when it does not fit the budget; None, listed
        nowhere, when it fits the budget but not its slot's share `cap` (offered again in the second round)."""
        unit = self._fresh(unit)
        if not unit:
            return True
        cost = self.cost(unit)
        if not pinned and self.used + cost > self.limit:
            self.skip(unit)
            return False
        slot = unit[0][0]
        if not pinned and cap is not None and self.slot_used.get(slot, 0) + cost > cap:
            return None
        for slot_name, b in unit:
            self.packet[slot_name].append(b)
            if b.get("memory_id") is not None and slot_name not in REPEATING:
                self.placed.add(b["memory_id"])
        self.used += cost
        self.slot_used[slot] = self.slot_used.get(slot, 0) + cost
        return True

    def skip(self, unit: list[tuple[str, dict]]) -> None:
        listed = {(x.get("memory_id"), x["slot"]) for x in self.skipped}
        for slot, b in unit:
            # A unit can be offered again (a call and its result are tried as a pair for each of them); a
            # memory left out of a slot is listed once.
            if b.get("memory_id") is None or (b["memory_id"], slot) not in listed:
                self.skipped.append(
                    {
                        **b,
                        "slot": slot,
                        "tokens": count_tokens(render_block(slot, b)),
                        "reason": "did not fit the token budget",
                        "stage": "pack",
                    }
                )


def _task_block(task: dict | None) -> dict | None:
    if not task:
        return None
    parts = [f"Goal: {task.get('goal', '')}".strip()]
    if task.get("state"):
        parts.append(f"State: {task['state']}")
    return {
        "memory_id": None,
        "kind": "task",
        "key": None,
        "revision": None,
        "status": "active",
        "text": " | ".join(parts),
        "source": {"kind": "request", "ref": ""},
        "score": 1.0,
        "reason": PINNED_REASON.format(why="the current task"),
    }


def _digested(b: dict, query: str) -> dict:
    """A long tool result or reply as its digest, with where the whole text is (the memory, call, turn)."""
    said_by = b.get("said_by")
    limit = USER_DIGEST_CHARS if said_by == "user" else DIGEST_CHARS
    if said_by not in ("tool", "assistant", "user") or b.get("memory_id") is None:
        return b
    short = digest(b.get("text") or "", limit, query)
    if short is None:
        return b
    locator = {"memory_id": b["memory_id"], "chars": len(b["text"])}
    if b.get("call_id"):
        locator["call_id"] = b["call_id"]
    if (b.get("source") or {}).get("ref"):
        locator["turn"] = b["source"]["ref"]
    return {**b, "text": short, "digest": locator}


def _units(
    hits: list[Hit], slot: str, reason_of, by_call: dict[str, list[Hit]], query: str = ""
) -> list[list[tuple[str, dict]]]:
    """Blocks as packing units: a hit with a call_id brings every turn of that call into the same unit."""
    units = []
    for hit in hits:
        members = by_call.get(hit.row.get("call_id") or "", [hit]) if hit.row.get("call_id") else [hit]
        units.append([(slot, _digested(block(m, slot, reason_of(m)), query)) for m in members])
    return units


def _latest_user_turn(state: RecallState) -> Hit | None:
    """The user's newest turn of this session (what the agent is answering now), if the recent slot has it."""
    if not state.session:
        return None
    for hit in reversed(state.recent):
        if hit.row.get("source_kind") == SourceKind.USER and not hit.row.get("call_id"):
            return hit
    return None


def pack(state: RecallState, limit: int) -> tuple[dict, int]:
    """Fill the slots; returns (packet, used tokens). Raises PinnedOverBudget."""
    p = Packer(limit, handoff=state.handoff is not None)
    pool = {h.id: h for h in list(state.hits.values()) + state.recent}
    by_call: dict[str, list[Hit]] = {}
    for hit in sorted(
        pool.values(), key=lambda h: (h.row.get("occurred_at") is None, h.row.get("occurred_at"), h.id)
    ):
        if hit.row.get("call_id"):
            by_call.setdefault(hit.row["call_id"], []).append(hit)

    task = _task_block(state.task)
    if task:
        p.add([("task", task)], pinned=True)
    for hit in state.constraints:
        why = hit.extra.get(
            "pinned_why", "a constraint in force"
        )  # a session's requirement says so (session.py)
        p.add([("constraints", block(hit, "constraints", PINNED_REASON.format(why=why)))], pinned=True)
    recent_ids = {h.id for h in state.recent}
    pending = [hs for hs in by_call.values() if _is_pending(hs, state.session, recent_ids)]
    for hs in pending:
        p.add(
            [
                (
                    "recent",
                    _digested(
                        block(h, "recent", PINNED_REASON.format(why="a tool call waiting for its result")),
                        state.query,
                    ),
                )
                for h in hs
            ],
            pinned=True,
        )
    if p.used > limit:
        raise PinnedOverBudget(needed=p.used, budget=limit)

    latest = _latest_user_turn(state)
    if latest is not None:
        p.add([("recent", _digested(block(latest, "recent", LATEST_REASON), state.query))])
    evidence = [h for h in state.evidence if h.id not in recent_ids]
    external = [h for h in evidence if _is_external(h)]
    evidence = [h for h in evidence if not _is_external(h)][: state.k]
    # The recent rounds: the user's turns first (newest first), then what answered them (newest first).
    recent = list(reversed(state.recent))
    recent = [
        h for h in recent if h.row.get("source_kind") == SourceKind.USER and not h.row.get("call_id")
    ] + [h for h in recent if not (h.row.get("source_kind") == SourceKind.USER and not h.row.get("call_id"))]
    optional = {
        "handoff": [[("handoff", b)] for b in state.handoff or []],
        "negative": _units(state.negative, "negative", _negative_reason, {}),
        "preferences": _units(
            state.preferences, "preferences", lambda h: h.extra.get("pinned_why", "a preference in force"), {}
        ),
        "recent": _units(recent, "recent", lambda h: "recent turn", by_call, state.query),
        "evidence": _units(evidence, "evidence", _evidence_reason, by_call, state.query),
        "relations": [[("relations", rel)] for rel in state.relations],
        "external": _units(external[: state.k], "external", _evidence_reason, by_call, state.query),
    }
    left = max(limit - p.used, 0)
    waiting: list[list[tuple[str, dict]]] = []
    for slot in OPTIONAL_ORDER:
        cap = int(left * SHARES[slot])
        for unit in optional.get(slot, []):
            if p.add(unit, cap=cap) is None:
                waiting.append(unit)
    for unit in waiting:  # the second round: what the slots left, in the same order
        p.add(unit)
    # Recent turns read in order; the packer took them newest first.
    p.packet["recent"].sort(key=lambda b: _order_key(pool, b))
    stages = state.dropped_by + [""] * (len(state.dropped) - len(state.dropped_by))
    for (hit, slot, reason), stage in zip(state.dropped, stages, strict=True):
        p.skipped.append({**block(hit, slot, reason), "slot": slot, **({"stage": stage} if stage else {})})
    packet = {**p.packet, "skipped": p.skipped}
    used = count_tokens(render_packet_text(packet))
    # Token merges across line breaks can make the exact count differ from the sum; trim optional blocks.
    while used > limit and _drop_last_optional(packet):
        used = count_tokens(render_packet_text(packet))
    return packet, used


def _order_key(pool: dict[int, Hit], b: dict):
    hit = pool.get(b.get("memory_id"))
    at = hit.row.get("occurred_at") if hit else None
    return (at is None, at, b.get("memory_id") or 0)


def _is_pending(hits: list[Hit], session: str, recent_ids: set[int]) -> bool:
    """A call of this conversation (this session, or the latest turns when no session is named) whose
    result has not been recorded yet."""
    roles = {(h.row.get("meta") or {}).get("role") for h in hits}
    if session:
        in_session = any(h.row.get("session") == session for h in hits)
    else:
        in_session = any(h.id in recent_ids for h in hits)
    return in_session and "tool_call" in roles and "tool_result" not in roles


def _drop_last_optional(packet: dict) -> bool:
    for slot in reversed(OPTIONAL_ORDER):
        blocks = packet.get(slot) or []
        for i in range(len(blocks) - 1, -1, -1):
            if "pinned" not in blocks[i].get("reason", ""):
                b = blocks.pop(i)
                gone = [b]
                if b.get("call_id"):  # the other half of a call/result pair leaves with it
                    gone += [x for x in blocks if x.get("call_id") == b["call_id"]]
                    blocks[:] = [x for x in blocks if x.get("call_id") != b["call_id"]]
                packet["skipped"].extend(
                    {**g, "slot": slot, "reason": "did not fit the token budget", "stage": "pack"}
                    for g in gone
                )
                return True
    return False
