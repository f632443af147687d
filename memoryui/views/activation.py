"""A memory's activation over time: its points as JSON, and the curve drawn on the server as SVG for its page."""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render
from django.utils import timezone

from governance.selectors import dashboard as sel
from memoryui import svgcharts
from memoryui.views.base import chart_time, dashboard_view
from memoryui.views.charts import curve


@dashboard_view(json=True)
def memory_activation_json(request, memory_id: int):
    memory = sel.memory_for_reader(request.principal, memory_id)
    data, changes = _activation_history(memory)
    return JsonResponse(
        {
            "x": [chart_time(t) for t in data["x"]],
            "y": data["y"],
            "reinforcements": [
                {"at": chart_time(t), "y": y, "weight": w} for t, y, w in data["reinforcements"]
            ],
            "changes": [{"at": chart_time(e.at), "to": e.after_status, "action": e.action} for e in changes],
            "threshold": _threshold(),
            "label": str(memory.key or f"memory {memory.pk}"),
        }
    )


@dashboard_view()
def memory_activation_chart(request, memory_id: int):
    """The activation curve drawn on the server as SVG (memoryui/svgcharts.py), asked for by the memory's
    page once it is shown."""
    memory = sel.memory_for_reader(request.principal, memory_id)
    data, changes = _activation_history(memory)
    chart = svgcharts.activation_curve(
        xs=data["x"],
        ys=data["y"],
        reinforcements=data["reinforcements"],
        changes=[(e.at, e.after_status) for e in changes],
        threshold=_threshold(),
    )
    return render(request, "dashboard/charts/_svgchart.html", {"chart": chart})


def _activation_history(memory):
    """The memory's sampled activation from its start (or first reinforcement) to now, and its changes of
    state."""
    events = [(e.at, e.weight) for e in sel.memory_reinforcements(memory)]
    start = memory.occurred_at or memory.created_at
    until = timezone.now()
    first = min([start, *(at for at, _ in events)])
    since = min(first, until) - (until - first) * 0.02
    data = curve(
        a0=memory.activation_a0, decay=memory.decay_rate, start=start, events=events, since=since, until=until
    )
    return data, sel.status_changes([memory.pk]).get(memory.pk, [])


def _threshold() -> float:
    return settings.MEMORY_COLD_THRESHOLD
