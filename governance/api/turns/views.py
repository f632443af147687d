"""Turns: a stored context packet with its request and trace, shown as it was assembled (a memory
forgotten since shows no text)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.schema import ERROR_RESPONSES
from governance.api.turns.serializers import TurnOutput
from governance.redaction.masking import mask_turn
from governance.selectors.memory import turn_get


class TurnDetailView(APIView):
    @extend_schema(
        operation_id="turns_retrieve",
        parameters=[OpenApiParameter("turn_id", int, OpenApiParameter.PATH)],
        responses={200: TurnOutput, **ERROR_RESPONSES},
    )
    def get(self, request: Request, turn_id: int) -> Response:
        turn = turn_get(principal=request_principal(request), turn_id=turn_id)
        # A memory forgotten since the turn shows no text here, to any role (the dashboard masks the same way).
        return Response(TurnOutput(mask_turn(turn)).data)
