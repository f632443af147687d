"""Input and Output shapes of recording an interaction. Inputs validate only; services do every write."""

from __future__ import annotations

from rest_framework import serializers

from governance.api.memories.serializers import MemoryOutput
from governance.services.events import MAX_TURNS, ROLES


# One turn of the interaction (not a stored context turn: that is turns.TurnOutput). A comment, not a
# docstring: the schema would publish a docstring as the component's description.
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
    created = MemoryOutput(
        many=True,
        help_text="The episodes recorded (one per new turn); extracted candidates are "
        "not listed here: they wait in the review queue.",
    )
