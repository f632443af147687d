"""Input and output shapes of the agent API. Inputs validate only; services do every write."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from governance.api.output_types import ErrorBody
from governance.models import Kind, SourceKind, Status, Tier
from governance.recall import STRATEGIES
from governance.recall.packet import MAX_BUDGET, MAX_K, MAX_QUERY_CHARS
from governance.services.events import MAX_TURNS, ROLES

SLOTS = ("task", "constraints", "recent", "evidence", "preferences", "relations", "external", "negative")


class SourceInput(serializers.Serializer):
    kind = serializers.ChoiceField(choices=SourceKind.choices)
    ref = serializers.CharField(required=False, allow_blank=True, max_length=500, default="")


class SourceOutput(serializers.Serializer):
    kind = serializers.CharField()
    ref = serializers.CharField(allow_blank=True)


class MemoryCreateInput(serializers.Serializer):
    scope = serializers.CharField(max_length=512)
    kind = serializers.ChoiceField(choices=Kind.choices)
    key = serializers.CharField(required=False, allow_null=True, max_length=200)
    text = serializers.CharField(max_length=20_000)
    source = SourceInput()
    status = serializers.ChoiceField(choices=[Status.CANDIDATE, Status.PROPOSED, Status.ACTIVE], required=False)
    confidence = serializers.FloatField(required=False, min_value=0, max_value=1)
    importance = serializers.FloatField(required=False, min_value=0, max_value=1)
    tier = serializers.ChoiceField(choices=Tier.choices, required=False)
    task_type = serializers.CharField(required=False, allow_blank=True, max_length=100)
    valid_from = serializers.DateTimeField(required=False)
    valid_until = serializers.DateTimeField(required=False)


class MemoryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    scope = serializers.CharField(source="scope.path")
    kind = serializers.CharField()
    key = serializers.CharField(allow_null=True)
    revision = serializers.IntegerField()
    status = serializers.CharField()
    text = serializers.SerializerMethodField()
    source = serializers.SerializerMethodField()
    confidence = serializers.FloatField()
    importance = serializers.FloatField()
    tier = serializers.CharField()
    task_type = serializers.CharField()
    session = serializers.CharField()
    call_id = serializers.CharField()
    valid_from = serializers.DateTimeField(allow_null=True)
    valid_until = serializers.DateTimeField(allow_null=True)
    occurred_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()

    def get_text(self, memory) -> str:
        # A forgotten memory's text is never served, even where a soft forget kept it for owners.
        return "" if memory.status == Status.FORGOTTEN else memory.text

    @extend_schema_field(SourceOutput)
    def get_source(self, memory) -> dict:
        return {"kind": memory.source_kind, "ref": memory.source_ref}


class MemoryPageOutput(serializers.Serializer):
    """GET /memories: one page of 50, newest first."""

    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = MemoryOutput(many=True)


class MemoryListQuery(serializers.Serializer):
    scope = serializers.CharField(required=False, max_length=512)
    status = serializers.ChoiceField(choices=Status.choices, required=False)
    kind = serializers.ChoiceField(choices=Kind.choices, required=False)
    key = serializers.CharField(required=False, max_length=200)
    q = serializers.CharField(required=False, max_length=500)


class SupersedeInput(serializers.Serializer):
    text = serializers.CharField(max_length=20_000)
    reason = serializers.CharField(max_length=2000)
    source = SourceInput()


class TurnInput(serializers.Serializer):
    role = serializers.ChoiceField(choices=list(ROLES))
    speaker = serializers.CharField(required=False, allow_blank=True, max_length=200)
    content = serializers.CharField(max_length=20_000)
    ref = serializers.CharField(required=False, allow_blank=True, max_length=500)
    call_id = serializers.CharField(required=False, allow_blank=True, max_length=200)


class EventInput(serializers.Serializer):
    scope = serializers.CharField(max_length=512)
    session = serializers.CharField(max_length=200)
    at = serializers.DateTimeField(required=False)
    turns = TurnInput(many=True, allow_empty=False, max_length=MAX_TURNS)


class EventOutput(serializers.Serializer):
    created = MemoryOutput(many=True)


class RecallInput(serializers.Serializer):
    scope = serializers.CharField(max_length=512)
    query = serializers.CharField(max_length=MAX_QUERY_CHARS)
    k = serializers.IntegerField(required=False, min_value=1, max_value=MAX_K, default=10)
    strategy = serializers.ChoiceField(choices=list(STRATEGIES), required=False, default="full")
    as_of = serializers.DateTimeField(required=False)


class ScoresOutput(serializers.Serializer):
    semantic = serializers.FloatField(allow_null=True)
    lexical = serializers.FloatField(allow_null=True)
    activation = serializers.FloatField()
    recency = serializers.FloatField()


class RecallItemOutput(serializers.Serializer):
    memory_id = serializers.IntegerField()
    text = serializers.CharField()
    kind = serializers.CharField()
    key = serializers.CharField(allow_null=True)
    revision = serializers.IntegerField()
    status = serializers.CharField()
    source = SourceOutput()
    score = serializers.FloatField()
    scores = ScoresOutput()


class RecallOutput(serializers.Serializer):
    results = RecallItemOutput(many=True)


class TaskInput(serializers.Serializer):
    goal = serializers.CharField(max_length=2000)
    state = serializers.CharField(required=False, allow_blank=True, max_length=4000)
    type = serializers.CharField(required=False, allow_blank=True, max_length=100)


class ContextInput(serializers.Serializer):
    scope = serializers.CharField(max_length=512)
    query = serializers.CharField(max_length=MAX_QUERY_CHARS)
    task = TaskInput(required=False)
    budget_tokens = serializers.IntegerField(min_value=1, max_value=MAX_BUDGET)
    strategy = serializers.ChoiceField(choices=list(STRATEGIES), required=False, default="full")
    as_of = serializers.DateTimeField(required=False)
    session = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")


class ReplacementOutput(serializers.Serializer):
    memory_id = serializers.IntegerField()
    revision = serializers.IntegerField()
    text = serializers.CharField()
    status = serializers.CharField()


class BlockOutput(serializers.Serializer):
    memory_id = serializers.IntegerField(allow_null=True)
    kind = serializers.CharField()
    key = serializers.CharField(allow_null=True)
    revision = serializers.IntegerField(allow_null=True)
    status = serializers.CharField()
    text = serializers.CharField(allow_blank=True)
    source = SourceOutput()
    score = serializers.FloatField()
    reason = serializers.CharField()
    # Present only where they apply:
    role = serializers.CharField(required=False, help_text="The speaker of a recorded turn.")
    call_id = serializers.CharField(required=False, help_text="Ties a tool call to its result; they travel together.")
    session = serializers.CharField(required=False)
    flags = serializers.ListField(child=serializers.CharField(), required=False,
                                  help_text="Contradictions: 'contradicts <id>', 'loses to <id>: <why>'.")
    replaced_by = ReplacementOutput(required=False, allow_null=True,
                                    help_text="Negative context: the memory now in force instead.")
    supported_by = serializers.ListField(child=serializers.IntegerField(), required=False)
    supports = serializers.IntegerField(required=False)


class SkippedOutput(BlockOutput):
    slot = serializers.CharField()
    tokens = serializers.IntegerField(required=False, help_text="What the block would have cost.")


class PacketOutput(serializers.Serializer):
    task = BlockOutput(many=True)
    constraints = BlockOutput(many=True)
    recent = BlockOutput(many=True)
    evidence = BlockOutput(many=True)
    preferences = BlockOutput(many=True)
    relations = BlockOutput(many=True)
    external = BlockOutput(many=True)
    negative = BlockOutput(many=True)
    skipped = SkippedOutput(many=True)


class BudgetOutput(serializers.Serializer):
    limit = serializers.IntegerField()
    used = serializers.IntegerField()
    counter = serializers.CharField()


class StageOutput(serializers.Serializer):
    name = serializers.CharField()
    ms = serializers.FloatField()
    # `in` is a Python keyword: declared through the fields mapping below.


StageOutput._declared_fields["in"] = serializers.IntegerField()
StageOutput._declared_fields["out"] = serializers.IntegerField()


class TraceOutput(serializers.Serializer):
    stages = StageOutput(many=True)
    pending_vectors = serializers.IntegerField(
        help_text="Eligible memories still waiting for their vector (found by keyword meanwhile); capped at 10,000.")


class ContextOutput(serializers.Serializer):
    turn_id = serializers.IntegerField(allow_null=True)
    packet = PacketOutput()
    budget = BudgetOutput()
    trace = TraceOutput()
    text = serializers.CharField(allow_blank=True)


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


class PinnedOverBudgetOutput(serializers.Serializer):
    error = serializers.CharField()
    message = serializers.CharField()
    needed = serializers.IntegerField()
    budget = serializers.IntegerField()


ErrorOutput = ErrorBody  # the one error shape (governance/api/output_types.py)
