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
from governance.masking import masked_text
from governance.permissions import governed_scope
from governance.selectors.review import review_queue


class ReviewQueueInput(serializers.Serializer):
    """GET /review: the query string (not in the schema)."""

    scope = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


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
    approvals = serializers.ListField(child=serializers.CharField(), help_text="Reviewers who approved so far.")
    approvals_needed = serializers.IntegerField()
    can_confirm = serializers.BooleanField()


def review_item(item) -> dict:
    """The body ReviewItemOutput describes, for one entry of the queue."""

    def brief(m):
        # A supporting episode forgotten since the proposal was made shows no text (governance.masking).
        return {"id": m.pk, "scope": m.scope.path, "kind": m.kind, "key": m.key, "revision": m.revision,
                "status": m.status, "text": masked_text(m.status, m.text), "session": m.session}

    return {
        "kind": item.kind,
        "memory": {**brief(item.memory), "tier": item.memory.tier, "source_kind": item.memory.source_kind},
        "supporting_episodes": [brief(e) for e in item.supporting],
        "conflicting": brief(item.conflicting) if item.conflicting else None,
        "approvals": item.approvals,
        "approvals_needed": item.approvals_needed,
        "can_confirm": item.can_confirm,
    }


class ReviewQueueView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(responses=ReviewItemOutput(many=True))
    def get(self, request: Request) -> Response:
        principal = request_principal(request)
        query = valid(ReviewQueueInput, request.query_params)
        scope = governed_scope(principal, query["scope"]) if query.get("scope") else None
        return Response([review_item(i) for i in review_queue(principal=principal, scope=scope)])
