"""Portability API: export a scope subtree as JSON lines (streamed), and import such a file under a scope
(docs/portability.md). Who may do either is governance.permissions (Action.EXPORT, Action.IMPORT), asked by
the services."""

from __future__ import annotations

from django.conf import settings
from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.limits import GOVERNANCE
from governance.api.portability.export_schema import EXPORT_LINE
from governance.api.portability.serializers import ScopeImportInput, ScopeImportOutput
from governance.api.validation import valid
from governance.errors import DomainError
from governance.models import Scope
from governance.permissions import scope_by_id
from governance.services.portability import scope_export, scope_import

IMPORT_TOO_LARGE = (
    "The import file is larger than the {limit} bytes this service accepts; use manage.py import_scope."
)


class ImportTooLarge(DomainError):
    code = "import_too_large"
    status = 413


def export_filename(scope: Scope) -> str:
    return scope.path.replace("/", "_") + ".jsonl"


def streamed_export(scope: Scope, actor) -> StreamingHttpResponse:
    """The export as a download, streamed line by line (shared by the API and the dashboard)."""
    response = StreamingHttpResponse(
        scope_export(root=scope, actor=actor), content_type="application/x-ndjson; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{export_filename(scope)}"'
    response["Cache-Control"] = "no-store"
    return response


def import_upload(*, scope: Scope, upload, name: str | None, grants: str, preview: bool, actor):
    """Import an uploaded export file under `scope` (shared by the API and the dashboard)."""
    limit = settings.PORTABILITY_IMPORT_MAX_BYTES
    if upload.size > limit:
        raise ImportTooLarge(IMPORT_TOO_LARGE.format(limit=limit))
    into = f"{scope.path}/{name}" if name else scope.path
    return scope_import(lines=upload, into=into, actor=actor, grants=grants, dry_run=preview)


class ScopeExportView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(
        operation_id="scopes_export",
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(
                EXPORT_LINE,
                "JSON lines: each line is one `ExportLine` (by its `type`), header first and "
                "end last, in the order of docs/portability.md.",
            )
        },
        summary="Export the scope's subtree as JSON lines (curators and owners; streamed).",
    )
    def get(self, request: Request, scope_id: int):
        actor = request_principal(request)
        return streamed_export(scope_by_id(actor, scope_id), actor)


class ScopeImportView(APIView):
    rate_bucket = GOVERNANCE
    parser_classes = [MultiPartParser]

    @extend_schema(
        operation_id="scopes_import",
        request={"multipart/form-data": ScopeImportInput},
        responses={201: ScopeImportOutput, 200: OpenApiResponse(ScopeImportOutput, "a preview")},
        summary="Import an export file into this scope or a new child of it (owners of the target).",
    )
    def post(self, request: Request, scope_id: int) -> Response:
        actor = request_principal(request)
        scope = scope_by_id(actor, scope_id)
        data = valid(ScopeImportInput, request.data)
        result = import_upload(
            scope=scope,
            upload=data["file"],
            name=data.get("name"),
            grants=data["grants"],
            preview=data["preview"],
            actor=actor,
        )
        body = {
            "root": result.root.path,
            "preview": data["preview"],
            "import_id": None if data["preview"] else result.scope_import.pk,
            "counts": dict(result.counts),
        }
        return Response(
            ScopeImportOutput(body).data,
            status=status.HTTP_200_OK if data["preview"] else status.HTTP_201_CREATED,
        )
