"""Finding turns and asking "why not this memory?" of one (the turn list's search; the turn page's
why-not panel). Reads go through governance.selectors.dashboard (turn_search); the answer through
governance.recall.explain."""

from __future__ import annotations

from django.urls import reverse

from governance.errors import DomainError
from governance.redaction.masking import mask_packet
from governance.runtime import cursor as codec
from governance.runtime import dates
from governance.selectors import dashboard as sel
from memoryui.forms.turns import TurnListForm, WhyNotQueryForm
from memoryui.views.base import cleaned, dashboard_view, page

BAD_DATE = dates.BAD_DATE
BAD_RANGE = dates.BAD_RANGE
BAD_CURSOR = codec.BAD_CURSOR


def _links(request, result: sel.TurnPage) -> dict:
    links = {}
    for name, key, value in (("prev", "after", result.newer), ("next", "before", result.older)):
        if value is not None:
            params = request.GET.copy()
            params.pop("before", None)
            params.pop("after", None)
            params[key] = sel.turn_cursor(value)
            links[name] = "?" + params.urlencode()
    return links


@dashboard_view()
def turn_list(request):
    """Turns, newest first, searched by words of the query, agent, session, date range, a memory used or
    skipped, and strategy; keyset pages (`before=`/`after=` a turn id)."""
    from governance.recall.strategies import DEFAULT_STRATEGY, STRATEGIES
    from memoryui.forms.turns import TRY_DEFAULT_BUDGET
    from memoryui.views.turns import ask_scopes

    form = TurnListForm(request.GET)
    data = cleaned(form)
    filters = form.filters()
    result = sel.turn_search(
        request.principal, request.scope, filters, before=data["before"], after=data["after"]
    )
    return page(
        request,
        "dashboard/turns/list.html",
        {
            "page_obj": result,
            "links": _links(request, result),
            "filters": filters,
            "session": filters.session,
            # what was typed, as typed, back in the search fields
            "from": form["from"].value() or "",
            "to": form["to"].value() or "",
            "memory_raw": form["memory"].value() or "",
            "agents": sel.turn_agents(request.principal, request.scope),
            "nav": "turns",
            "ask_scopes": ask_scopes(request),
            "turns_url": reverse("dashboard:turns"),
            "strategies": list(STRATEGIES),
            "default_strategy": DEFAULT_STRATEGY,
            "default_budget": TRY_DEFAULT_BUDGET,
        },
    )


@dashboard_view()
def turn_why_not(request, turn_id: int):
    """`?q=…&mode=words|meaning`: the picker's choices; `?memory=<id>`: the answer for that memory, from
    the stored trace or by replaying the turn (as the reader). An htmx request gets the partial only."""
    from governance.recall.explain import why_not

    turn = sel.turn_for_reader(request.principal, turn_id)
    query = cleaned(WhyNotQueryForm(request.GET))
    mode = query["mode"]
    context = {"turn": turn, "q": query["q"], "mode": mode, "nav": "turns"}
    memory_id = query["memory"]
    status = 200
    if memory_id is not None:
        memory = sel.readable_memory(request.principal, memory_id)
        masked, _ = mask_packet(turn.packet)
        try:
            context["answer"] = why_not(turn, memory, request.principal, masked)
        except DomainError as exc:  # the replay needs the right to ask for context there
            context["error"], status = exc, exc.status
    elif context["q"].strip():
        context["choices"] = why_not_picks(request, turn, context["q"], mode)
        context["searched"] = True
    template = "dashboard/turns/_why_not.html" if request.htmx else "dashboard/turns/why_not.html"
    return page(request, template, context, status=status)


def why_not_picks(request, turn, q: str, mode: str) -> list:
    """The picker's memories: by `#id` or words (the selector), or by meaning (the agents' vector search,
    governance.recall.meaning, over the reader's scopes; never a forgotten memory), of the turn's workspace
    (a stored turn's, or "Try a query"'s unsaved one)."""
    if mode != "meaning" or q.strip().lstrip("#").isdigit():
        return sel.why_not_choices(request.principal, turn, q)
    from governance.recall.meaning import memory_meaning

    found = memory_meaning(
        request.principal, None, sel.MemoryFilters(q=q, mode="meaning"), limit=2 * sel.WHY_NOT_CHOICES
    )
    return [m for m in found if m.scope.workspace_id == turn.scope.workspace_id][: sel.WHY_NOT_CHOICES]
