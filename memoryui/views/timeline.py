"""Timeline: how the activation of memories decayed and was reinforced over a period: a scope's most
activated memories, or those picked by search (`?m=<id>&m=<id>`, found with `?q=`). The chart's data is
also on the page as a table (the accessible fallback), computed once for both."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.http import JsonResponse
from django.urls import reverse
from django.utils import timezone

from governance.redaction.masking import masked_text
from governance.selectors import dashboard as sel
from memoryui.forms.timeline import BAD_PICK, PERIODS, TimelineForm  # noqa: F401  (BAD_PICK: tests reuse it here)
from memoryui.labels import memory_label
from memoryui.views.base import chart_time, cleaned, dashboard_view, page
from memoryui.views.charts import activation_at, curve
from memoryui.views.tombstone import timeline_tombstones

TABLE_COLUMNS = 6  # activation at this many evenly spaced times of the period, in the table fallback


def _params(request) -> tuple[int, int, list[int]]:
    data = cleaned(TimelineForm(request.GET))
    return data["days"], data["top"], data["m"]


def _series(request, days: int, top: int, picked: list[int]) -> dict:
    until = timezone.now()
    since = until - timedelta(days=days)
    # A forgotten memory has no curve to draw; the page shows its tombstone (memoryui.views.tombstone).
    forgotten = sel.forgotten_picks(request.principal, request.scope, picked)
    gone = {m.pk for m in forgotten}
    picked = [pk for pk in picked if pk not in gone]
    if forgotten and not picked:
        memories = []
    elif picked:
        memories = sel.timeline_memories(request.principal, request.scope, picked)
    else:
        memories = sel.top_memories(request.principal, request.scope, limit=top)
    ids = [m.pk for m in memories]
    events = sel.reinforcements_for(ids)
    changes = sel.status_changes(ids, since=since)
    columns = [since + (until - since) * i / (TABLE_COLUMNS - 1) for i in range(TABLE_COLUMNS)]
    series = []
    for m in memories:
        start = m.occurred_at or m.created_at
        history = events.get(m.pk, [])
        data = curve(
            a0=m.activation_a0, decay=m.decay_rate, start=start, events=history, since=since, until=until
        )
        label = memory_label(
            pk=m.pk,
            key=m.key,
            revision=m.revision,
            scope_path=m.scope.path,
            text=masked_text(m.status, m.text),
        )
        series.append(
            {
                "id": m.pk,
                "label": label,
                "text": masked_text(m.status, m.text)[:140],
                "status": m.status,
                "url": reverse("dashboard:memory", args=[m.pk]),
                "x": [chart_time(t) for t in data["x"]],
                "y": data["y"],
                "reinforcements": [
                    {"at": chart_time(t), "y": y, "weight": w} for t, y, w in data["reinforcements"]
                ],
                "changes": [{"at": chart_time(e.at), "to": e.after_status} for e in changes.get(m.pk, [])],
                "table": [activation_at(m.activation_a0, m.decay_rate, start, history, t) for t in columns],
            }
        )
    return {
        "series": series,
        "threshold": settings.MEMORY_COLD_THRESHOLD,
        "since": chart_time(since),
        "until": chart_time(until),
        "columns": [chart_time(t) for t in columns],
        "picked": bool(picked) or bool(forgotten),
        "column_times": columns,
        "tombstones": timeline_tombstones(forgotten),
    }


@dashboard_view()
def timeline(request):
    days, top, picked = _params(request)
    q = cleaned(TimelineForm(request.GET))["q"]
    data = _series(request, days, top, picked)
    chart = {k: v for k, v in data.items() if k not in ("column_times", "tombstones")}
    return page(
        request,
        "dashboard/timeline.html",
        {
            "periods": PERIODS,
            "days": str(days),
            "top": top,
            "nav": "timeline",
            "q": q,
            "picked": picked,
            "choices": sel.timeline_choices(request.principal, request.scope, q) if q else [],
            "chart": chart,
            "series": data["series"],
            "columns": data["column_times"],
            "tombstones": data["tombstones"],
            "threshold": settings.MEMORY_COLD_THRESHOLD,
        },
    )


@dashboard_view(json=True)
def timeline_json(request):
    days, top, picked = _params(request)
    data = _series(request, days, top, picked)
    data.pop("column_times")
    data["tombstones"] = [
        {"id": t["memory"].pk, "purged": t["purged"], "url": t["url"]} for t in data.pop("tombstones")
    ]
    return JsonResponse(data)
