"""The review queue's disputes: contradictions the system proposed between two unkeyed memories
(governance/services/dispute.py). A curator or owner confirms which one holds (the other is superseded by
it, so a reason and the irreversible tick are asked as on every other ending form); a reviewer and up
dismisses the pair. The services decide who may and audit it; this view only forwards and says the outcome."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from governance.errors import DomainError, InvalidInput
from governance.permissions import dispute_for_reader
from governance.services.dispute import BAD_HOLDS, dispute_confirm, dispute_dismiss
from memoryui.views.base import dashboard_view
from memoryui.views.memories import CONFIRM_IRREVERSIBLE
from memoryui.views.review import queue_back, render_queue

BAD_DISPUTE_DECISION = "decision is confirm or dismiss."


@require_POST
@dashboard_view()
def review_dispute(request, dispute_id: int):
    """Confirm (`holds`: the memory that holds, a reason, the irreversible tick) or dismiss (an optional
    reason) one dispute; any refusal re-renders the queue with the reason and its 4xx."""
    # Not yours and unknown get the same answer, before anything about the form is said.
    dispute_for_reader(request.principal, dispute_id)
    decision = request.POST.get("decision", "")
    reason = request.POST.get("reason", "").strip()[:2000]
    try:
        if decision == "confirm":
            if request.POST.get("irreversible") != "yes":
                raise InvalidInput(CONFIRM_IRREVERSIBLE, field="irreversible")
            try:
                holds = int(request.POST.get("holds", ""))
            except ValueError as exc:
                raise InvalidInput(BAD_HOLDS, field="holds") from exc
            dispute = dispute_confirm(
                dispute_id=dispute_id, holds_id=holds, reason=reason, actor=request.principal
            )
            other = dispute.older_id if holds == dispute.newer_id else dispute.newer_id
            text = f"Dispute {dispute_id} settled: #{holds} holds, #{other} is no longer in force."
        elif decision == "dismiss":
            dispute_dismiss(dispute_id=dispute_id, reason=reason, actor=request.principal)
            text = f"Dispute {dispute_id} dismissed: both memories stay as they are and the pair is not proposed again."
        else:
            raise InvalidInput(BAD_DISPUTE_DECISION, field="decision")
    except DomainError as exc:
        return render_queue(request, error=exc, status=exc.status)
    messages.success(request, text)
    return redirect(queue_back(request))
