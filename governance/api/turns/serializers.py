"""Output shapes of a stored turn: its request, packet and trace as they were stored."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from governance.api.context.serializers import BudgetOutput, PacketOutput, TaskInput, TraceOutput


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
