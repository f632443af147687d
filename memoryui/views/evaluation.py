"""Evaluation: the history of runs (paged), the latest replay-suite results beside the latest uploaded
conversation file's retrieval figures, one run's page with every task or question and, for a failing
one, what was expected and what the packet held (an uploaded file's run: its misses, per category, each
with its gold answer, evidence turns and top hits); and the upload of a LoCoMo or
LongMemEval file, evaluated by a Celery task (owners of a workspace and site administrators)."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import JsonResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from governance.evaluation.misses import TURN_TEXT
from governance.evaluation.report import recall_by_category
from governance.evaluation.retrieval import KS
from governance.evaluation.runs import UPLOAD_FORMATS, UploadTooLarge, evaluation_request, upload_limit
from governance.models import EvaluationRun
from governance.permissions import evaluation_roots, workspace_by_slug
from governance.selectors import dashboard as sel
from governance.selectors.dashboard.evaluation import (
    RETRIEVAL_PREFIX,
    evaluation_run_for,
    evaluation_runs_page,
    latest_retrieval_run,
    run_miss_categories,
    run_misses_page,
)
from memoryui.forms.evaluation import (  # noqa: F401  (the messages tests reuse, where they were)
    FILE_REQUIRED,
    WORKSPACE_REQUIRED,
    EvaluationChartForm,
    EvaluationPageForm,
    EvaluationRunPageForm,
    EvaluationUploadForm,
)
from memoryui.views.base import cleaned, dashboard_view, page, page_links

TASKS_PER_PAGE = 50


def _table(run) -> dict:
    """The replay suite's table: per strategy, overall and per category (share of checks passed)."""
    strategies = (run.results or {}).get("strategies", {}) if run else {}
    categories = sorted({c for s in strategies.values() for c in (s.get("categories") or {})})
    metrics = sorted({m for s in strategies.values() for m in (s.get("metrics") or {})})
    # jsonb keeps no key order: show the strategies in the order the run lists them (the ablation ladder).
    order = [s for s in (getattr(run, "strategies", None) or []) if isinstance(s, str)]
    names = [n for n in order if n in strategies] + sorted(n for n in strategies if n not in order)
    rows = [
        {
            "name": name,
            "overall": s.get("overall"),
            "categories": [(s.get("categories") or {}).get(c) for c in categories],
            "metrics": [(s.get("metrics") or {}).get(m) for m in metrics],
        }
        for name, s in ((n, strategies[n]) for n in names)
    ]
    return {"rows": rows, "categories": categories, "metrics": metrics}


def _retrieval_table(run) -> dict:
    """An uploaded file's table: per search path, recall@1/5/10 overall and per category, newer-first on
    knowledge updates, and latency."""
    strategies = (run.results or {}).get("strategies", {}) if run else {}
    order = [s for s in (run.strategies or []) if s in strategies] if run else []
    names = order + sorted(n for n in strategies if n not in order)
    categories = sorted({c for s in strategies.values() for c in (s.get("categories") or {})})
    rows = []
    for name in names:
        s = strategies[name]
        every = s.get("all") or {}
        rows.append(
            {
                "name": name,
                "all": [every.get(f"recall@{k}") for k in KS],
                "categories": [
                    ((s.get("categories") or {}).get(c) or {}).get("recall@5") for c in categories
                ],
                "newer_first": (s.get("newer_first") or {}).get("rate"),
                "p50": s.get("latency_ms_p50"),
                "p95": s.get("latency_ms_p95"),
                "errors": len(s.get("errors") or []),
            }
        )
    counts = (
        {
            c: ((strategies.get(names[0], {}).get("categories") or {}).get(c) or {}).get("questions")
            for c in categories
        }
        if names
        else {}
    )
    return {
        "rows": rows,
        "categories": [(c, counts.get(c)) for c in categories],
        "ks": KS,
        "recall": recall_by_category((run.results if run else None) or {}),
    }


def is_retrieval(run) -> bool:
    return bool(run) and run.suite.startswith(RETRIEVAL_PREFIX)


@dashboard_view()
def evaluation(request):
    runs = evaluation_runs_page(request.principal, cleaned(EvaluationPageForm(request.GET))["page"])
    replay = sel.latest_evaluation()
    retrieval = latest_retrieval_run(request.principal)
    return page(
        request,
        "dashboard/evaluation.html",
        {
            "run": replay,
            "table": _table(replay),
            "retrieval": retrieval,
            "retrieval_table": _retrieval_table(retrieval) if retrieval else None,
            "runs": runs,
            "links": page_links(request, runs),
            "roots": evaluation_roots(request.principal),
            "formats": UPLOAD_FORMATS,
            "upload_limit": upload_limit(),
            "nav": "evaluation",
        },
    )


