"""Memory views: one per operation. They read input with validation.valid, call a service or a selector
with the acting principal, and shape the output; permission checks happen in the services through
governance.permissions (403 with a reason; 404 when the memory lies outside the caller's scopes)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.limits import GOVERNANCE, CappedPagination
from governance.api.memories import serializers as s
from governance.api.operations.views import outbox_state
from governance.api.schema import ERROR_RESPONSES
from governance.api.validation import valid
from governance.models import Outbox
from governance.selectors.memory import memory_get, memory_list, scope_visible
from governance.services import memory as memory_services
from governance.services.memory import MemoryInput, memory_record, memory_supersede
from governance.services.review import memory_repropose, proposal_confirm


class MemoriesView(APIView):
    pagination_class = CappedPagination  # also what the schema describes for the list

    @extend_schema(
        operation_id="memories_list",
        parameters=[s.MemoryListInput],
        responses={200: s.MemoryPageOutput, **ERROR_RESPONSES},
        summary="Memories the caller can see (within the scope's subtree when given), newest first.",
    )
    def get(self, request: Request) -> Response:
        principal = request_principal(request)
        query = valid(s.MemoryListInput, request.query_params)
        scope = scope_visible(principal, query["scope"]) if query.get("scope") else None
        qs = memory_list(
            principal=principal,
            scope=scope,
            status=query.get("status"),
            kind=query.get("kind"),
            key=query.get("key"),
            q=query.get("q"),
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(s.MemoryOutput(page, many=True).data)

    @extend_schema(
        operation_id="memories_create",
        request=s.MemoryCreateInput,
        responses={201: s.MemoryOutput, 200: s.MemoryOutput, **ERROR_RESPONSES},
        summary="Write a memory. `active` needs the right to confirm; otherwise a candidate or proposal. A "
        "repeat of a memory of its scope is not stored: 200 with that memory, reinforced (`near_duplicate`); "
        "except a person's `active` write of a statement still waiting for review, stored in force (201).",
    )
    def post(self, request: Request) -> Response:
        principal = request_principal(request)
        data = valid(s.MemoryCreateInput, request.data)
        scope = scope_visible(principal, data["scope"])
        item = MemoryInput(
            scope=scope,
            kind=data["kind"],
            key=data.get("key"),
            text=data["text"],
            source_kind=data["source"]["kind"],
            source_ref=data["source"].get("ref", ""),
            status=data.get("status"),
            confidence=data.get("confidence", 0.5),
            importance=data.get("importance", 0.5),
            tier=data.get("tier"),
            task_type=data.get("task_type", ""),
            valid_from=data.get("valid_from"),
            valid_until=data.get("valid_until"),
            session=data.get("session", ""),
        )
        memory = memory_record(item=item, actor=principal)
        # A repeat stored nothing (200, the memory it repeats, reinforced); anything else was created.
        repeated = (getattr(memory, "near_duplicate", None) or {}).get("decision") == "reinforced"
        return Response(
            s.MemoryOutput(memory).data, status=status.HTTP_200_OK if repeated else status.HTTP_201_CREATED
        )


class MemoryDetailView(APIView):
    @extend_schema(operation_id="memories_retrieve", responses={200: s.MemoryOutput, **ERROR_RESPONSES})
    def get(self, request: Request, memory_id: int) -> Response:
        memory = memory_get(principal=request_principal(request), memory_id=memory_id)
        return Response(s.MemoryOutput(memory).data)


class MemorySupersedeView(APIView):
    @extend_schema(
        operation_id="memories_supersede",
        request=s.SupersedeInput,
        responses={201: s.MemoryOutput, **ERROR_RESPONSES},
        summary="Write the next revision and mark this one superseded, atomically.",
    )
    def post(self, request: Request, memory_id: int) -> Response:
        principal = request_principal(request)
        data = valid(s.SupersedeInput, request.data)
        old = memory_get(principal=principal, memory_id=memory_id)
        new = memory_supersede(
            memory_id=old.pk,
            text=data["text"],
            reason=data["reason"],
            source_kind=data["source"]["kind"],
            source_ref=data["source"].get("ref", ""),
            actor=principal,
        )
        return Response(s.MemoryOutput(new).data, status=status.HTTP_201_CREATED)


class MemoryConfirmView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(request=s.ReasonInput, responses=s.MemoryStateOutput)
    def post(self, request: Request, memory_id: int) -> Response:
        data = valid(s.ReasonInput, request.data)
        memory = proposal_confirm(
            memory_id=memory_id, actor=request_principal(request), reason=data["reason"]
        )
        return Response(s.MemoryStateOutput(memory).data)


class MemoryRejectView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(request=s.RequiredReasonInput, responses=s.MemoryStateOutput)
    def post(self, request: Request, memory_id: int) -> Response:
        data = valid(s.RequiredReasonInput, request.data)
        memory = memory_services.memory_reject(
            memory_id=memory_id, actor=request_principal(request), reason=data["reason"]
        )
        return Response(s.MemoryStateOutput(memory).data)


class MemoryReproposeView(APIView):
    """Undo a rejection: a new proposal with the rejected memory's text, derived from it (201)."""

    rate_bucket = GOVERNANCE

    @extend_schema(
        operation_id="memories_repropose",
        request=s.RequiredReasonInput,
        responses={201: s.MemoryOutput, **ERROR_RESPONSES},
        summary="Propose a rejected memory again: a new proposal derived from it; the rejected one stays rejected.",
    )
    def post(self, request: Request, memory_id: int) -> Response:
        data = valid(s.RequiredReasonInput, request.data)
        memory = memory_repropose(
            memory_id=memory_id, actor=request_principal(request), reason=data["reason"]
        )
        return Response(s.MemoryOutput(memory).data, status=status.HTTP_201_CREATED)


