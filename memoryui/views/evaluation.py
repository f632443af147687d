"""Evaluation: the latest results of the replay suite, per strategy (the ablations) and per category."""

from __future__ import annotations

from django.http import JsonResponse

from governance.selectors import dashboard as sel
from memoryui.views.base import dashboard_view, page


def _table(run) -> dict:
    strategies = (run.results or {}).get("strategies", {}) if run else {}
    categories = sorted({c for s in strategies.values() for c in (s.get("categories") or {})})
    metrics = sorted({m for s in strategies.values() for m in (s.get("metrics") or {})})
    # jsonb keeps no key order: show the strategies in the order the run lists them (the ablation ladder).
    order = [s for s in (getattr(run, "strategies", None) or []) if isinstance(s, str)]
    names = [n for n in order if n in strategies] + sorted(n for n in strategies if n not in order)
    rows = [
        {"name": name, "overall": s.get("overall"),
         "categories": [(s.get("categories") or {}).get(c) for c in categories],
         "metrics": [(s.get("metrics") or {}).get(m) for m in metrics]}
        for name, s in ((n, strategies[n]) for n in names)
    ]
    return {"rows": rows, "categories": categories, "metrics": metrics}


@dashboard_view()
def evaluation(request):
    run = sel.latest_evaluation()
    return page(request, "dashboard/evaluation.html", {"run": run, "table": _table(run), "nav": "evaluation"})


@dashboard_view(json=True)
def evaluation_json(request):
    run = sel.latest_evaluation()
    return JsonResponse({"run": run.pk if run else None, **_table(run)})
