"""The review queue: proposals, promotions and conflicts waiting for a person, in the scopes the caller
reviews. Confirm and reject are memory operations (governance/api/memories)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.limits import GOVERNANCE
from governance.api.validation import valid
from governance.permissions import scope_by_path
from governance.redaction.masking import masked_text
from governance.runtime import cursor as codec
from governance.selectors.review import QueueFilter, encode_cursor, review_queue


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
    merged = serializers.ListField(
        child=serializers.DictField(),
        help_text="Repeats merged into this memory instead of being stored (source kind and ref, session, "
        "share of its words, when, by whom), newest last.",
    )
    created_at = serializers.DateTimeField()
    cursor = serializers.CharField(help_text="Pass as `after` to list the items after this one.")


def review_item(item) -> dict:
    """The body ReviewItemOutput describes, for one entry of the queue."""

    def brief(m):
        # A supporting episode forgotten since the proposal was made shows no text (governance.redaction.masking).
        return {
            "id": m.pk,
            "scope": m.scope.path,
            "kind": m.kind,
            "key": m.key,
            "revision": m.revision,
            "status": m.status,
            "text": masked_text(m.status, m.text),
            "session": m.session,
        }

    return {
        "kind": item.kind,
        "memory": {**brief(item.memory), "tier": item.memory.tier, "source_kind": item.memory.source_kind},
        "supporting_episodes": [brief(e) for e in item.supporting],
        "conflicting": brief(item.conflicting) if item.conflicting else None,
        "approvals": item.approvals,
        "approvals_needed": item.approvals_needed,
        "can_confirm": item.can_confirm,
        "proposer": item.memory.created_by.name if item.memory.created_by else None,
        "proposer_kind": item.memory.created_by.kind if item.memory.created_by else None,
        "proposer_reason": item.proposer_reason,
        "origin_turn_id": item.origin_turn_id,
        "edited_from": item.edited_from.pk if item.edited_from else None,
        "near_duplicate": brief(item.near_duplicate) if item.near_duplicate else None,
        "merged": item.merged,
        "created_at": item.memory.created_at,
        "cursor": encode_cursor(item.memory),
    }


class ReviewQueueView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(responses=ReviewItemOutput(many=True))
    def get(self, request: Request) -> Response:
        principal = request_principal(request)
        query = valid(ReviewQueueInput, request.query_params)
        scope = scope_by_path(principal, query["scope"]) if query.get("scope") else None
        filters = QueueFilter.parse(query)
        return Response(
            [review_item(i) for i in review_queue(principal=principal, scope=scope, filters=filters)]
        )