class MemoryRetireView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(request=s.RequiredReasonInput, responses=s.MemoryStateOutput)
    def post(self, request: Request, memory_id: int) -> Response:
        data = valid(s.RequiredReasonInput, request.data)
        memory = memory_services.memory_retire(
            memory_id=memory_id, actor=request_principal(request), reason=data["reason"]
        )
        if memory.four_eyes_pending is not None:  # 202: recorded, waiting for a second curator or owner
            return Response(
                {**s.MemoryStateOutput(memory).data, "four_eyes_pending": memory.four_eyes_pending.as_dict()},
                status=status.HTTP_202_ACCEPTED,
            )
        return Response(s.MemoryStateOutput(memory).data)


class MemoryForgetView(APIView):
    """202: the memory is out of every read now; the derived stores follow (state per store)."""

    rate_bucket = GOVERNANCE

    @extend_schema(request=s.ForgetInput, responses={202: s.ForgetOutput})
    def post(self, request: Request, memory_id: int) -> Response:
        data = valid(s.ForgetInput, request.data)
        memory = memory_services.memory_forget(
            memory_id=memory_id,
            actor=request_principal(request),
            reason=data["reason"],
            hard=data["mode"] == "hard",
        )
        if (
            memory.four_eyes_pending is not None
        ):  # nothing forgotten yet: a second curator or owner must ask too
            return Response(
                {
                    "memory": s.MemoryStateOutput(memory).data,
                    "mode": data["mode"],
                    "propagation": None,
                    "reached": [],  # nothing was forgotten yet
                    "four_eyes_pending": memory.four_eyes_pending.as_dict(),
                },
                status=status.HTTP_202_ACCEPTED,
            )
        outbox = (
            Outbox.objects.filter(memory=memory, topic="memory.forgotten")
            .prefetch_related("deliveries")
            .order_by("-pk")
            .first()
        )
        body = {
            "memory": s.MemoryStateOutput(memory).data,
            "mode": data["mode"],
            "propagation": outbox_state(outbox) if outbox else None,
            "reached": getattr(memory, "reached", []),
        }
        return Response(body, status=status.HTTP_202_ACCEPTED)
