"""Input and Output shapes of the review queue. Inputs validate only; services do every write."""

from __future__ import annotations

from rest_framework import serializers

from governance.runtime import cursor as codec
from governance.services.extraction import REQUIREMENT_TYPES


class ReviewQueueInput(serializers.Serializer):
    """GET /review: the query string (not in the schema). The filters are the dashboard queue's
    (governance.selectors.review.QueueFilter), which validates them."""

    scope = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    kind = serializers.CharField(required=False, allow_blank=True, max_length=20)
    proposer = serializers.CharField(required=False, allow_blank=True, max_length=150)
    older = serializers.CharField(required=False, allow_blank=True, max_length=10)
    newer = serializers.CharField(required=False, allow_blank=True, max_length=10)
    sort = serializers.CharField(required=False, allow_blank=True, max_length=10)
    after = serializers.CharField(required=False, allow_blank=True, max_length=codec.MAX_LENGTH)


class ReviewMemoryBriefOutput(serializers.Serializer):
    id = serializers.IntegerField()
    scope = serializers.CharField()
    kind = serializers.CharField()
    key = serializers.CharField(allow_null=True)
    revision = serializers.IntegerField()
    status = serializers.CharField()
    text = serializers.CharField(allow_blank=True)
    session = serializers.CharField(allow_blank=True)


class ReviewMemoryOutput(ReviewMemoryBriefOutput):
    tier = serializers.CharField()
    source_kind = serializers.CharField()


class MergedRepeatOutput(serializers.Serializer):
    source_kind = serializers.CharField()
    source_ref = serializers.CharField(allow_blank=True)
    session = serializers.CharField(allow_blank=True)
    status = serializers.CharField(allow_blank=True, help_text="The status the repeat was written with.")
    share = serializers.FloatField(help_text="Share of this memory's words the repeat said.")
    at = serializers.DateTimeField()
    by = serializers.CharField(allow_null=True, help_text="Who wrote the repeat (null: the system).")


class ReviewRequirementOutput(serializers.Serializer):
    """A requirement the user stated in a conversation (docs/governance.md, "The session's requirements"):
    in force in its session while it waits here."""

    type = serializers.ChoiceField(choices=REQUIREMENT_TYPES)
    session = serializers.CharField(allow_blank=True)
    turn = serializers.CharField(allow_blank=True, help_text="The ref of the user's turn it was read from.")
    replaces = serializers.IntegerField(
        allow_null=True, help_text="The memory it would replace (shown as `conflicting`)."
    )
    ambiguous = serializers.ListField(
        child=serializers.IntegerField(), help_text="Memories an elliptical correction could replace."
    )
    revision = serializers.CharField(
        allow_null=True,
        help_text="When it corrects part of a keyed rule: what confirming it puts in force as the rule's next "
        "revision (the rule's clauses it leaves standing, then its own words).",
    )


class ReviewItemOutput(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["proposal", "promotion", "conflict"])
    memory = ReviewMemoryOutput()
    supporting_episodes = ReviewMemoryBriefOutput(many=True)
    conflicting = ReviewMemoryBriefOutput(allow_null=True)
    approvals = serializers.ListField(
        child=serializers.CharField(), help_text="Reviewers who approved so far."
    )
    approvals_needed = serializers.IntegerField()
    can_confirm = serializers.BooleanField()
    proposer = serializers.CharField(allow_null=True, help_text="Who wrote it (null: the system).")
    proposer_kind = serializers.CharField(allow_null=True, help_text="user, agent or group.")
    proposer_reason = serializers.CharField(allow_blank=True, help_text="Why it was put in the queue.")
    origin_turn_id = serializers.IntegerField(
        allow_null=True, help_text="The turn of its session it was seen in."
    )
    edited_from = serializers.IntegerField(
        allow_null=True, help_text="The proposal a reviewer edited into it."
    )
    near_duplicate = ReviewMemoryBriefOutput(
        allow_null=True,
        help_text="The memory of its scope this proposal repeats (every content word already there): "
        "confirming it makes it the next revision when that one has a key.",
    )
    merged = MergedRepeatOutput(
        many=True,
        help_text="Repeats merged into this memory instead of being stored (source kind and ref, session, "
        "share of its words, when, by whom), newest last.",
    )
    requirement = ReviewRequirementOutput(
        allow_null=True, help_text="What the user asked for in a conversation, when it is that."
    )
    created_at = serializers.DateTimeField()
    cursor = serializers.CharField(help_text="Pass as `after` to list the items after this one.")
