"""Input and Output shapes of relations made by hand. Inputs validate only; services do every write."""

from __future__ import annotations

from rest_framework import serializers

from governance.services.relation import HAND_KINDS, REASON_MAX


class RelationCreateInput(serializers.Serializer):
    source = serializers.IntegerField(
        min_value=1, help_text="The memory that supports / contradicts / is derived from."
    )
    target = serializers.IntegerField(min_value=1, help_text="The memory it relates to.")
    kind = serializers.ChoiceField(choices=[str(k) for k in HAND_KINDS])
    reason = serializers.CharField(max_length=REASON_MAX, help_text="Why: kept in the audit log.")


class RelationRemoveInput(serializers.Serializer):
    reason = serializers.CharField(
        max_length=REASON_MAX, help_text="Why the link is removed: kept in the audit log."
    )


class RelationOutput(serializers.Serializer):
    id = serializers.IntegerField()
    source = serializers.IntegerField(source="source_id")
    target = serializers.IntegerField(source="target_id")
    kind = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    by_hand = serializers.BooleanField()
    actor = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_actor(self, relation) -> str | None:
        return relation.actor.name if relation.actor_id else None
