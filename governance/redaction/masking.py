"""The one masking of forgotten text on every read: stored turns (API and dashboard), review briefs and
summaries. A stored packet, trace or request may still hold the text of a memory forgotten since (a soft
forget keeps the text for owners; a hard forget's redaction worker may lag): what is read is masked from
today's status of the memories it cites, in the same request, never depending on propagation."""

from __future__ import annotations

import copy
from typing import Any

from governance.models import Memory, Status
from governance.redaction.redactor import Redactor

FORGOTTEN_TEXT = "(forgotten; the text is not shown)"
GONE = "deleted"  # a cited memory whose row no longer exists


def withheld(status: str | None) -> bool:
    """True when a memory in this status (or a deleted one) may not show its text to anyone."""
    return status in (Status.FORGOTTEN, GONE)


def masked_text(status: str | None, text: str) -> str:
    return FORGOTTEN_TEXT if withheld(status) else text


def memory_states(memory_ids: set[int]) -> dict[int, dict]:
    """Today's status (and content hash) of the cited memories, one query."""
    return {
        row["pk"]: row
        for row in Memory.objects.filter(pk__in=memory_ids).values(
            "pk", "status", "purged_at", "scope_id", "content_hash"
        )
    }


def cited_ids(value: Any) -> set[int]:
    """Every memory id a stored packet names, nested members (replaced_by, contradicted) included."""
    ids: set[int] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("memory_id", "contradicts") and isinstance(v, int) and not isinstance(v, bool):
                    ids.add(v)
                elif isinstance(v, dict | list):
                    stack.append(v)
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, dict | list))
    return ids


def masker(states: dict[int, dict], ids: set[int]) -> Redactor:
    """A Redactor that writes FORGOTTEN_TEXT over the content of every withheld memory among `ids` (a
    block or nested member naming it) and over any string equal to such a memory's text."""
    gone = {i for i in ids if withheld((states.get(i) or {}).get("status", GONE))}
    hashes = {states[i]["content_hash"] for i in gone if i in states and states[i]["content_hash"]}
    return Redactor(gone, hashes, replacement=FORGOTTEN_TEXT)


def mask_packet(packet: dict, states: dict[int, dict] | None = None) -> tuple[dict, bool]:
    """(A masked copy of a stored packet, whether anything was masked)."""
    packet = copy.deepcopy(packet or {})
    ids = cited_ids(packet)
    if not ids:
        return packet, False
    states = memory_states(ids) if states is None else states
    return masker(states, ids).redact(packet)  # type: ignore[return-value]


def mask_turn(turn):
    """A copy of a stored Turn whose packet, trace, request, query and text show no forgotten text (the text is
    rendered again from the masked packet when anything was masked)."""
    from governance.redaction.render import render_packet_text

    ids = cited_ids(turn.packet)
    out = copy.copy(turn)
    if not ids:
        return out
    redactor = masker(memory_states(ids), ids)
    out.packet, changed = redactor.redact(copy.deepcopy(turn.packet))
    out.trace, _ = redactor.redact(copy.deepcopy(turn.trace))
    out.request, _ = redactor.redact(copy.deepcopy(turn.request))
    out.query, _ = redactor.redact(turn.query)
    if changed:
        out.text = render_packet_text(out.packet)
    return out
