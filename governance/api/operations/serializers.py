"""Input and Output shapes of retention policies, summaries, the audit check and the outbox state. Inputs
validate only; services do every write."""

from __future__ import annotations

from rest_framework import serializers

from governance.services.retention import MAX_COUNT, MAX_DAYS


class RetentionInput(serializers.Serializer):
    scope = serializers.CharField(max_length=512)
    retire_unused_days = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=MAX_DAYS, default=None
    )
    archive_cold = serializers.BooleanField(required=False, default=False)
    cold_threshold = serializers.FloatField(required=False, allow_null=True, default=None)
    kinds = serializers.ListField(child=serializers.CharField(max_length=12), required=False, default=list)
    enabled = serializers.BooleanField(required=False, default=True)
    turns_max_age_days = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_DAYS,
        default=None,
        help_text="Stored turns older than this are archived and deleted.",
    )
    turns_max_count = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_COUNT,
        default=None,
        help_text="Each scope of the subtree keeps its newest N stored turns.",
    )
    archive_turns = serializers.BooleanField(
        required=False, default=True, help_text="Copy pruned turns into the turn archive first."
    )


class RetentionPolicyOutput(serializers.Serializer):
    scope = serializers.CharField()
    retire_unused_days = serializers.IntegerField(allow_null=True)
    archive_cold = serializers.BooleanField()
    cold_threshold = serializers.FloatField(allow_null=True)
    kinds = serializers.ListField(child=serializers.CharField())
    enabled = serializers.BooleanField()
    turns_max_age_days = serializers.IntegerField(allow_null=True)
    turns_max_count = serializers.IntegerField(allow_null=True)
    archive_turns = serializers.BooleanField()


class SummaryInput(serializers.Serializer):
    """GET /summary: the query string (not in the schema; `scope` is required in effect: no scope, 404)."""

    scope = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class SummaryLineOutput(serializers.Serializer):
    section = serializers.CharField()
    text = serializers.CharField()
    memory_ids = serializers.ListField(child=serializers.IntegerField())


class SummaryOutput(serializers.Serializer):
    scope = serializers.CharField()
    built_at = serializers.DateTimeField(allow_null=True)
    writer = serializers.CharField()
    lines = SummaryLineOutput(many=True)
    text = serializers.CharField(allow_blank=True)


class AuditVerifyOutput(serializers.Serializer):
    ok = serializers.BooleanField()
    checked = serializers.IntegerField()
    first_bad_id = serializers.IntegerField(allow_null=True)
    problem = serializers.CharField(allow_blank=True, allow_null=True)


class DeliveryStateOutput(serializers.Serializer):
    state = serializers.CharField()
    attempts = serializers.IntegerField()
    done_at = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField(allow_blank=True)


class OutboxStateOutput(serializers.Serializer):
    id = serializers.IntegerField()
    topic = serializers.CharField()
    state = serializers.CharField()
    created_at = serializers.DateTimeField()
    done_at = serializers.DateTimeField(allow_null=True)
    stores = serializers.DictField(
        child=DeliveryStateOutput(), help_text="Per derived store, its delivery state."
    )
