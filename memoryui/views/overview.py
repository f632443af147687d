"""Overview: what is in memory here, what waits for people, whether propagation keeps up."""

from __future__ import annotations

from django.http import JsonResponse
from django.shortcuts import render

from governance.selectors import dashboard as sel
from governance.selectors.disputes import dispute_queue_queryset
from memoryui import svgcharts
from memoryui.views.awaiting import awaiting_for, awaiting_sentence
from memoryui.views.base import dashboard_view, page
from memoryui.views.summary import summary_context


@dashboard_view()
def overview(request):
    counts = sel.overview_counts(request.principal, request.scope)
    # Beside the proposals: the disputes the review queue lists, and what of both this person decides.
    disputes = dispute_queue_queryset(principal=request.principal, scope=request.scope).count()
    awaiting = awaiting_for(request, request.scope)
    return page(
        request,
        "dashboard/overview.html",
        {
            "counts": counts,
            "disputes": disputes,
            "awaiting": awaiting,
            "awaiting_sentence": awaiting_sentence(awaiting),
            "health": sel.propagation_health(),
            "recent": sel.recent_audit(request.principal, request.scope),
            "nav": "overview",
            **summary_context(request.principal, request.scope),
        },
    )


@dashboard_view(json=True)
def activation_histogram_json(request):
    return JsonResponse(sel.activation_histogram(request.principal, request.scope))


@dashboard_view()
def activation_histogram_chart(request):
    """The same histogram drawn on the server as SVG, asked for by the overview once it is shown."""
    chart = svgcharts.histogram(sel.activation_histogram(request.principal, request.scope))
    return render(request, "dashboard/charts/_svgchart.html", {"chart": chart})
