"""Operations on the service itself rather than one memory: the retention policy of a scope, a scope's
summary, verification of the audit chain, and the propagation state of one outbox row."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.limits import GOVERNANCE
from governance.api.operations.serializers import (
    AuditVerifyOutput,
    OutboxStateOutput,
    RetentionInput,
    RetentionPolicyOutput,
    SummaryInput,
    SummaryOutput,
)
from governance.api.validation import valid
from governance.models import OutboxDelivery
from governance.permissions import outbox_for_reader, require_verify_audit, scope_by_path
from governance.services.audit import audit_verify_chain
from governance.services.retention import retention_policy_set
from governance.services.summary import summary_get


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
        require_verify_audit(request_principal(request))
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
