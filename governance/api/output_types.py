"""Typed response shapes for the operations whose views build their body by hand (forget, outbox,
audit verification, tokens, review queue, retention, summary, scopes), and the one error body. They
describe what the views return, for the OpenAPI schema and the clients generated or written from it;
the views keep building the same dicts."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from governance.api.governance_serializers import MemoryStateOut

ERROR_CODES = (
    "invalid_input", "not_authenticated", "authentication_failed", "permission_denied", "not_found",
    "method_not_allowed", "parse_error", "unsupported_media_type", "throttled", "conflict",
    "key_revision_conflict", "active_key_exists", "invalid_transition", "stale_revision",
    "four_eyes_required", "pinned_over_budget", "nesting_too_deep", "request_too_large",
    "promotion_text_forgotten",
)


@extend_schema_field({
    "type": "object",
    "additionalProperties": {"oneOf": [{"type": "array", "items": {"type": "string"}},
                                       {"type": "object", "additionalProperties": True}]},
})
class FieldErrors(serializers.DictField):
    """{field: [problems]}; a nested input's field maps to the same shape one level down."""


class ErrorBody(serializers.Serializer):
    """Every 4xx answer: a stable machine-readable `error` code and a sentence for a person."""

    error = serializers.CharField(help_text="Stable code, one of: " + ", ".join(ERROR_CODES) + ".")
    message = serializers.CharField(help_text="What went wrong and what to do, for a person.")
    fields = FieldErrors(
        required=False,
        help_text="invalid_input only: the field names with their problems (nested for nested input).")
    action = serializers.CharField(required=False, help_text="permission_denied: the action that was refused.")
    needed = serializers.IntegerField(required=False, help_text="pinned_over_budget: tokens the pinned blocks need.")
    budget = serializers.IntegerField(required=False, help_text="pinned_over_budget: the budget that was asked for.")


class DeliveryState(serializers.Serializer):
    state = serializers.CharField()
    attempts = serializers.IntegerField()
    done_at = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField(allow_blank=True)


class OutboxStateOut(serializers.Serializer):
    id = serializers.IntegerField()
    topic = serializers.CharField()
    state = serializers.CharField()
    created_at = serializers.DateTimeField()
    done_at = serializers.DateTimeField(allow_null=True)
    stores = serializers.DictField(child=DeliveryState(), help_text="Per derived store, its delivery state.")


class ForgetOut(serializers.Serializer):
    memory = MemoryStateOut()
    mode = serializers.ChoiceField(choices=["soft", "hard"])
    propagation = OutboxStateOut(allow_null=True)


class AuditVerifyOut(serializers.Serializer):
    ok = serializers.BooleanField()
    checked = serializers.IntegerField()
    first_bad_id = serializers.IntegerField(allow_null=True)
    problem = serializers.CharField(allow_blank=True, allow_null=True)


class TokenIssuedOut(serializers.Serializer):
    token = serializers.CharField(help_text="The raw token: shown once, only its hash is kept.")
    scope = serializers.CharField(help_text="The token acts only in this scope's subtree.")
    role = serializers.CharField(help_text="The highest role the token may use.")
    expires_at = serializers.DateTimeField(allow_null=True)
    note = serializers.CharField()


class ReviewMemoryBrief(serializers.Serializer):
    id = serializers.IntegerField()
    scope = serializers.CharField()
    kind = serializers.CharField()
    key = serializers.CharField(allow_null=True)
    revision = serializers.IntegerField()
    status = serializers.CharField()
    text = serializers.CharField(allow_blank=True)
    session = serializers.CharField(allow_blank=True)


class ReviewMemory(ReviewMemoryBrief):
    tier = serializers.CharField()
    source_kind = serializers.CharField()


class ReviewItemOut(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["proposal", "promotion", "conflict"])
    memory = ReviewMemory()
    supporting_episodes = ReviewMemoryBrief(many=True)
    conflicting = ReviewMemoryBrief(allow_null=True)
    approvals = serializers.ListField(child=serializers.CharField(), help_text="Reviewers who approved so far.")
    approvals_needed = serializers.IntegerField()
    can_confirm = serializers.BooleanField()


class RetentionPolicyOut(serializers.Serializer):
    scope = serializers.CharField()
    retire_unused_days = serializers.IntegerField(allow_null=True)
    archive_cold = serializers.BooleanField()
    cold_threshold = serializers.FloatField(allow_null=True)
    kinds = serializers.ListField(child=serializers.CharField())
    enabled = serializers.BooleanField()


class SummaryLineOut(serializers.Serializer):
    section = serializers.CharField()
    text = serializers.CharField()
    memory_ids = serializers.ListField(child=serializers.IntegerField())


class SummaryOut(serializers.Serializer):
    scope = serializers.CharField()
    built_at = serializers.DateTimeField(allow_null=True)
    writer = serializers.CharField()
    lines = SummaryLineOut(many=True)
    text = serializers.CharField(allow_blank=True)
