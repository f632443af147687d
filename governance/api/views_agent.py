"""Agent API views: one view per operation. They parse input with an Input serializer, call a service
or a selector with the acting principal, and shape the output; permission checks happen in the
services through governance.permissions."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api import serializers_agent as s
from governance.api.auth import request_principal
from governance.api.limits import CappedPagination
from governance.errors import NotFound
from governance.masking import mask_turn
from governance.permissions import ScopeAccess, scope_access
from governance.recall import assemble_context, recall_memories
from governance.selectors.memory import memory_get, memory_list, scope_visible, turn_get
from governance.services.events import event_ingest
from governance.services.memory import MemoryInput, memory_record, memory_supersede

ERRORS = {400: s.ErrorOutput, 403: s.ErrorOutput, 404: s.ErrorOutput, 409: s.ErrorOutput}


def _visible_access(principal, path: str) -> ScopeAccess:
    """scope_visible's answer (NotFound unless the caller can see the scope) together with the caller's
    roles and the visible scope ids, in one query: the read path then checks its role without asking
    the database again."""
    access = scope_access(principal, path)
    if access is None or not access.visible:
        raise NotFound()
    return access


def _valid(serializer_class, data) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class MemoriesView(APIView):
    pagination_class = CappedPagination  # also what the schema describes for the list

    @extend_schema(
        operation_id="memories_list",
        parameters=[s.MemoryListQuery],
        responses={200: s.MemoryPageOutput, **ERRORS},
        summary="Memories the caller can see (within the scope's subtree when given), newest first.",
    )
    def get(self, request: Request) -> Response:
        principal = request_principal(request)
        query = _valid(s.MemoryListQuery, request.query_params)
        scope = scope_visible(principal, query["scope"]) if query.get("scope") else None
        qs = memory_list(principal=principal, scope=scope, status=query.get("status"), kind=query.get("kind"),
                         key=query.get("key"), q=query.get("q"))
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(s.MemoryOutput(page, many=True).data)

    @extend_schema(
        operation_id="memories_create",
        request=s.MemoryCreateInput,
        responses={201: s.MemoryOutput, **ERRORS},
        summary="Write a memory. `active` needs the right to confirm; otherwise a candidate or proposal.",
    )
    def post(self, request: Request) -> Response:
        principal = request_principal(request)
        data = _valid(s.MemoryCreateInput, request.data)
        scope = scope_visible(principal, data["scope"])
        item = MemoryInput(
            scope=scope, kind=data["kind"], key=data.get("key"), text=data["text"],
            source_kind=data["source"]["kind"], source_ref=data["source"].get("ref", ""),
            status=data.get("status"), confidence=data.get("confidence", 0.5),
            importance=data.get("importance", 0.5), tier=data.get("tier"), task_type=data.get("task_type", ""),
            valid_from=data.get("valid_from"), valid_until=data.get("valid_until"),
        )
        memory = memory_record(item=item, actor=principal)
        return Response(s.MemoryOutput(memory).data, status=status.HTTP_201_CREATED)


class MemoryDetailView(APIView):
    @extend_schema(operation_id="memories_retrieve", responses={200: s.MemoryOutput, **ERRORS})
    def get(self, request: Request, memory_id: int) -> Response:
        memory = memory_get(principal=request_principal(request), memory_id=memory_id)
        return Response(s.MemoryOutput(memory).data)


class MemorySupersedeView(APIView):
    @extend_schema(
        operation_id="memories_supersede",
        request=s.SupersedeInput,
        responses={201: s.MemoryOutput, **ERRORS},
        summary="Write the next revision and mark this one superseded, atomically.",
    )
    def post(self, request: Request, memory_id: int) -> Response:
        principal = request_principal(request)
        data = _valid(s.SupersedeInput, request.data)
        old = memory_get(principal=principal, memory_id=memory_id)
        new = memory_supersede(
            memory_id=old.pk, text=data["text"], reason=data["reason"], source_kind=data["source"]["kind"],
            source_ref=data["source"].get("ref", ""), actor=principal,
        )
        return Response(s.MemoryOutput(new).data, status=status.HTTP_201_CREATED)


class EventsView(APIView):
    @extend_schema(
        operation_id="events_create",
        request=s.EventInput,
        responses={201: s.EventOutput, **ERRORS},
        summary="Record one interaction: episodic memories per turn plus extracted candidates.",
    )
    def post(self, request: Request) -> Response:
        principal = request_principal(request)
        data = _valid(s.EventInput, request.data)
        scope = scope_visible(principal, data["scope"])
        created = event_ingest(scope=scope, session=data["session"], at=data.get("at"),
                               turns=[dict(t) for t in data["turns"]], actor=principal)
        return Response({"created": s.MemoryOutput(created, many=True).data}, status=status.HTTP_201_CREATED)


class RecallView(APIView):
    @extend_schema(
        operation_id="recall",
        request=s.RecallInput,
        responses={200: s.RecallOutput, **ERRORS},
        summary="The k best memories for a query (fused vector + keyword search, ranked).",
    )
    def post(self, request: Request) -> Response:
        principal = request_principal(request)
        data = _valid(s.RecallInput, request.data)
        scope = _visible_access(principal, data["scope"])
        results = recall_memories(principal=principal, scope=scope, query=data["query"], k=data["k"],
                                  strategy=data["strategy"], as_of=data.get("as_of"))
        return Response({"results": results})


class ContextView(APIView):
    @extend_schema(
        operation_id="context",
        request=s.ContextInput,
        responses={200: s.ContextOutput, 422: s.PinnedOverBudgetOutput, **ERRORS},
        summary="Assemble (and store as a turn) the context packet for one turn within a token budget.",
    )
    def post(self, request: Request) -> Response:
        principal = request_principal(request)
        data = _valid(s.ContextInput, request.data)
        scope = _visible_access(principal, data["scope"])
        task = dict(data["task"]) if data.get("task") else None
        result = assemble_context(
            principal=principal, scope=scope, query=data["query"], budget_tokens=data["budget_tokens"],
            strategy=data["strategy"], task=task, as_of=data.get("as_of"), session=data.get("session", ""),
        )
        return Response(result)


class TurnDetailView(APIView):
    @extend_schema(
        operation_id="turns_retrieve",
        parameters=[OpenApiParameter("turn_id", int, OpenApiParameter.PATH)],
        responses={200: s.TurnOutput, **ERRORS},
    )
    def get(self, request: Request, turn_id: int) -> Response:
        turn = turn_get(principal=request_principal(request), turn_id=turn_id)
        # A memory forgotten since the turn shows no text here, to any role (the dashboard masks the same way).
        return Response(s.TurnOutput(mask_turn(turn)).data)
