"""The seeded suite against the real pipeline (PostgreSQL + pgvector, the real embedder): the full
strategy passes every category, and each weaker strategy fails the categories whose stage it lacks."""

import pytest
from django.db import transaction

from devtools.evaluation.generator import generate
from devtools.evaluation.runner import resolve_strategies, run_suite, summarise
from devtools.evaluation.scorers import CATEGORY_NEEDS
from devtools.evaluation.suite import CATEGORIES
from governance.models import AuditEvent, Memory, Turn
from governance.recall import STRATEGIES

SEED = 7


class _Undo(Exception):
    pass


@pytest.fixture(scope="module")
def results(django_db_setup, django_db_blocker):
    """One run of the smoke suite (every category, EN and ZH) over every strategy, rolled back after."""
    with django_db_blocker.unblock():
        try:
            with transaction.atomic():
                root = "eval-test-suite"
                out = summarise(run_suite(generate("smoke", SEED), resolve_strategies("all"), root=root))
                # Only this run's scopes: other processes may write to the database meanwhile.
                out["_left_behind"] = (
                    Memory.objects.filter(scope__path__startswith=root).count(),
                    Turn.objects.filter(scope__path__startswith=root).count(),
                    AuditEvent.objects.filter(scope_path__startswith=root).count(),
                )
                raise _Undo
        except _Undo:
            pass
    return out


@pytest.mark.parametrize("category", CATEGORIES)
def test_full_strategy_passes_every_category(results, category):
    full = results["strategies"]["full"]
    failed = [f for f in results["failures"] if f["strategy"] == "full" and f["category"] == category]
    assert full["categories"][category] == 1.0, failed


@pytest.mark.parametrize("category", CATEGORIES)
def test_weaker_strategies_fail_the_categories_whose_stage_they_lack(results, category):
    needed = CATEGORY_NEEDS[category]
    lacking = [s for s in STRATEGIES if needed not in STRATEGIES[s]]
    assert lacking, f"every strategy has {needed}: the category would not measure it"
    for strategy in lacking:
        assert results["strategies"][strategy]["categories"][category] <= 0.5, (strategy, category)


def test_no_strategy_ever_shows_a_memory_from_another_scope(results):
    assert {s: body["metrics"]["cross_scope_recalls"] for s, body in results["strategies"].items()} == {
        s: 0 for s in results["strategies"]
    }


def test_the_ablation_orders_recent_below_vector_below_full(results):
    overall = {s: body["overall"] for s, body in results["strategies"].items()}
    assert overall["recent"] < overall["vector"] < overall["full"]
    assert list(overall)[-1] == "full"


def test_full_is_strictly_above_every_ablation(results):
    overall = {s: body["overall"] for s, body in results["strategies"].items()}
    assert all(overall["full"] > score for s, score in overall.items() if s != "full"), overall


@pytest.mark.parametrize("category", ["stale_episode", "episode_correction", "exact_term"])
def test_only_full_passes_the_provenance_and_exact_term_categories(results, category):
    passed = {s: body["categories"][category] for s, body in results["strategies"].items()}
    assert passed["full"] == 1.0 and all(v == 0.0 for s, v in passed.items() if s != "full"), passed


def test_results_carry_the_metrics_and_the_run_leaves_nothing_behind(results):
    metrics = results["strategies"]["full"]["metrics"]
    assert metrics["constraint_retention"] == 1.0
    assert 0 < metrics["evidence_recall@10"] <= 1 and metrics["input_tokens_mean"] > 0
    assert metrics["context_ms_p50"] > 0 and metrics["errors"] == 0
    assert results["metrics"]["full"] == metrics
    assert results["_left_behind"] == (0, 0, 0)


def test_every_verdict_is_kept_and_a_failure_says_what_the_packet_held(results):
    outcomes = results["outcomes"]
    assert len(outcomes) == results["tasks"] * len(results["strategies"])
    assert {tuple(o[:3]) for o in outcomes if not o[3]} == {
        (f["task"], f["category"], f["strategy"]) for f in results["failures"]
    }
    held = [b for f in results["failures"] for b in f["held"]]
    assert held and all({"slot", "memory_id", "text"} <= set(b) for b in held)
