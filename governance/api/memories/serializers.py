"""Input and Output shapes of the memory operations. Inputs validate only; services do every write."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from governance.api.operations.serializers import OutboxStateOutput
from governance.models import NEAR_DUPLICATE_OF, Kind, Memory, SourceKind, Status, Tier
from governance.services.memory import REASON_REQUIRED


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
    status = serializers.ChoiceField(
        choices=[Status.CANDIDATE, Status.PROPOSED, Status.ACTIVE], required=False
    )
    confidence = serializers.FloatField(required=False, min_value=0, max_value=1)
    importance = serializers.FloatField(required=False, min_value=0, max_value=1)
    tier = serializers.ChoiceField(choices=Tier.choices, required=False)
    task_type = serializers.CharField(required=False, allow_blank=True, max_length=100)
    valid_from = serializers.DateTimeField(required=False)
    valid_until = serializers.DateTimeField(required=False)
    session = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="The conversation it was said in: a correction with source kind `user` is in force there at once "
        "(a session override, docs/governance.md).",
    )


class NearDuplicateOutput(serializers.Serializer):
    decision = serializers.ChoiceField(
        choices=["reinforced", "proposed"],
        help_text="reinforced: nothing was stored, this is the memory repeated; proposed: a repeated rule in "
        "force, written as the proposal of its next revision.",
    )
    memory_id = serializers.IntegerField(help_text="The memory repeated.")
    share = serializers.FloatField(help_text="Share of the repeated memory's words the write said.")
    status = serializers.CharField(required=False, help_text="The repeated memory's status then.")


def _meta(memory) -> dict:
    # Lists read rows without meta (MemoryQuerySet.light): no query per row for it.
    return {} if "meta" in memory.get_deferred_fields() else memory.meta or {}


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
    near_duplicate = serializers.SerializerMethodField(
        help_text="Set when this write repeated a memory of its scope: `reinforced` (nothing was stored; this "
        "is the memory it repeats, reinforced) or `proposed` (a repeated rule, written as a proposal)."
    )
    merged_repeats = serializers.SerializerMethodField(
        help_text="How many repeats were merged into this memory instead of being stored."
    )

    @extend_schema_field(NearDuplicateOutput(allow_null=True))
    def get_near_duplicate(self, memory) -> dict | None:
        return getattr(memory, "near_duplicate", None) or _meta(memory).get(NEAR_DUPLICATE_OF)

    def get_merged_repeats(self, memory) -> int:
        return int(_meta(memory).get("near_duplicates_count") or 0)

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


class MemoryListInput(serializers.Serializer):
    """GET /memories: the query string."""

    scope = serializers.CharField(required=False, max_length=512)
    status = serializers.ChoiceField(choices=Status.choices, required=False)
    kind = serializers.ChoiceField(choices=Kind.choices, required=False)
    key = serializers.CharField(required=False, max_length=200)
    q = serializers.CharField(required=False, max_length=500)


# The reason of an ending is checked by the service (services.memory.REASON_REQUIRED), so the API and the
# dashboard answer a missing one with the same code and sentence.
class EndingInput(serializers.Serializer):
    """An ending's body. A missing reason alone reaches the service, which refuses it with its sentence; when
    other fields are bad too, the 400 names the reason beside them (with the same sentence), so a client
    learns everything wrong with the body in one answer."""

    def to_internal_value(self, data):
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as exc:
            reason = data.get("reason", "") if hasattr(data, "get") else ""
            if isinstance(exc.detail, dict) and not (isinstance(reason, str) and reason.strip()):
                exc.detail.setdefault("reason", [REASON_REQUIRED])
            raise


class SupersedeInput(EndingInput):
    text = serializers.CharField(max_length=20_000)
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    source = SourceInput()


class ReasonInput(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class RequiredReasonInput(EndingInput):
    reason = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=2000,
        help_text="Required (the service refuses an empty one: 400, field reason).",
    )


class ForgetInput(EndingInput):
    mode = serializers.ChoiceField(choices=["soft", "hard"])
    reason = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=2000,
        help_text="Required (the service refuses an empty one: 400, field reason).",
    )


class MemoryStateOutput(serializers.ModelSerializer):
    scope = serializers.CharField(source="scope.path")
    approvals = serializers.SerializerMethodField()
    approvals_needed = serializers.SerializerMethodField()

    class Meta:
        model = Memory
        fields = [
            "id",
            "scope",
            "kind",
            "key",
            "revision",
            "status",
            "tier",
            "approvals",
            "approvals_needed",
            "purged_at",
            "updated_at",
        ]

    def get_approvals(self, memory: Memory) -> int:
        from governance.permissions import approvers

        return len(approvers(memory))

    def get_approvals_needed(self, memory: Memory) -> int:
        from governance.permissions import confirmations_needed

        return confirmations_needed(memory)


class ReachedPlaceOutput(serializers.Serializer):
    """One place a forget took the memory's words out of (services/memory/words.py), never the words."""

    place = serializers.ChoiceField(
        choices=["memory", "turns", "evaluation_misses", "relations", "summaries"]
    )
    state = serializers.ChoiceField(
        choices=["rewritten", "not_found", "not_governed", "forgotten", "kept_decided", "stale"],
        help_text="memory: rewritten (the words replaced, embedded again), not_found (not there verbatim: "
        "forget it on its own), not_governed (in a scope you do not govern), forgotten (an undecided "
        "candidate read from it), kept_decided (a person decided it: forget it on its own); turns, "
        "evaluation_misses, relations: rewritten (count); summaries: stale (count, rebuilt before any read)",
    )
    memory_id = serializers.IntegerField(required=False)
    scope = serializers.CharField(required=False)
    count = serializers.IntegerField(required=False)


class ForgetOutput(serializers.Serializer):
    memory = MemoryStateOutput()
    mode = serializers.ChoiceField(choices=["soft", "hard"])
    propagation = OutboxStateOutput(allow_null=True)
    reached = ReachedPlaceOutput(many=True, help_text="Where the words went and what the forget did there.")
