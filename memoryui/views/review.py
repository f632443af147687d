"""Review queue: proposals, promotions with their supporting episodes, conflicts side by side; confirm or
reject one or many at once, with a reason and the four-eyes state."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from governance.errors import DomainError, InvalidInput
from governance.selectors import dashboard as sel
from governance.selectors.review import review_queue
from governance.services.memory import memory_confirm, memory_reject
from memoryui.views.base import dashboard_view, page, scope_query
from memoryui.views.memories import CONFIRM_IRREVERSIBLE, REASON_REQUIRED

QUEUE_PAGE = 60
NOTHING_SELECTED = "Select at least one item of the queue."
BAD_DECISION = "decision is confirm or reject."
BAD_ID = "Memory ids are whole numbers."


@dashboard_view()
def review(request):
    return _render(request)


def _render(request, error: DomainError | None = None, status: int = 200):
    # The oldest items first, a screenful at a time: deciding them brings the next ones up.
    items = review_queue(principal=request.principal, scope=request.scope, limit=QUEUE_PAGE)
    waiting = sel.overview_counts(request.principal, request.scope)["review_queue"] if len(items) == QUEUE_PAGE else len(items)
    groups = [(kind, label, [i for i in items if i.kind == kind]) for kind, label in (
        ("conflict", "Conflicts"), ("promotion", "Promotions"), ("proposal", "Proposals"))]
    return page(request, "dashboard/review.html", {
        "groups": groups, "count": len(items), "waiting": waiting, "can_act": any(i.can_confirm for i in items),
        "error": error, "nav": "review",
    }, status=status)


@require_POST
@dashboard_view()
def review_act(request):
    """Apply one decision to every selected item in one transaction: all of them or none."""
    decision = request.POST.get("decision", "")
    reason = request.POST.get("reason", "").strip()
    try:
        ids = _ids(request.POST.getlist("memory"))
        if decision not in ("confirm", "reject"):
            raise InvalidInput(BAD_DECISION, field="decision")
        if decision == "reject" and not reason:
            raise InvalidInput(REASON_REQUIRED, field="reason")
        if decision == "reject" and request.POST.get("irreversible") != "yes":
            raise InvalidInput(CONFIRM_IRREVERSIBLE, field="irreversible")
        service = memory_confirm if decision == "confirm" else memory_reject
        results = []
        with transaction.atomic():
            for memory_id in ids:
                try:
                    results.append(service(memory_id=memory_id, actor=request.principal, reason=reason))
                except DomainError as exc:
                    exc.message = f"Memory {memory_id}: {exc.message} Nothing was changed."
                    raise
    except DomainError as exc:
        return _render(request, error=exc, status=exc.status)
    if decision == "reject":
        messages.success(request, f"Rejected {len(ids)} item{'s' if len(ids) != 1 else ''}.")
    else:
        waiting = [m.pk for m in results if m.status != "active"]
        text = f"Confirmed {len(results) - len(waiting)} of {len(results)}."
        if waiting:
            text += f" Approval recorded, a second reviewer is needed for: {', '.join(map(str, waiting))}."
        messages.success(request, text)
    return redirect("/review/" + scope_query(request))


def _ids(raw: list[str]) -> list[int]:
    if not raw:
        raise InvalidInput(NOTHING_SELECTED, field="memory")
    try:
        return sorted({int(x) for x in raw})
    except ValueError as exc:
        raise InvalidInput(BAD_ID, field="memory") from exc
