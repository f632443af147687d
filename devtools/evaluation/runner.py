"""Running the suite: each task is loaded into its own scopes, every strategy assembles a packet for
the task's question, the category's scorer judges it, and the metrics are collected. By default each
task runs inside a transaction that is rolled back afterwards, so an evaluation leaves no memories,
turns or audit events behind (`keep=True` commits them, to look at the turns in the dashboard)."""

from __future__ import annotations

import secrets
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from devtools.evaluation import scorers
from devtools.evaluation.generator import SUITES, generate
from devtools.evaluation.loader import LoadedTask, Principals, ensure_principals, load_task
from devtools.evaluation.suite import CATEGORIES, Suite
from governance.errors import DomainError
from governance.evaluation.environment import environment
from governance.evaluation.retrieval import resolve_strategies
from governance.models import EvaluationRun

RECALL_KS = (1, 5, 10)


class _Rollback(Exception):
    """Raised to undo one task's writes once it has been scored."""


@dataclass
class Outcome:
    task_id: str
    category: str
    lang: str
    strategy: str
    passed: bool
    failures: list[str]
    ms: float
    recall_ms: float
    tokens: int
    cross_scope: int
    retained: tuple[int, int]
    stale_used: bool | None
    evidence_recall: dict[int, float] | None
    error: str = ""
    # For a failed task: what the packet held (slot, memory id, the start of its text), for the drill-down.
    held: list[dict] = field(default_factory=list)


@dataclass
class RunResult:
    suite: Suite
    strategies: list[str]
    outcomes: list[Outcome] = field(default_factory=list)
    duration_s: float = 0.0


