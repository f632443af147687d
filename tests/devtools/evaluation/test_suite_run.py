"""The seeded suite against the real pipeline (PostgreSQL + pgvector, the real embedder): the full
strategy passes every category, and each weaker strategy fails the categories whose stage it lacks."""

import pytest

from devtools.evaluation.runner import summarise
from devtools.evaluation.scorers import CATEGORY_NEEDS
from devtools.evaluation.suite import CATEGORIES
from governance.recall import STRATEGIES

# The run is the session's smoke_suite_run (tests/conftest.py, seed 7), shared with the screenshot test.
# Marked so that pytest-django sets up the test database when only this file runs (no test here asks for
# `db`; without any, the run would go to the development database and find no tables).
pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def results(smoke_suite_run):
    """The smoke suite (every category, EN and ZH) over every strategy, summarised."""
    result, left_behind = smoke_suite_run
    return {**summarise(result), "_left_behind": left_behind}


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
