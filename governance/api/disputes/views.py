"""Proposed contradictions between unkeyed memories: the system proposes them after embedding
(governance/recall/disputes.py); people list them, confirm which one holds (curator or owner: the other
is superseded) or dismiss them (reviewer and up). The services decide who may."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.disputes.serializers import (
    DisputeConfirmInput,
    DisputeDismissInput,
    DisputeListInput,
    DisputeOutput,
    dispute_body,
)
from governance.api.limits import GOVERNANCE
from governance.api.schema import ERROR_RESPONSES
from governance.api.validation import valid
from governance.permissions import dispute_for_reader, scope_by_path
from governance.runtime import cursor as codec
from governance.selectors.disputes import CURSOR, disputes_for_reader
from governance.services.dispute import dispute_confirm, dispute_dismiss


class DisputesView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(
        operation_id="disputes_list",
        parameters=[
            OpenApiParameter("scope", str, required=True, description="The scope whose subtree to list."),
            OpenApiParameter("state", str, enum=["proposed", "confirmed", "dismissed"]),
            OpenApiParameter("limit", int),
            OpenApiParameter("after", str, description="A dispute's `cursor`: list the ones after it."),
        ],
        responses={200: DisputeOutput(many=True), **ERROR_RESPONSES},
        summary="Proposed contradictions between unkeyed memories, newest first, paged by `after` (any role on the scope).",
    )
    def get(self, request: Request) -> Response:
        principal = request_principal(request)
        query = valid(DisputeListInput, request.query_params)
        scope = scope_by_path(principal, query["scope"])
        after = codec.decode_id(query["after"], CURSOR, "after")
        found = disputes_for_reader(
            actor=principal, scope=scope, state=query["state"], limit=query["limit"], after=after
        )
        return Response([dispute_body(d) for d in found])


class DisputeConfirmView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(
        operation_id="disputes_confirm",
        request=DisputeConfirmInput,
        responses={200: DisputeOutput, **ERROR_RESPONSES},
        summary="Say which memory holds (curator or owner): the other is superseded by it.",
    )
    def post(self, request: Request, dispute_id: int) -> Response:
        principal = request_principal(request)
        data = valid(DisputeConfirmInput, request.data)
        dispute = dispute_confirm(
            dispute_id=dispute_id, holds_id=data["holds"], reason=data["reason"], actor=principal
        )
        return Response(dispute_body(dispute_for_reader(principal, dispute.pk)))


class DisputeDismissView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(
        operation_id="disputes_dismiss",
        request=DisputeDismissInput,
        responses={200: DisputeOutput, **ERROR_RESPONSES},
        summary="Say the two do not disagree (reviewer and up): neither changes, the pair is not proposed again.",
    )
    def post(self, request: Request, dispute_id: int) -> Response:
        principal = request_principal(request)
        data = valid(DisputeDismissInput, request.data)
        dispute = dispute_dismiss(dispute_id=dispute_id, reason=data["reason"], actor=principal)
        return Response(dispute_body(dispute_for_reader(principal, dispute.pk)))