@dashboard_view()
def evaluation_run(request, run_id: int):
    """One run: its figures and its tasks (failing first), paged; `?show=all` lists the passing ones too."""
    query = cleaned(EvaluationRunPageForm(request.GET))
    run = evaluation_run_for(request.principal, run_id)
    show_all = query["show"]
    if is_retrieval(run):
        tasks = list((run.results or {}).get("tasks") or [])
        context = {
            "retrieval_table": _retrieval_table(run) if run.state == EvaluationRun.State.DONE else None
        }
        if not show_all:  # the misses, with their texts; `?show=all` lists every question's verdict
            misses = run_misses_page(run, query["page"])
            for miss in misses.object_list:
                _describe_miss(miss)
            return page(
                request,
                "dashboard/evaluation_run.html",
                {
                    **context,
                    "run": run,
                    "retrieval": True,
                    "misses": misses,
                    "misses_view": True,
                    "turn_text": TURN_TEXT,
                    "top_k": max(KS),
                    "miss_categories": run_miss_categories(run),
                    "links": page_links(request, misses),
                    "task_count": len(tasks),
                    "failing": sum(1 for t in tasks if not t["passed"]),
                    "nav": "evaluation",
                },
            )
    else:
        tasks = _replay_tasks(run)
        context = {"table": _table(run)}
    failing = sum(1 for t in tasks if not t["passed"])
    listed = tasks if show_all else [t for t in tasks if not t["passed"]]
    listed.sort(key=lambda t: (t["passed"], t.get("category") or "", str(t.get("id") or t.get("task"))))
    tasks_page = Paginator(listed, TASKS_PER_PAGE).get_page(query["page"])
    return page(
        request,
        "dashboard/evaluation_run.html",
        {
            **context,
            "run": run,
            "retrieval": is_retrieval(run),
            "tasks_page": tasks_page,
            "links": page_links(request, tasks_page),
            "task_count": len(tasks),
            "failing": failing,
            "show_all": show_all,
            "nav": "evaluation",
            "failure_count": (run.results or {}).get("failure_count"),
        },
    )


def _describe_miss(miss) -> None:
    """What the miss's summary line says: how many evidence turns the top 10 held, and the best rank."""
    ranks = sorted(e["rank"] for e in miss.evidence if e.get("rank"))
    miss.found = len(ranks)
    miss.best_rank = ranks[0] if ranks else None


def _replay_tasks(run) -> list[dict]:
    """A replay run's tasks: every verdict stored ([task, category, strategy, passed]; runs stored before
    per-task verdicts list only their failures), each failure with its reasons and what the packet held."""
    results = run.results or {}
    failures = {(f["task"], f["strategy"]): f for f in results.get("failures") or []}
    outcomes = results.get("outcomes")
    if outcomes is None:
        outcomes = [[f["task"], f["category"], f["strategy"], False] for f in failures.values()]
    tasks = []
    for task, category, strategy, passed in outcomes:
        failure = failures.get((task, strategy), {})
        tasks.append(
            {
                "id": task,
                "category": category,
                "strategy": strategy,
                "passed": bool(passed),
                "failures": failure.get("failures", []),
                "held": failure.get("held", []),
                "listed": bool(failure) or passed,
            }
        )
    return tasks


@require_POST
@dashboard_view()
def evaluation_upload(request):
    """Check the file and queue its evaluation; the page of the new run shows its state until done."""
    data = cleaned(EvaluationUploadForm(request.POST, request.FILES))
    upload = data["file"]
    if upload.size > upload_limit():  # refused before the file is read into memory
        raise UploadTooLarge(
            f"The file is {upload.size} bytes; an evaluation upload is at most {upload_limit()} bytes.",
            field="file",
        )
    workspace = workspace_by_slug(request.principal, data["workspace"])
    run = evaluation_request(
        workspace=workspace,
        name=upload.name,
        content=upload.read(),
        fmt=data["format"],
        actor=request.principal,
    )
    messages.success(
        request, f"Evaluation of {upload.name} queued as run {run.pk}: a worker imports and measures it."
    )
    return redirect("dashboard:evaluation-run", run_id=run.pk)


@dashboard_view(json=True)
def evaluation_json(request):
    """The chart's data: a run the caller may see (`?run=`), else the latest replay-suite run."""
    run_id = cleaned(EvaluationChartForm(request.GET))["run"]
    run = evaluation_run_for(request.principal, run_id) if run_id else sel.latest_evaluation()
    if is_retrieval(run):
        table = _retrieval_table(run)
        return JsonResponse(
            {
                "run": run.pk,
                "kind": "retrieval",
                "categories": [c for c, _ in table["categories"]],
                "rows": [
                    {"name": r["name"], "overall": r["all"][1], "categories": r["categories"]}
                    for r in table["rows"]
                ],
            }
        )
    return JsonResponse({"run": run.pk if run else None, "kind": "replay", **_table(run)})
