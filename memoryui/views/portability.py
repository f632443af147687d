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
from memoryui.forms.portability import NO_FILE, ScopeImportForm  # noqa: F401  (its message, where it was)
from memoryui.views.base import cleaned, dashboard_view, page, scope_query

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


def _shown(bound: ScopeImportForm) -> dict:
    """What the refused import form shows again: the values that were valid (never the file)."""
    return {k: bound.cleaned_data.get(k, "") for k in ("target", "name", "grants")}


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
    bound = ScopeImportForm(request.POST, request.FILES)
    preview = False
    try:
        data = cleaned(bound)
        preview = data["action"] == "preview"
        target = scope_by_path(
            request.principal, data["target"], missing=InvalidInput(UNKNOWN_TARGET, field="target")
        )
        result = import_upload(
            scope=target,
            upload=data["file"],
            name=data["name"] or None,
            grants=data["grants"],
            preview=preview,
            actor=request.principal,
        )
    except DomainError as exc:
        return page(
            request,
            "dashboard/portability.html",
            {**_context(request), "error": exc, "form": _shown(bound)},
            status=exc.status,
        )
    form = {k: data[k] for k in ("target", "name", "grants")}
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
