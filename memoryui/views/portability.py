"""Export and import: download a scope subtree as JSON lines (curators and owners), and import such a file
under a scope one owns, with a preview of what it would bring before anything is changed. The same
services as manage.py export_scope / import_scope and the API (docs/portability.md)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from governance.api.portability.views import import_upload, streamed_export
from governance.errors import DomainError, InvalidInput
from governance.permissions import NO_GRANT, Action, scope_by_id, scope_by_path, standings
from governance.selectors import dashboard as sel
from governance.services.portability.import_ import GRANTS_DROP, GRANTS_KEEP
from memoryui.views.base import dashboard_view, page, scope_query

NO_FILE = "Choose an export file (.jsonl) to import."
UNKNOWN_TARGET = "Choose one of the scopes you own."


def _context(request) -> dict:
    roles = sel.MyRoles.of(request.principal)
    scopes = list(sel.governed_scopes_within(request.principal, request.scope).order_by("path"))
    context = {
        "exportable": [s for s in scopes if roles.can(s, Action.EXPORT)],
        "importable": [s for s in scopes if roles.can(s, Action.IMPORT)],
        "grant_choices": (GRANTS_DROP, GRANTS_KEEP),
        "nav": "portability",
    }
    if not context["importable"]:  # say what the person can do instead, and whom to ask
        context.update(standing=standings(request.principal), no_grant=NO_GRANT)
    return context


@dashboard_view()
def portability(request):
    return page(request, "dashboard/portability.html", _context(request))


@dashboard_view()
def scope_export_download(request, scope_id: int):
    """The export as a streamed download; the service asks the permissions (curators and owners)."""
    return streamed_export(scope_by_id(request.principal, scope_id), request.principal)


@require_POST
@dashboard_view()
def scope_import_upload(request):
    post = request.POST
    form = {
        "target": post.get("target", ""),
        "name": post.get("name", "").strip(),
        "grants": post.get("grants", GRANTS_DROP),
    }
    preview = post.get("action") == "preview"
    try:
        upload = request.FILES.get("file")
        if upload is None:
            raise InvalidInput(NO_FILE, field="file")
        target = scope_by_path(
            request.principal, form["target"], missing=InvalidInput(UNKNOWN_TARGET, field="target")
        )
        result = import_upload(
            scope=target,
            upload=upload,
            name=form["name"] or None,
            grants=form["grants"],
            preview=preview,
            actor=request.principal,
        )
    except DomainError as exc:
        return page(
            request,
            "dashboard/portability.html",
            {**_context(request), "error": exc, "form": form},
            status=exc.status,
        )
    if preview:
        return page(
            request,
            "dashboard/portability.html",
            {
                **_context(request),
                "form": form,
                "preview": {"root": result.root.path, "counts": dict(result.counts)},
            },
        )
    counts = result.counts
    messages.success(
        request,
        f"Imported into {result.root.path}: {counts['memories']} memories, "
        f"{counts['tombstones']} tombstones, {counts['relations']} relations, "
        f"{counts['audit']} source audit events kept with the import.",
    )
    return redirect("/memories/" + scope_query(request, scope=result.root.path))
