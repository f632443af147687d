"""Promotion requested by hand: a candidate preference or convention, and the episodes a person or an
agent chose as its support, become the long-term proposal the periodic scan would have made. It waits
in the review queue like any proposal: a request never puts anything in force."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.memories.serializers import MemoryOutput
from governance.api.promotions.serializers import PromotionRequestInput
from governance.api.schema import ERROR_RESPONSES
from governance.api.validation import valid
from governance.services.memory.promotion import promotion_propose


class PromotionRequestView(APIView):
    @extend_schema(
        operation_id="promotions_create",
        request=PromotionRequestInput,
        responses={201: MemoryOutput, **ERROR_RESPONSES},
        summary="Propose a candidate for promotion, citing chosen episodes; it goes to review (never in force).",
    )
    def post(self, request: Request) -> Response:
        data = valid(PromotionRequestInput, request.data)
        proposal = promotion_propose(
            memory_id=data["memory"],
            episode_ids=sorted(set(data["episodes"])),
            reason=data["reason"],
            actor=request_principal(request),
        )
        return Response(MemoryOutput(proposal).data, status=status.HTTP_201_CREATED)
