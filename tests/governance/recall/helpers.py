from __future__ import annotations

from governance.redaction.render import SLOT_NAMES


def packet_ids(result: dict, slots=SLOT_NAMES + ("skipped",)) -> set[int]:
    return {b["memory_id"] for slot in slots for b in result["packet"].get(slot, []) if b.get("memory_id")}


def slot_ids(result: dict, slot: str) -> list[int]:
    return [b["memory_id"] for b in result["packet"][slot]]
