"""Operations on the service itself rather than one memory: the retention policy of a scope, a scope's
summary, verification of the audit chain, and the propagation state of one outbox row."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.limits import GOVERNANCE
from governance.api.validation import valid
from governance.errors import PermissionDenied
from governance.models import OutboxDelivery
from governance.permissions import AUDIT_VERIFY_DENIED, can_verify_audit, outbox_for_reader, scope_by_path
from governance.services.audit import audit_verify_chain
from governance.services.retention import MAX_COUNT, MAX_DAYS, retention_policy_set
from governance.services.summary import summary_get


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


def outbox_state(outbox) -> dict:
    """The body OutboxStateOutput describes (also the `propagation` of a forget)."""
    deliveries = {d.store: d for d in outbox.deliveries.all()}
    return {
        "id": outbox.pk,
        "topic": outbox.topic,
        "state": outbox.state,
        "created_at": outbox.created_at,
        "done_at": outbox.done_at,
        "stores": {
            store: {
                "state": d.state,
                "attempts": d.attempts,
                "done_at": d.done_at,
                "error": d.error if d.state == OutboxDelivery.State.FAILED else "",
            }
            for store, d in sorted(deliveries.items())
        },
    }


class RetentionPolicyView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(request=RetentionInput, responses=RetentionPolicyOutput)
    def put(self, request: Request) -> Response:
        data = valid(RetentionInput, request.data)
        actor = request_principal(request)
        policy = retention_policy_set(
            scope=scope_by_path(actor, data.pop("scope")),
            actor=actor,
            **data,
        )
        return Response(
            {
                "scope": policy.scope.path,
                "retire_unused_days": policy.retire_unused_days,
                "archive_cold": policy.archive_cold,
                "cold_threshold": policy.cold_threshold,
                "kinds": policy.kinds,
                "enabled": policy.enabled,
                "turns_max_age_days": policy.turns_max_age_days,
                "turns_max_count": policy.turns_max_count,
                "archive_turns": policy.archive_turns,
            }
        )


class SummaryView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(responses=SummaryOutput)
    def get(self, request: Request) -> Response:
        principal = request_principal(request)
        query = valid(SummaryInput, request.query_params)
        summary = summary_get(scope=scope_by_path(principal, query.get("scope")), actor=principal)
        return Response(
            {
                "scope": summary.scope.path,
                "built_at": summary.built_at,
                "writer": summary.writer,
                "lines": summary.lines,
                "text": summary.text,
            }
        )


class AuditVerifyView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(responses=AuditVerifyOutput)
    def get(self, request: Request) -> Response:
        if not can_verify_audit(request_principal(request)):
            raise PermissionDenied(AUDIT_VERIFY_DENIED)
        report = audit_verify_chain()
        return Response(
            {
                "ok": report.ok,
                "checked": report.checked,
                "first_bad_id": report.first_bad_id,
                "problem": report.problem,
            }
        )


class OutboxView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(responses=OutboxStateOutput)
    def get(self, request: Request, outbox_id: int) -> Response:
        return Response(outbox_state(outbox_for_reader(request_principal(request), outbox_id)))