def run_suite(
    suite: Suite,
    strategies: list[str],
    *,
    keep: bool = False,
    root: str | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> RunResult:
    root = root or f"eval-{timezone.now():%Y%m%d%H%M%S}-{secrets.token_hex(3)}"
    result = RunResult(suite=suite, strategies=strategies)
    started = time.perf_counter()
    for i, task in enumerate(suite.tasks):
        try:
            with transaction.atomic():
                # Inside the task's transaction, so a rolled-back run leaves no scope, grant or audit event.
                principals = ensure_principals(root)
                loaded = load_task(task, root=root, principals=principals)
                result.outcomes.extend(_run_task(loaded, strategies, principals))
                if not keep:
                    raise _Rollback
        except _Rollback:
            pass
        if progress:
            progress(i + 1, len(suite.tasks), task.id)
    result.duration_s = time.perf_counter() - started
    return result


def _run_task(loaded: LoadedTask, strategies: list[str], principals: Principals) -> list[Outcome]:
    from governance.recall import assemble_context, recall_memories

    task = loaded.task
    out = []
    for strategy in strategies:
        started = time.perf_counter()
        try:
            with transaction.atomic():
                response = assemble_context(
                    principal=principals.agent,
                    scope=loaded.scope,
                    query=task.query,
                    budget_tokens=task.budget_tokens,
                    strategy=strategy,
                    task={"goal": task.goal, "state": ""},
                    session=task.session,
                    store=True,
                )
        except DomainError as exc:
            out.append(_error(task, strategy, f"{exc.code}: {exc.message}"))
            continue
        ms = (time.perf_counter() - started) * 1000
        packet = response["packet"]
        started = time.perf_counter()
        ranked = recall_memories(
            principal=principals.agent,
            scope=loaded.scope,
            query=task.query,
            k=max(RECALL_KS),
            strategy=strategy,
        )
        recall_ms = (time.perf_counter() - started) * 1000
        ranked_ids = [int(r["memory_id"]) for r in _results(ranked)]
        verdict = scorers.score(task, packet, loaded.ids)
        packet_ids = set(scorers.placements(packet))
        out.append(
            Outcome(
                task_id=task.id,
                category=task.category,
                lang=task.lang,
                strategy=strategy,
                passed=verdict.passed,
                failures=verdict.failures,
                ms=ms,
                recall_ms=recall_ms,
                tokens=int((response.get("budget") or {}).get("used") or 0),
                cross_scope=len(packet_ids - loaded.visible_ids) + len(set(ranked_ids) - loaded.visible_ids),
                retained=scorers.constraint_retention(task, packet, loaded.ids),
                stale_used=scorers.stale_used(task, packet, loaded.ids),
                evidence_recall=_evidence_recall(task.expect.evidence, loaded, ranked_ids),
                held=[] if verdict.passed else _held(packet),
            )
        )
    return out


HELD_BLOCKS = 30


def _held(packet: dict) -> list[dict]:
    """What a packet held, block by block (slot, memory id, start of the text): a failed task's evidence."""
    return [
        {"slot": slot, "memory_id": block.get("memory_id"), "text": str(block.get("text") or "")[:200]}
        for slot, block in scorers.blocks(packet)
    ][:HELD_BLOCKS]


def _results(ranked) -> list[dict]:
    return ranked["results"] if isinstance(ranked, dict) else list(ranked)


def _evidence_recall(
    labels: tuple[str, ...], loaded: LoadedTask, ranked_ids: list[int]
) -> dict[int, float] | None:
    wanted = {loaded.ids[label].id for label in labels if label in loaded.ids}
    if not labels:
        return None
    return {k: len(wanted & set(ranked_ids[:k])) / len(labels) for k in RECALL_KS}


def _error(task, strategy: str, message: str) -> Outcome:
    return Outcome(
        task_id=task.id,
        category=task.category,
        lang=task.lang,
        strategy=strategy,
        passed=False,
        failures=[message],
        ms=0.0,
        recall_ms=0.0,
        tokens=0,
        cross_scope=0,
        retained=(0, 0),
        stale_used=None,
        evidence_recall=None,
        error=message,
    )


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summarise(result: RunResult, max_failures: int = 200) -> dict:
    """The results document: {"strategies": {name: {"overall", "categories", "metrics"}}, "metrics": …}."""
    by_strategy: dict[str, list[Outcome]] = defaultdict(list)
    for o in result.outcomes:
        by_strategy[o.strategy].append(o)
    strategies = {}
    for name in result.strategies:
        rows = by_strategy.get(name, [])
        categories = {
            c: round(sum(o.passed for o in cat) / len(cat), 4)
            for c in CATEGORIES
            if (cat := [o for o in rows if o.category == c])
        }
        strategies[name] = {
            "overall": round(sum(o.passed for o in rows) / len(rows), 4) if rows else 0.0,
            "categories": categories,
            "metrics": _metrics(rows),
        }
    failures = [
        {
            "task": o.task_id,
            "category": o.category,
            "strategy": o.strategy,
            "failures": o.failures[:5],
            "held": o.held,
        }
        for o in result.outcomes
        if not o.passed
    ]
    return {
        "suite": result.suite.name,
        "seed": result.suite.seed,
        "fingerprint": result.suite.fingerprint(),
        "tasks": len(result.suite.tasks),
        "duration_s": round(result.duration_s, 2),
        "strategies": strategies,
        "metrics": {name: body["metrics"] for name, body in strategies.items()},
        "failures": failures[:max_failures],
        "failure_count": len(failures),
        # Every task's verdict per strategy, compact: [task, category, strategy, passed].
        "outcomes": [[o.task_id, o.category, o.strategy, o.passed] for o in result.outcomes],
    }


def _metrics(rows: list[Outcome]) -> dict:
    ok = [o for o in rows if not o.error]
    kept = sum(o.retained[0] for o in ok)
    expected = sum(o.retained[1] for o in ok)
    stale = [o.stale_used for o in ok if o.stale_used is not None]
    recalls = [o.evidence_recall for o in ok if o.evidence_recall]
    ms = [o.ms for o in ok]
    return {
        "constraint_retention": round(kept / expected, 4) if expected else None,
        "stale_use_rate": round(sum(stale) / len(stale), 4) if stale else None,
        "cross_scope_recalls": sum(o.cross_scope for o in ok),
        **{
            f"evidence_recall@{k}": round(statistics.fmean(r[k] for r in recalls), 4) if recalls else None
            for k in RECALL_KS
        },
        "input_tokens_mean": round(statistics.fmean(o.tokens for o in ok), 1) if ok else None,
        "input_tokens_p95": _pct([o.tokens for o in ok], 0.95),
        "context_ms_p50": round(_pct(ms, 0.5), 1),
        "context_ms_p95": round(_pct(ms, 0.95), 1),
        "recall_ms_p50": round(_pct([o.recall_ms for o in ok], 0.5), 1),
        "errors": len(rows) - len(ok),
    }


def evaluate(
    *,
    suite: str = "standard",
    seed: int = 0,
    strategy: str = "all",
    keep: bool = False,
    per_cell: int | None = None,
    categories: tuple[str, ...] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> EvaluationRun:
    """Generate, run, summarise and store one evaluation run (shown by the dashboard)."""
    strategies = resolve_strategies(strategy)
    generated = generate(suite, seed, per_cell=per_cell, categories=categories)
    result = run_suite(generated, strategies, keep=keep, progress=progress)
    return store_run(result, per_cell=per_cell or SUITES[suite], categories=categories)


def store_run(
    result: RunResult, *, per_cell: int, categories: tuple[str, ...] | None = None
) -> EvaluationRun:
    """Summarise a finished run and store it as an evaluation run (what the dashboard's page lists)."""
    summary = {
        **summarise(result),
        "per_cell": per_cell,
        "categories_run": list(categories or CATEGORIES),
    }
    return EvaluationRun.objects.create(
        suite=result.suite.name,
        seed=result.suite.seed,
        strategies=result.strategies,
        task_count=len(result.suite.tasks),
        duration_s=result.duration_s,
        environment=environment(),
        results=summary,
    )
