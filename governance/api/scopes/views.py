"""Scopes API: an agent opens the task scope it works in (POST), and lists the scopes it can read (GET).
Who may open a scope is governance.permissions.require_create_child_scope, asked by the service."""

from __future__ import annotations

import re

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.scopes.serializers import (
    ScopeCreatedOutput,
    ScopeCreateInput,
    ScopeListInput,
    ScopeOutput,
)
from governance.api.validation import valid
from governance.permissions import governed_scopes, scope_by_path
from governance.services.scope import scope_create_child

MAX_LISTED = 500


class ScopesView(APIView):
    @extend_schema(
        operation_id="scopes_list",
        parameters=[ScopeListInput],
        responses={200: ScopeOutput(many=True)},
        summary="The scopes the caller can read (at most 500), by path.",
    )
    def get(self, request: Request) -> Response:
        query = valid(ScopeListInput, request.query_params)
        scopes = (
            governed_scopes(request_principal(request)).select_related("parent", "workspace").order_by("path")
        )
        under = (query.get("under") or "").strip().strip("/")
        if under:
            scopes = scopes.filter(path__regex=r"^" + re.escape(under) + r"(/|$)")
        return Response(ScopeOutput(scopes[:MAX_LISTED], many=True).data)

    @extend_schema(
        operation_id="scopes_create",
        request=ScopeCreateInput,
        responses={201: ScopeCreatedOutput, 200: ScopeCreatedOutput},
        summary="Open a child scope (e.g. a task) under one where the caller may write; 200 if it exists.",
    )
    def post(self, request: Request) -> Response:
        data = valid(ScopeCreateInput, request.data)
        actor = request_principal(request)
        scope, created = scope_create_child(
            parent=scope_by_path(actor, data["parent"]), name=data["name"], actor=actor
        )
        body = {**ScopeOutput(scope).data, "created": created}
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
