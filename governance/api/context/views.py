"""Recall and context: the read path of a turn. Recall returns the k best memories for a query; context
assembles (and stores as a turn) the packet within a token budget."""

from __future__ import annotations

from contextlib import contextmanager

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.context.serializers import (
    ContextInput,
    ContextOutput,
    PinnedOverBudgetOutput,
    RecallInput,
    RecallOutput,
    StageOutput,
)
from governance.api.limits import CONTEXT
from governance.api.schema import ERROR_RESPONSES
from governance.api.validation import valid
from governance.errors import NotFound
from governance.permissions import ScopeAccess, scope_access
from governance.recall import assemble_context, recall_memories
from governance.recall.packet import embed_ahead
from governance.runtime import tracing
from governance.runtime.replica import routed_read, served_by

# `in` is a Python keyword: declared through the fields mapping below.


StageOutput._declared_fields["in"] = serializers.IntegerField()
StageOutput._declared_fields["out"] = serializers.IntegerField()


def _visible_access(principal, path: str) -> ScopeAccess:
    """scope_visible's answer (NotFound unless the caller can see the scope) together with the caller's
    roles and the visible scope ids, in one query: the read path then checks its role without asking
    the database again."""
    access = scope_access(principal, path)
    if access is None or not access.visible:
        raise NotFound()
    return access


@contextmanager
def embedding_ahead(data: dict, principal):
    """The query's embedding, started before the caller's access to the scope is read (the two overlap;
    packet.embed_ahead). If the request fails on the way (404, a bad field), the embedding is cancelled
    when it has not started, and otherwise left to finish into the query cache."""
    pending = embed_ahead(data["query"], data["strategy"], principal)
    try:
        yield pending
    except BaseException:
        if pending is not None:
            pending.cancel()
        raise


class RecallView(APIView):
    rate_bucket = CONTEXT

    @extend_schema(
        operation_id="recall",
        request=RecallInput,
        responses={200: RecallOutput, **ERROR_RESPONSES},
        summary="The k best memories for a query (fused vector + keyword search, ranked).",
    )
    def post(self, request: Request) -> Response:
        principal = request_principal(request)
        data = valid(RecallInput, request.data)
        with embedding_ahead(data, principal) as embedding:
            with tracing.timing("access"):  # the caller's roles and the visible scopes, one query
                scope = _visible_access(principal, data["scope"])
            with tracing.timing("service"):  # the recall itself; Server-Timing's `app` is the whole request
                results = routed_read(
                    scope.scope.workspace_id,
                    lambda: recall_memories(
                        principal=principal,
                        scope=scope,
                        query=data["query"],
                        k=data["k"],
                        strategy=data["strategy"],
                        as_of=data.get("as_of"),
                        embedding=embedding,
                    ),
                )
        return Response({"results": results, "served_by": served_by()})


class ContextView(APIView):
    rate_bucket = CONTEXT

    @extend_schema(
        operation_id="context",
        request=ContextInput,
        responses={200: ContextOutput, 422: PinnedOverBudgetOutput, **ERROR_RESPONSES},
        summary="Assemble (and store as a turn) the context packet for one turn within a token budget.",
    )
    def post(self, request: Request) -> Response:
        principal = request_principal(request)
        data = valid(ContextInput, request.data)
        with embedding_ahead(data, principal) as embedding:
            with tracing.timing("access"):  # the caller's roles and the visible scopes, one query
                scope = _visible_access(principal, data["scope"])
            task = dict(data["task"]) if data.get("task") else None
            with tracing.timing("service"):
                result = routed_read(
                    scope.scope.workspace_id,
                    lambda: assemble_context(
                        principal=principal,
                        scope=scope,
                        query=data["query"],
                        budget_tokens=data["budget_tokens"],
                        strategy=data["strategy"],
                        task=task,
                        as_of=data.get("as_of"),
                        session=data.get("session", ""),
                        embedding=embedding,
                        include=tuple(data.get("include") or ()),
                    ),
                )
        return Response({**result, "served_by": served_by()})
