"""A scope's summary beside the scope it summarises (the overview's "Summary" panel): the stored lines
with the memories they cite, its staleness, when and by whom it was built; and the rebuild button."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from governance.permissions import Action, can, scope_by_path
from governance.selectors.dashboard.summaries import scope_summary
from governance.services.summary import summary_build
from memoryui.forms.summary import SCOPE_REQUIRED, SummaryRebuildForm  # noqa: F401  (where it was)
from memoryui.views.base import cleaned, dashboard_view


def summary_context(principal, scope) -> dict:
    """The overview's summary panel: nothing until a scope is focused."""
    if scope is None:
        return {"summary_panel": {"scope": None}}
    return {
        "summary_panel": {
            "scope": scope,
            "view": scope_summary(principal, scope),
            "can_rebuild": can(principal, scope, Action.READ),
        }
    }


@require_POST
@dashboard_view()
def summary_rebuild(request):
    """Build the focused scope's summary now from its current memories (audited as summary.build)."""
    data = cleaned(SummaryRebuildForm(request.POST))
    scope = scope_by_path(request.principal, data["scope"])
    summary_build(scope=scope, actor=request.principal, reason=data["reason"] or "rebuilt from the dashboard")
    messages.success(request, f"Summary of {scope.path} rebuilt.")
    return redirect(f"/?{urlencode({'scope': scope.path})}#summary")
