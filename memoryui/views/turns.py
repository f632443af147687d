"""Turns: the stored context packets, one turn by slot, its diff with the previous turn, and a replay."""

from __future__ import annotations

from django.views.decorators.http import require_POST

from governance.errors import DomainError
from governance.models import Scope
from governance.permissions import Action
from governance.redaction.masking import FORGOTTEN_TEXT, GONE, cited_ids, mask_packet, masker
from governance.selectors import dashboard as sel
from memoryui.forms.turns import TRY_BAD_AS_OF, TRY_BAD_BUDGET, TRY_DEFAULT_BUDGET
from memoryui.views.base import dashboard_view, page
from memoryui.views.trace import funnel, left_out, named_funnel
from memoryui.views.trace import stages as _stages

SLOTS = [
    ("task", "Current task"),
    ("constraints", "Constraints in force"),
    ("recent", "Recent interaction"),
    ("evidence", "Evidence"),
    ("preferences", "Preferences"),
    ("relations", "Relations"),
    ("external", "External evidence"),
    ("negative", "Negative context (no longer in force)"),
]
REPLAY_UNAVAILABLE = (
    "Replay needs the recall pipeline (governance.recall), which is not installed in this build."
)
__all__ = [
    "FORGOTTEN_TEXT",
    "TRY_BAD_AS_OF",
    "TRY_BAD_BUDGET",
    "TRY_DEFAULT_BUDGET",
    "annotate",
    "diff",
    "funnel",
]


def _blocks(packet: dict, slot: str) -> list[dict]:
    value = (packet or {}).get(slot) or []
    return [b for b in value if isinstance(b, dict)] if isinstance(value, list) else []


def _block_key(block: dict) -> str:
    return f"m{block['memory_id']}" if block.get("memory_id") else f"t{hash(block.get('text', ''))}"


def annotate(packet: dict, principal=None) -> dict:
    """The packet's slots, each block with today's status of its memory; a forgotten memory's text is
    withheld (governance.redaction.masking, the same masking as the API) even though the stored packet may still hold it
    (a soft forget keeps it; the redaction worker of a hard forget may lag)."""
    packet = packet if isinstance(packet, dict) else {}
    states = sel.memory_states(cited_ids(packet))
    masked, _ = mask_packet(packet, states)
    # Each block's scope path for its label, only where the viewer may read that scope.
    paths = sel.readable_scope_paths(principal, {s["scope_id"] for s in states.values()})
    out = {}
    for slot, _ in [*SLOTS, ("skipped", "")]:
        rows = []
        for block in _blocks(masked, slot):
            state = states.get(block.get("memory_id"))
            now = state["status"] if state else ("" if not block.get("memory_id") else GONE)
            path = paths.get(state["scope_id"], "") if state else ""
            rows.append(
                {
                    **block,
                    "status_now": now,
                    "changed": bool(now) and now != block.get("status"),
                    "scope_path": path,
                }
            )
        out[slot] = rows
    return out


def diff(old: dict | None, new: dict) -> list[dict]:
    """Per slot: which blocks came in, which went out, how many stayed (matched by memory id)."""
    rows = []
    for slot, label in SLOTS:
        before = {_block_key(b): b for b in _blocks(old or {}, slot)}
        after = {_block_key(b): b for b in _blocks(new, slot)}
        added = [after[k] for k in after if k not in before]
        removed = [before[k] for k in before if k not in after]
        if added or removed or before or after:
            rows.append(
                {
                    "slot": slot,
                    "label": label,
                    "added": added,
                    "removed": removed,
                    "kept": len(set(after) & set(before)),
                }
            )
    return rows


def slot_view(packet: dict, principal=None) -> list[dict]:
    annotated = annotate(packet, principal)
    return [{"slot": s, "label": label, "blocks": annotated[s]} for s, label in SLOTS]


def ask_scopes(request) -> list[Scope]:
    """Scopes where the viewer may ask for context (permissions decide): the "try a query" choices."""
    roles = sel.MyRoles.of(request.principal)
    scopes = sel.governed_scopes_within(request.principal, request.scope).order_by("path")
    return [s for s in scopes if roles.can(s, Action.ASK_CONTEXT)]


def _budget(turn) -> dict:
    limit = turn.budget_limit or (turn.packet or {}).get("budget", {}).get("limit", 0) or 0
    used = turn.budget_used or (turn.packet or {}).get("budget", {}).get("used", 0) or 0
    return {
        "limit": limit,
        "used": used,
        "pct": round(100 * used / limit, 1) if limit else 0,
        "counter": turn.token_counter,
    }


@dashboard_view()
def turn_detail(request, turn_id: int):
    turn = sel.turn_for_reader(request.principal, turn_id)
    previous = sel.previous_turn(turn)
    annotated = annotate(turn.packet, request.principal)
    ids = cited_ids(turn.packet)
    if (
        ids
    ):  # the query too, when it is the text of a memory forgotten since (governance.redaction.masking's rule)
        turn.query, _ = masker(sel.memory_states(ids), ids).redact(turn.query)
    rows, labels = named_funnel(request.principal, turn.trace, annotated["skipped"])
    # The skipped list as the drops are shown: a memory outside the reader's grants only counted.
    skipped = [b for b in annotated["skipped"] if b.get("memory_id") is None or b["memory_id"] in labels]
    return page(
        request,
        "dashboard/turns/detail.html",
        {
            "turn": turn,
            "slots": [{"slot": s, "label": label, "blocks": annotated[s]} for s, label in SLOTS],
            "skipped": skipped,
            "skipped_hidden": len(annotated["skipped"]) - len(skipped),
            "budget": _budget(turn),
            "stages": _stages(turn.trace),
            "funnel": rows,
            "left_out": left_out(rows),
            "previous": previous,
            "diff": diff(annotate(previous.packet, request.principal), annotated) if previous else [],
            "nav": "turns",
        },
    )


@require_POST
@dashboard_view()
def turn_replay(request, turn_id: int):
    """Assemble the same request against today's memory, as the viewer (their grants apply), unstored."""
    turn = sel.turn_for_reader(request.principal, turn_id)
    context = {"turn": turn}
    try:
        from governance.recall import assemble_context
    except ImportError:
        context["error"] = REPLAY_UNAVAILABLE
        return page(request, "dashboard/turns/_replay.html", context, status=503)
    req = turn.request or {}
    try:
        result = assemble_context(
            principal=request.principal,
            scope=turn.scope,
            query=turn.query,
            budget_tokens=int(req.get("budget_tokens") or turn.budget_limit or 2000),
            strategy=turn.strategy or "full",
            task=req.get("task"),
            session=turn.session,
            store=False,
        )
    except DomainError as exc:
        context["error"] = exc.message
        return page(request, "dashboard/turns/_replay.html", context, status=exc.status)
    packet = result.get("packet", {})
    annotated = annotate(packet, request.principal)
    context.update(
        {
            "diff": diff(annotate(turn.packet, request.principal), annotated),
            "slots": slot_view(packet, request.principal),
            "budget": result.get("budget", {}),
            "trace": _stages(result.get("trace", {})),
            "funnel": named_funnel(request.principal, result.get("trace", {}), annotated["skipped"])[0],
        }
    )
    return page(request, "dashboard/turns/_replay.html", context)
