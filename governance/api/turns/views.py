"""Turns: a stored context packet with its request and trace, shown as it was assembled (a memory
forgotten since shows no text)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.context.views import BudgetOutput, PacketOutput, TaskInput, TraceOutput
from governance.api.schema import ERROR_RESPONSES
from governance.redaction.masking import mask_turn
from governance.selectors.memory import turn_get


class StoredRequestOutput(serializers.Serializer):
    scope = serializers.CharField()
    query = serializers.CharField()
    budget_tokens = serializers.IntegerField()
    strategy = serializers.CharField()
    task = TaskInput(allow_null=True)
    as_of = serializers.DateTimeField(allow_null=True)
    session = serializers.CharField(allow_blank=True)


# A turn keeps the packet, request and trace as they were stored (JSON); these fields pass them through
# unchanged and give the schema their shapes.
@extend_schema_field(StoredRequestOutput)
class StoredRequestField(serializers.JSONField):
    pass


@extend_schema_field(PacketOutput)
class StoredPacketField(serializers.JSONField):
    pass


@extend_schema_field(TraceOutput)
class StoredTraceField(serializers.JSONField):
    pass


class TurnOutput(serializers.Serializer):
    id = serializers.IntegerField()
    scope = serializers.CharField(source="scope.path")
    session = serializers.CharField()
    query = serializers.CharField()
    strategy = serializers.CharField()
    as_of = serializers.DateTimeField(allow_null=True)
    request = StoredRequestField()
    packet = StoredPacketField()
    text = serializers.CharField(allow_blank=True)
    budget = serializers.SerializerMethodField()
    trace = StoredTraceField()
    created_at = serializers.DateTimeField()

    @extend_schema_field(BudgetOutput)
    def get_budget(self, turn) -> dict:
        return {"limit": turn.budget_limit, "used": turn.budget_used, "counter": turn.token_counter}


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
