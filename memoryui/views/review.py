"""Review queue: proposals, promotions with their supporting episodes, conflicts side by side, each with
where it came from, who proposed it and why, and the similar memories already in force. Each item is
confirmed, edited then confirmed, or rejected with its own reason; selected items are decided together
in one transaction with one reason. Filters (scope, kind, proposer, age), oldest/newest first, and
keyset paging on (created_at, id). static/js/review.js adds keyboard use and in-place decisions; every
control is a real form that works without it."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from governance.errors import DomainError, NotFound
from governance.models import Kind, Memory, Status
from governance.permissions import memory_for_reader
from governance.recall import recall_memories
from governance.recall.packet import MAX_QUERY_CHARS
from governance.selectors.disputes import DECIDERS, QUEUE_SHOWN, dispute_queue, dispute_queue_queryset
from governance.selectors.disputes import encode_cursor as encode_dispute_cursor
from governance.selectors.review import (
    AGES,
    QueueFilter,
    encode_cursor,
    queue_proposers,
    queue_queryset,
    review_queue,
)
from governance.services.memory import memory_reject
from governance.services.review import (
    memory_repropose,
    proposal_confirm,
    proposal_edit_confirm,
    with_revisions,
)
from memoryui.forms.focus import FocusForm
from memoryui.forms.review import (  # noqa: F401  (the messages tests reuse, where they were)
    BAD_DECISION,
    BAD_ID,
    BAD_ITEM_DECISION,
    FILTER_PARAMS,
    NOTHING_SELECTED,
    QueueBackForm,
    ReviewActForm,
    ReviewDecideForm,
    ReviewQueueForm,
)
from memoryui.labels import label_of
from memoryui.views.awaiting import awaiting_for, awaiting_sentence
from memoryui.views.base import cleaned, dashboard_view, page, scope_query

QUEUE_PAGE = 60
SIMILAR_SHOWN = 3
# Recall is asked for more than it shows: proposals and candidates it also finds are left out.
SIMILAR_ASKED = 12


@dashboard_view()
def review(request):
    return render_queue(request)


def render_queue(request, error: DomainError | None = None, status: int = 200):
    try:
        query = cleaned(ReviewQueueForm(request.GET))
        filters = query["filters"]
    except DomainError as exc:
        query, filters, error, status = {}, QueueFilter(), exc, exc.status
    items = review_queue(
        principal=request.principal, scope=request.scope, limit=QUEUE_PAGE + 1, filters=filters
    )
    more = len(items) > QUEUE_PAGE
    items = with_revisions(items[:QUEUE_PAGE])
    waiting = queue_queryset(principal=request.principal, scope=request.scope, filters=filters).count()
    params = {k: query[k] for k in FILTER_PARAMS if query.get(k)}
    # The disputes page on their own cursor: each list's links keep the other list's page.
    disputes = dispute_queue(
        principal=request.principal, scope=request.scope, limit=QUEUE_SHOWN + 1, filters=filters
    )
    more_disputes = len(disputes) > QUEUE_SHOWN
    disputes = disputes[:QUEUE_SHOWN]
    on_page = {
        "after": query["after"] if filters.after is not None else "",
        "disputes_after": query["disputes_after"] if filters.disputes_after is not None else "",
    }
    disputes_waiting = dispute_queue_queryset(
        principal=request.principal, scope=request.scope, filters=filters
    ).count()
    awaiting = awaiting_for(request, request.scope, filters)
    links = {}
    if more:
        links["next"] = "?" + _qs({**params, **on_page, "after": encode_cursor(items[-1].memory)})
    if filters.after is not None:
        links["first"] = "?" + _qs({**params, **on_page, "after": ""})
    if more_disputes:
        last = encode_dispute_cursor(disputes[-1].dispute)
        links["disputes_next"] = "?" + _qs({**params, **on_page, "disputes_after": last})
    if filters.disputes_after is not None:
        links["disputes_first"] = "?" + _qs({**params, **on_page, "disputes_after": ""})
    return page(
        request,
        "dashboard/review.html",
        {
            "items": items,
            "count": len(items),
            "waiting": waiting,
            # What of it this person may decide, in words, for the heading (the menu's badge reads the same).
            "awaiting": awaiting,
            "awaiting_sentence": awaiting_sentence(awaiting, waiting + disputes_waiting),
            "can_act": any(i.can_confirm for i in items),
            "error": error,
            "nav": "review",
            "filters": filters,
            "kinds": Kind.choices,
            "ages": list(AGES),
            "proposers": queue_proposers(principal=request.principal, scope=request.scope),
            "links": links,
            "filtered": any(query.get(k) for k in FILTER_PARAMS if k != "scope"),
            "back": request.GET.urlencode(),
            # Contradictions the system proposed between two unkeyed memories, beside the proposals.
            "disputes": disputes,
            "disputes_waiting": disputes_waiting,
            "deciders": DECIDERS,
        },
        status=status,
    )


def _qs(params: dict) -> str:
    from urllib.parse import urlencode

    return urlencode({k: v for k, v in params.items() if v})


def queue_back(request: HttpRequest) -> str:
    """Where a decision returns to without JavaScript: the queue with the filters it was made under."""
    back = cleaned(QueueBackForm(request.POST))["back"]
    return reverse("dashboard:review") + ("?" + back if back else scope_query(request))


def wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@require_POST
@dashboard_view()
def review_act(request):
    """Apply one decision to every selected item in one transaction: all of them or none."""
    try:
        data = cleaned(ReviewActForm(request.POST))
        decision, reason, ids = data["decision"], data["reason"], data["memory"]
        service = proposal_confirm if decision == "confirm" else memory_reject
        results = []
        with transaction.atomic():
            for memory_id in ids:
                try:
                    results.append(service(memory_id=memory_id, actor=request.principal, reason=reason))
                except DomainError as exc:
                    exc.message = f"Memory {memory_id}: {exc.message} Nothing was changed."
                    raise
    except DomainError as exc:
        return render_queue(request, error=exc, status=exc.status)
    if decision == "reject":
        messages.success(request, f"Rejected {len(ids)} item{'s' if len(ids) != 1 else ''}.")
    else:
        waiting = [m.pk for m in results if m.four_eyes_pending is not None]
        text = f"Confirmed {len(results) - len(waiting)} of {len(results)}."
        if waiting:
            text += f" Approval recorded, a second reviewer is needed for: {', '.join(map(str, waiting))}."
        messages.success(request, text)
    return redirect(queue_back(request))


@require_POST
@dashboard_view(json=True)
def review_decide(request, memory_id: int):
    """One item: confirm (an optional reason), reject (a reason), edit then confirm (the edited text,
    key and kind, and a reason), or repropose (undo a reject: a new proposal derived from the rejected
    one, with a reason). JSON for review.js, else back to the queue with a message."""
    try:
        data = cleaned(ReviewDecideForm(request.POST))
        decision, reason = data["decision"], data["reason"]
        if decision == "confirm":
            result = proposal_confirm(memory_id=memory_id, actor=request.principal, reason=reason)
        elif decision == "reject":
            result = memory_reject(memory_id=memory_id, actor=request.principal, reason=reason)
        elif decision == "repropose":
            result = memory_repropose(memory_id=memory_id, actor=request.principal, reason=reason)
        else:  # edit
            result = proposal_edit_confirm(
                memory_id=memory_id,
                text=data["text"],
                key=data["key"],
                kind=data["kind"],
                reason=reason,
                actor=request.principal,
            )
    except DomainError as exc:
        if wants_json(request):
            return JsonResponse(exc.as_dict(), status=exc.status)
        return render_queue(request, error=exc, status=exc.status)
    text = _outcome(memory_id, decision, result)
    if wants_json(request):
        # What the item shows after the decision: its new state and text, the new memory (an edit), the
        # reason of a reject, and the queue's new counts.
        return JsonResponse(
            {
                "memory_id": memory_id,
                "result_id": result.pk,
                "status": result.status,
                "decision": decision,
                "message": text,
                "text": result.text,
                "result_url": reverse("dashboard:memory", args=[result.pk]),
                "result_label": label_of(result),
                "reason": reason,
                **counts_after(request),
            }
        )
    messages.success(request, text)
    return redirect(queue_back(request))


def counts_after(request: HttpRequest) -> dict:
    """The queue's counts after a decision, under the filters the reviewer was looking at (the `back`
    query string): the proposals and disputes listed, what of them awaits this person (in the heading's
    words) and the menu badge's total (the scope, no filter). None for each when `back` no longer reads."""
    from django.http import QueryDict

    from governance.selectors.dashboard import scope_for_path

    params = QueryDict(cleaned(QueueBackForm(request.POST))["back"])
    try:
        scope = scope_for_path(request.principal, cleaned(FocusForm(params))["scope"])
        filters = cleaned(ReviewQueueForm(params))["filters"]
    except DomainError:
        return {"waiting": None, "disputes_waiting": None, "awaiting": None, "heading": None, "badge": None}
    waiting = queue_queryset(principal=request.principal, scope=scope, filters=filters).count()
    disputes = dispute_queue_queryset(principal=request.principal, scope=scope, filters=filters).count()
    awaiting = awaiting_for(request, scope, filters)
    return {
        "waiting": waiting,
        "disputes_waiting": disputes,
        "awaiting": {"proposals": awaiting.proposals, "disputes": awaiting.disputes},
        "heading": awaiting_sentence(awaiting, waiting + disputes),
        "badge": awaiting_for(request, scope).total,
    }


