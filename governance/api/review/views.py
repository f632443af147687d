"""The review queue: proposals, promotions and conflicts waiting for a person, in the scopes the caller
reviews. Confirm and reject are memory operations (governance/api/memories)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.limits import GOVERNANCE
from governance.api.review.serializers import ReviewItemOutput, ReviewQueueInput
from governance.api.validation import valid
from governance.permissions import scope_by_path
from governance.redaction.masking import masked_text
from governance.selectors.review import QueueFilter, encode_cursor, review_queue
from governance.services.review import with_revisions


def requirement_brief(memory, revision: str = "") -> dict | None:
    """What a reviewer reads of a requirement the user stated in a conversation, or None."""
    requirement = (memory.meta or {}).get("requirement")
    if not isinstance(requirement, dict) or requirement.get("type") is None:
        return None
    replaces = requirement.get("replaces")
    return {
        "type": requirement["type"],
        "session": memory.session,
        "turn": memory.source_ref,
        "replaces": replaces.get("memory_id") if isinstance(replaces, dict) else None,
        "ambiguous": [a["memory_id"] for a in requirement.get("ambiguous") or () if a.get("memory_id")],
        "revision": masked_text(memory.status, revision) if revision else None,
    }


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
        "requirement": requirement_brief(item.memory, item.revision),
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
            [
                review_item(i)
                for i in with_revisions(review_queue(principal=principal, scope=scope, filters=filters))
            ]
        )
