"""Try a query: a packet assembled as the viewer for a typed query (ASK_CONTEXT on the scope, checked by the
recall through governance.permissions), never stored or reinforced, with the same stage-by-stage drops as a
stored turn's page; and "why not…?" for a memory of that packet, answered by the stored turns' why-not
(governance.recall.explain) for the packet assembled again as an unsaved turn."""

from __future__ import annotations

from django import forms
from django.utils import timezone
from django.views.decorators.http import require_POST

from governance.errors import DomainError
from governance.models import Turn
from governance.permissions import scope_by_path
from governance.redaction.masking import mask_packet
from governance.selectors import dashboard as sel
from memoryui.forms.turns import TryQueryForm, TryWhyNotForm
from memoryui.views.base import cleaned, dashboard_view, page
from memoryui.views.trace import named_funnel
from memoryui.views.turn_find import why_not_picks
from memoryui.views.turns import annotate, slot_view

ASKED_FIELDS = ("query", "try_scope", "budget", "strategy", "as_of")


def _asked(request, form: forms.Form) -> tuple[forms.Form, dict]:
    """(The valid form, the assemble_context arguments); a bad field is the form's 400, and an unknown
    scope and one the viewer may not see are the same 404 (permissions.scope_by_path)."""
    data = cleaned(form)
    args = {
        "scope": scope_by_path(request.principal, data["try_scope"]),
        "query": data["query"],
        "budget_tokens": data["budget"],
        "strategy": data["strategy"],
        "as_of": data["as_of"],
    }
    return form, args


def _assemble(request, args: dict) -> dict:
    from governance.recall import assemble_context

    return assemble_context(principal=request.principal, store=False, **args)


def dry_turn(request, args: dict, result: dict | None = None) -> Turn:
    """The query tried as an unsaved Turn (its packet and trace when assembled), so the stored turns'
    why-not answers for it: from its packet when the packet names the memory, else by following the
    same request through the stages again."""
    return Turn(
        scope=args["scope"],
        principal=request.principal,
        query=args["query"],
        strategy=args["strategy"],
        as_of=args["as_of"],
        request={"budget_tokens": args["budget_tokens"]},
        budget_limit=args["budget_tokens"],
        packet=(result or {}).get("packet") or {},
        trace=(result or {}).get("trace") or {},
        created_at=timezone.now(),
    )


@require_POST
@dashboard_view()
def turn_try(request):
    """The packet for the query typed here, stage by stage, every drop named; nothing stored."""
    try:
        form, args = _asked(request, TryQueryForm(request.POST))
        result = _assemble(request, args)
    except DomainError as exc:
        return page(request, "dashboard/turns/_try.html", {"error": exc}, status=exc.status)
    packet = result.get("packet", {})
    annotated = annotate(packet, request.principal)
    rows, _ = named_funnel(request.principal, result.get("trace", {}), annotated["skipped"])
    limit, used = result["budget"]["limit"], result["budget"]["used"]
    return page(
        request,
        "dashboard/turns/_try.html",
        {
            "asked": args,
            # The fields as typed, for the why-not form to ask again (hidden inputs).
            "asked_fields": {f: form.data.get(f, "") for f in ASKED_FIELDS},
            "try_why": True,
            "slots": slot_view(packet, request.principal),
            "skipped": annotated["skipped"],
            "funnel": rows,
            "budget": {
                "limit": limit,
                "used": used,
                "pct": round(100 * used / limit, 1) if limit else 0,
                "counter": result["budget"].get("counter", ""),
            },
        },
    )


@require_POST
@dashboard_view()
def turn_try_why_not(request):
    """`memory`: why the query tried left this memory out (or used it); `memory_q` (and `mode`): the
    memories to pick from, as the stored turns' picker finds them."""
    from governance.recall.explain import why_not

    context: dict = {"try_why": True}
    try:
        form, args = _asked(request, TryWhyNotForm(request.POST))
        data = form.cleaned_data
        context.update({"q": data["memory_q"], "mode": data["mode"]})
        if data["memory"] is not None:
            memory = sel.readable_memory(request.principal, data["memory"])
            turn = dry_turn(request, args, _assemble(request, args))
            masked, _ = mask_packet(turn.packet)
            context["answer"] = why_not(turn, memory, request.principal, masked)
        elif data["memory_q"].strip():
            context["choices"] = why_not_picks(
                request, dry_turn(request, args), data["memory_q"], data["mode"]
            )
            context["searched"] = True
    except DomainError as exc:
        return page(request, "dashboard/turns/_why_not.html", {"error": exc}, status=exc.status)
    return page(request, "dashboard/turns/_why_not.html", context)
