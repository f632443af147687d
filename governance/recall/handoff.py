"""The packet's `handoff` slot (asked for with `include: ["handoff"]`): the task scope's six-section hand-off
(governance/summaries/builder.py, the selector the dashboard's summary uses), read for this caller (only
the scopes its packet may see) and packed like any slot: each line a block, within the token budget, what
does not fit listed in `skipped`. A line's block carries the one memory whose text it holds (`memory_id`)
and every id it cites (`memory_ids`), its section and what it is (`nature`: fact, guess, proposal,
authorisation, request, pending, void); a corrected requirement carries what replaced it as a member of its
own id, so forgetting either redacts exactly its text in the stored turn."""

from __future__ import annotations

from governance.recall.state import RecallState
from governance.summaries.builder import SECTION_TITLES, SECTIONS, build_lines

INCLUDES = ("handoff",)
BAD_INCLUDE = f"include is a list of: {', '.join(INCLUDES)}."


def handoff_blocks(state: RecallState) -> list[dict]:
    # A replay (`as_of`) reads the hand-off as it stood then, as the other slots read only what was said by then.
    lines = build_lines(state.scope, scope_ids=tuple(state.eligibility.scope_ids), as_of=state.as_of)
    order = {s: n for n, s in enumerate(SECTIONS)}
    blocks = []
    for line in sorted(lines, key=lambda item: order.get(item.section, len(order))):
        # The text is only the first cited memory's own (a line citing several holds none of their texts).
        own = line.memory_ids[0] if len(line.memory_ids) == 1 or line.replaced_by else None
        block = {
            "memory_id": own,
            "memory_ids": list(line.memory_ids),
            "kind": "handoff",
            "key": None,
            "revision": None,
            "status": "active",
            "text": line.text,
            "source": {"kind": "summary", "ref": state.scope.path},
            "score": 1.0,
            "reason": f"hand-off: {SECTION_TITLES[line.section]}",
            "section": line.section,
            "nature": line.nature,
        }
        if line.replaced_by:
            block["replaced_by"] = dict(line.replaced_by)
        blocks.append(block)
    return blocks


def handoff_stage(state: RecallState) -> tuple[int, int]:
    state.handoff = handoff_blocks(state)
    return 1, len(state.handoff)
