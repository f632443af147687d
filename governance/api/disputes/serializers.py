"""Input and output shapes of /disputes (governance/api/disputes/views.py)."""

from __future__ import annotations

from rest_framework import serializers

from governance.models import DisputeState
from governance.redaction.masking import masked_text
from governance.selectors.disputes import MAX_LIST, encode_cursor
from governance.services.relation import REASON_MAX


class DisputeListInput(serializers.Serializer):
    scope = serializers.CharField(max_length=500, help_text="The scope whose subtree to list.")
    state = serializers.ChoiceField(choices=[s.value for s in DisputeState], default=DisputeState.PROPOSED)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_LIST, default=50)
    after = serializers.CharField(
        max_length=400,
        required=False,
        allow_blank=True,
        default="",
        help_text="The `cursor` of the last dispute of the previous page: the next page starts after it.",
    )


class DisputeConfirmInput(serializers.Serializer):
    holds = serializers.IntegerField(
        min_value=1, help_text="The memory that holds; the other is superseded by it."
    )
    reason = serializers.CharField(max_length=REASON_MAX, help_text="Why it holds: kept in the audit log.")


class DisputeDismissInput(serializers.Serializer):
    reason = serializers.CharField(
        max_length=REASON_MAX,
        required=False,
        allow_blank=True,
        default="",
        help_text="Why they do not disagree.",
    )


class DisputeMemoryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    scope = serializers.CharField()
    kind = serializers.CharField()
    status = serializers.CharField()
    text = serializers.CharField(allow_blank=True, help_text="Withheld once the memory is forgotten.")
    occurred_at = serializers.DateTimeField(allow_null=True)


class DisputeOutput(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=[s.value for s in DisputeState])
    newer = DisputeMemoryOutput(help_text="The later statement, which seems to replace the older one.")
    older = DisputeMemoryOutput()
    similarity = serializers.FloatField()
    cues = serializers.ListField(
        child=serializers.CharField(), help_text="The wording that made it a candidate."
    )
    reason = serializers.CharField(allow_blank=True)
    holds = serializers.IntegerField(allow_null=True, help_text="Once confirmed: the memory that holds.")
    decided_by = serializers.CharField(allow_null=True)
    decided_at = serializers.DateTimeField(allow_null=True)
    decision_reason = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    cursor = serializers.CharField(help_text="Pass as `after` to list the disputes after this one.")


def _memory(memory) -> dict:
    return {
        "id": memory.pk,
        "scope": memory.scope.path,
        "kind": memory.kind,
        "status": memory.status,
        "text": masked_text(memory.status, memory.text),
        "occurred_at": memory.occurred_at,
    }


def dispute_body(dispute) -> dict:
    """The body DisputeOutput describes."""
    return {
        "id": dispute.pk,
        "state": dispute.state,
        "newer": _memory(dispute.newer),
        "older": _memory(dispute.older),
        "similarity": dispute.similarity,
        "cues": list(dispute.cues or []),
        "reason": dispute.reason,
        "holds": dispute.holds_id,
        "decided_by": dispute.decided_by.name if dispute.decided_by_id else None,
        "decided_at": dispute.decided_at,
        "decision_reason": dispute.decision_reason,
        "created_at": dispute.created_at,
        "cursor": encode_cursor(dispute),
    }
