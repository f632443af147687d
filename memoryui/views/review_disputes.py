"""The review queue's disputes: contradictions the system proposed between two unkeyed memories
(governance/services/dispute.py). A curator or owner says which one holds (the other is superseded by it,
or rejected when it was only a candidate or proposal) with a reason; a reviewer and up dismisses the pair
(both stand). The input is read by memoryui/forms/review.py; the services decide who may and audit it;
this view only forwards and says the outcome: JSON for review.js (decided in place), else back to the
queue with a message.

No "cannot be undone" tick, as for a supersede and a single proposal's reject: what is superseded can be
put back in force by superseding the one that held with it, and the reason is asked every time."""

from __future__ import annotations

from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from governance.errors import DomainError
from governance.models import Dispute
from governance.permissions import dispute_for_reader
from governance.services.dispute import dispute_confirm, dispute_dismiss
from memoryui.forms.review import (  # noqa: F401  (the message tests reuse, where it was)
    BAD_DISPUTE_DECISION,
    DisputeConfirmForm,
    DisputeDecisionForm,
    DisputeDismissForm,
)
from memoryui.views.base import cleaned, dashboard_view
from memoryui.views.review import counts_after, queue_back, render_queue, wants_json


@require_POST
@dashboard_view()
def review_dispute(request, dispute_id: int):
    """Confirm (`holds`: the memory that holds, and a reason) or dismiss (an optional reason) one
    dispute; any refusal answers with the reason and its 4xx (the queue re-rendered, or JSON)."""
    try:
        # Not yours and unknown get the same answer, before anything about the form is said.
        dispute_for_reader(request.principal, dispute_id)
        decision = cleaned(DisputeDecisionForm(request.POST))["decision"]
        if decision == "confirm":
            data = cleaned(DisputeConfirmForm(request.POST))
            dispute = dispute_confirm(
                dispute_id=dispute_id, holds_id=data["holds"], reason=data["reason"], actor=request.principal
            )
        else:  # dismiss
            data = cleaned(DisputeDismissForm(request.POST))
            dispute = dispute_dismiss(dispute_id=dispute_id, reason=data["reason"], actor=request.principal)
    except DomainError as exc:
        if wants_json(request):
            return JsonResponse(exc.as_dict(), status=exc.status)
        return render_queue(request, error=exc, status=exc.status)
    text = _outcome(dispute)
    if wants_json(request):
        return JsonResponse(_decided(request, dispute, decision, text))
    messages.success(request, text)
    return redirect(queue_back(request))


def _loser(dispute: Dispute) -> int:
    return dispute.older_id if dispute.holds_id == dispute.newer_id else dispute.newer_id


def _outcome(dispute: Dispute) -> str:
    if dispute.holds_id is None:
        return f"Dispute {dispute.pk} dismissed: both memories stay as they are and the pair is not proposed again."
    return (
        f"Dispute {dispute.pk} settled: #{dispute.holds_id} holds, #{_loser(dispute)} is no longer in force."
    )


def _decided(request, dispute: Dispute, decision: str, text: str) -> dict:
    """What the dispute's card shows once decided (its result, the memory that holds) and the queue's
    new counts."""
    holds = dispute.holds_id
    return {
        "dispute_id": dispute.pk,
        "decision": decision,
        "state": dispute.state,
        "holds": holds,
        "holds_side": None if holds is None else ("newer" if holds == dispute.newer_id else "older"),
        "ended": None if holds is None else _loser(dispute),
        "message": text,
        "reason": dispute.decision_reason,
        "result_url": reverse("dashboard:memory", args=[holds]) if holds else None,
        **counts_after(request),
    }