APPROVAL_NEEDED = ": approval recorded, a second, different reviewer must confirm it."


def _outcome(memory_id: int, decision: str, result: Memory) -> str:
    label = f"#{memory_id}"
    if decision == "reject":
        return f"Rejected {label}: it will not be used."
    if decision == "repropose":
        return f"Proposed {label} again as #{result.pk}: it waits in the queue for a reviewer."
    if decision == "confirm" and result.pk != memory_id:  # merged with the rule it corrects in part
        head = f"Confirmed {label} as #{result.pk}, the rule as this correction leaves it"
        return head + (": it is in force now." if result.status == Status.ACTIVE else APPROVAL_NEEDED)
    edited = f"Edited {label} into #{result.pk}; " if result.pk != memory_id else ""
    if result.status == Status.ACTIVE:
        return f"{edited}Confirmed{'' if edited else ' ' + label}: it is in force now."
    return f"{edited}Approval recorded{'' if edited else ' for ' + label}: a second, different reviewer must confirm it."


@require_GET
@dashboard_view(json=True)
def review_similar(request, memory_id: int):
    """The active memories most like a proposal, found by the recall agents use (governance.recall), in
    the proposal's scope as the reviewer reads it: its scope and the ones above, within their grants."""
    memory = memory_for_reader(request.principal, memory_id)
    if memory.status == Status.FORGOTTEN:
        raise NotFound()
    hits = recall_memories(
        principal=request.principal, scope=memory.scope, query=_as_query(memory.text), k=SIMILAR_ASKED
    )
    similar = [h for h in hits if h["status"] == Status.ACTIVE and h["memory_id"] != memory.pk][
        :SIMILAR_SHOWN
    ]
    return JsonResponse(
        {
            "memory_id": memory.pk,
            "key": memory.key,
            "kind": memory.kind,
            "similar": [
                {
                    "memory_id": h["memory_id"],
                    "text": h["text"],
                    "kind": h["kind"],
                    "key": h["key"],
                    "revision": h["revision"],
                    "status": h["status"],
                    "score": h["score"],
                    "same_key": bool(memory.key) and h["key"] == memory.key,
                    "url": reverse("dashboard:memory", args=[h["memory_id"]]),
                }
                for h in similar
            ],
        }
    )


def _as_query(text: str) -> str:
    return text if len(text) <= MAX_QUERY_CHARS else text[:MAX_QUERY_CHARS].rsplit(" ", 1)[0]
