"""Relations made by hand: a curator or owner links two memories (supports, contradicts, derived from)
with a reason, or removes a link with a reason. The services decide who may (governance.permissions);
a refused link changes nothing."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.limits import GOVERNANCE
from governance.api.relations.serializers import RelationCreateInput, RelationOutput, RelationRemoveInput
from governance.api.schema import ERROR_RESPONSES
from governance.api.validation import valid
from governance.services.relation import relation_link, relation_unlink


class RelationsView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(
        operation_id="relations_create",
        request=RelationCreateInput,
        responses={201: RelationOutput, **ERROR_RESPONSES},
        summary="Link two memories of one workspace by hand (curator or owner on the source's scope).",
    )
    def post(self, request: Request) -> Response:
        data = valid(RelationCreateInput, request.data)
        relation = relation_link(
            source_id=data["source"],
            target_id=data["target"],
            kind=data["kind"],
            reason=data["reason"],
            actor=request_principal(request),
        )
        return Response(RelationOutput(relation).data, status=status.HTTP_201_CREATED)


class RelationDetailView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(
        operation_id="relations_destroy",
        request=RelationRemoveInput,
        responses={200: RelationOutput, **ERROR_RESPONSES},
        summary="Remove a link, with a reason (a supersedes link is a revision's history and stays).",
    )
    def delete(self, request: Request, relation_id: int) -> Response:
        data = valid(RelationRemoveInput, request.data)
        relation = relation_unlink(
            relation_id=relation_id, reason=data["reason"], actor=request_principal(request)
        )
        return Response(RelationOutput(relation).data)
