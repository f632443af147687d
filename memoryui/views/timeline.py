"""Timeline: how the activation of a scope's top memories decayed and was reinforced over a period."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.http import JsonResponse
from django.urls import reverse
from django.utils import timezone

from governance.errors import InvalidInput
from governance.selectors import dashboard as sel
from memoryui.views.base import chart_time, dashboard_view, page
from memoryui.views.charts import curve

PERIODS = {"1": "the last day", "7": "the last 7 days", "30": "the last 30 days", "90": "the last 90 days",
           "365": "the last year"}
BAD_PERIOD = "days is one of 1, 7, 30, 90 or 365."
BAD_TOP = "top is a whole number from 1 to 50."


def _params(request) -> tuple[int, int]:
    days = request.GET.get("days", "30")
    if days not in PERIODS:
        raise InvalidInput(BAD_PERIOD, field="days")
    try:
        top = int(request.GET.get("top", "12"))
    except ValueError as exc:
        raise InvalidInput(BAD_TOP, field="top") from exc
    if not 1 <= top <= 50:
        raise InvalidInput(BAD_TOP, field="top")
    return int(days), top


@dashboard_view()
def timeline(request):
    days, top = _params(request)
    return page(request, "dashboard/timeline.html", {
        "periods": PERIODS, "days": str(days), "top": top, "nav": "timeline",
    })


@dashboard_view(json=True)
def timeline_json(request):
    days, top = _params(request)
    until = timezone.now()
    since = until - timedelta(days=days)
    memories = sel.top_memories(request.principal, request.scope, limit=top)
    ids = [m.pk for m in memories]
    events = sel.reinforcements_for(ids)
    changes = sel.status_changes(ids, since=since)
    series = []
    for m in memories:
        start = m.occurred_at or m.created_at
        data = curve(a0=m.activation_a0, decay=m.decay_rate, start=start, events=events.get(m.pk, []),
                     since=since, until=until)
        label = f"{m.key} r{m.revision}" if m.key else f"#{m.pk} {m.kind}"
        series.append({
            "id": m.pk, "label": label, "text": m.text[:140], "url": reverse("dashboard:memory", args=[m.pk]),
            "x": [chart_time(t) for t in data["x"]], "y": data["y"],
            "reinforcements": [{"at": chart_time(t), "y": y, "weight": w} for t, y, w in data["reinforcements"]],
            "changes": [{"at": chart_time(e.at), "to": e.after_status} for e in changes.get(m.pk, [])],
        })
    return JsonResponse({"series": series, "threshold": settings.MEMORY_COLD_THRESHOLD,
                         "since": chart_time(since), "until": chart_time(until)})
