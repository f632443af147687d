"""Evaluation runs as the dashboard lists them: every run the principal may see (the site-wide replay
suite's, and its workspaces' uploaded-file runs), newest first and paged, with a headline figure read
from the results in SQL (the list never loads a run's per-task details)."""

from __future__ import annotations

from django.core.paginator import Page
from django.db.models import Count, Q, QuerySet
from django.db.models.fields.json import KT

from governance.errors import NotFound
from governance.models import EvaluationMiss, EvaluationRun, Principal
from governance.permissions import evaluation_workspace_ids
from governance.selectors.dashboard.common import paginate

RUNS_PER_PAGE = 25
MISSES_PER_PAGE = 50
RETRIEVAL_PREFIX = "retrieval:"


def visible_runs(principal: Principal) -> QuerySet[EvaluationRun]:
    ids = evaluation_workspace_ids(principal)
    qs = EvaluationRun.objects.all()
    if ids is not None:
        qs = qs.filter(Q(workspace__isnull=True) | Q(workspace_id__in=ids))
    return qs


def evaluation_runs_page(principal: Principal, page: int | str = 1, per_page: int = RUNS_PER_PAGE) -> Page:
    """One page of runs, newest first: suite, state, size, time, who, and the `full` strategy's headline
    (the replay suite's share of tasks passed; a retrieval run's recall@5). Two queries."""
    qs = (
        visible_runs(principal)
        .select_related("workspace", "started_by")
        .defer("results", "upload", "environment")
        .annotate(
            replay_overall=KT("results__strategies__full__overall"),
            retrieval_recall5=KT("results__strategies__full__all__recall@5"),
        )
        .order_by("-created_at", "-pk")
    )
    return paginate(qs, page, per_page)


def evaluation_run_for(principal: Principal, run_id: int) -> EvaluationRun:
    """One run the principal may see; the same NotFound for an unknown id and another workspace's run."""
    run = (
        visible_runs(principal)
        .select_related("workspace", "started_by")
        .defer("upload")
        .filter(pk=run_id)
        .first()
    )
    if run is None:
        raise NotFound()
    return run


def latest_retrieval_run(principal: Principal) -> EvaluationRun | None:
    """The newest finished uploaded-file run the principal may see (shown beside the replay suite's)."""
    return (
        visible_runs(principal)
        .filter(suite__startswith=RETRIEVAL_PREFIX, state=EvaluationRun.State.DONE)
        .select_related("workspace")
        .defer("upload")
        .order_by("-created_at", "-pk")
        .first()
    )


def run_misses_page(run: EvaluationRun, page: int | str = 1, per_page: int = MISSES_PER_PAGE) -> Page:
    """One page of the misses a run kept, by category then file order. `run` comes from
    evaluation_run_for: whoever may see the run may see its misses, nobody else. Two queries."""
    return paginate(EvaluationMiss.objects.filter(run=run).order_by("position"), page, per_page)


def run_miss_categories(run: EvaluationRun) -> dict[str, int]:
    """How many misses the run kept in each category (the page's headings). One query."""
    rows = EvaluationMiss.objects.filter(run=run).values("category").annotate(n=Count("pk")).order_by()
    return {row["category"]: row["n"] for row in rows}
