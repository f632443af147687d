"""Input and Output shapes of a promotion requested by hand. Inputs validate only; services do every write."""

from __future__ import annotations

from rest_framework import serializers

MAX_EPISODES = 200


class PromotionRequestInput(serializers.Serializer):
    memory = serializers.IntegerField(
        min_value=1, help_text="The candidate preference or convention to promote."
    )
    episodes = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        min_length=1,
        max_length=MAX_EPISODES,
        help_text="Episodic memories that support it.",
    )
    reason = serializers.CharField(required=False, allow_blank=True, max_length=500, default="")
