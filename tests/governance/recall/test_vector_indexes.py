"""Per-scope vector indexes (governance/recall/vector_index.py) and the search over them
(governance/recall/vector.py): big scopes get a partial HNSW index, the search uses it and agrees with
exact search, nothing outside the visible scopes or no longer in force comes back, and maintenance builds,
keeps and drops indexes as scopes grow and shrink."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from governance.models import Memory, Status
from governance.recall import vector, vector_index
from governance.recall.eligible import WITH_SUPERSEDED, WITHOUT_SUPERSEDED, Eligibility
from governance.services.memory import MemoryInput, memory_forget, memory_record_batch, memory_retire
from governance.services.scope import scope_ensure

DIMS = 384
pytestmark = pytest.mark.django_db


def _unit(rng: np.random.Generator, base: np.ndarray | None = None, noise: float = 1.0) -> np.ndarray:
    v = rng.normal(size=DIMS) * noise + (0 if base is None else base)
    return (v / np.linalg.norm(v)).astype(np.float32)


def _fill(scope, n: int, rng: np.random.Generator, *, status: str = "active") -> list[Memory]:
    """n memories in `scope` with clustered vectors set directly (the embedder is tested elsewhere)."""
    created = memory_record_batch(
        items=[
            MemoryInput(
                scope=scope, kind="episodic", text=f"{scope.path} note {i}", status=status, source_kind="user"
            )
            for i in range(n)
        ],
        actor=None,
    )
    centres = [_unit(rng) for _ in range(4)]
    for i, memory in enumerate(created):
        Memory.objects.filter(pk=memory.pk).update(
            embedding=_unit(rng, centres[i % 4] * 3, 1.0),
            embedding_model="test",
            embedding_hash=memory.content_hash,
        )
    return created


def _eligibility(*scopes, statuses=WITHOUT_SUPERSEDED) -> Eligibility:
    return Eligibility(scope_ids=tuple(s.pk for s in scopes), statuses=statuses, at=timezone.now())


@pytest.fixture
def tree(db):
    root = scope_ensure(path="vx", actor=None)
    big = scope_ensure(path="vx/big", actor=None)
    small = scope_ensure(path="vx/big/small", actor=None)
    sibling = scope_ensure(path="vx/sib", actor=None)
    rng = np.random.default_rng(7)
    rows = {
        "root": _fill(root, 12, rng),
        "big": _fill(big, 60, rng),
        "small": _fill(small, 5, rng),
        "sibling": _fill(sibling, 40, rng),
    }
    with connection.cursor() as cursor:  # settle the deferred checks: CREATE INDEX refuses pending triggers
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    return {"root": root, "big": big, "small": small, "sibling": sibling, "rng": rng, "rows": rows}


def test_maintenance_indexes_the_big_scopes_only(tree):
    report = vector_index.maintain(min_rows=30, max_indexes=10)
    assert sorted(report["built"]) == sorted([tree["big"].pk, tree["sibling"].pk])
    assert vector_index.indexed_scope_ids() == {tree["big"].pk, tree["sibling"].pk}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s", [vector_index.index_name(tree["big"].pk)]
        )
        definition = cursor.fetchone()[0]
    assert "hnsw" in definition and f"scope_id = {tree['big'].pk}" in definition
    # Idempotent: a second run keeps what is there.
    again = vector_index.maintain(min_rows=30, max_indexes=10)
    assert again["built"] == [] and sorted(again["kept"]) == sorted([tree["big"].pk, tree["sibling"].pk])


def test_the_cap_keeps_the_largest_scopes(tree):
    report = vector_index.maintain(min_rows=10, max_indexes=1)
    assert report["built"] == [tree["big"].pk]


def test_search_uses_the_scope_index_and_agrees_with_exact(tree):
    vector_index.maintain(min_rows=30, max_indexes=10)
    elig = _eligibility(tree["root"], tree["big"], tree["small"])
    rng = tree["rng"]
    for _ in range(10):
        q = _unit(rng)
        plan: dict = {}
        auto = vector.nearest(elig, q, 10, plan=plan)
        exact = vector.nearest(elig, q, 10, mode="exact")
        assert plan == {"hnsw": [tree["big"].pk], "exact": [tree["root"].pk, tree["small"].pk]}
        assert [i for i, _ in auto] == [i for i, _ in exact]
        assert all(a >= b for (_, a), (_, b) in zip(auto, auto[1:], strict=False))  # best first


@pytest.mark.django_db(transaction=True)
def test_a_search_outside_a_transaction_is_one_round_trip_and_its_settings_end_with_it(tree):
    """A request reads in autocommit: the planner settings and the indexed search go as one message (one
    implicit transaction), not BEGIN, settings, search, COMMIT; they hold for the search (same answer as
    inside a transaction, and as exact) and not a statement longer."""
    vector_index.maintain(min_rows=30, max_indexes=10)
    elig = _eligibility(tree["root"], tree["big"], tree["small"])
    assert not connection.in_atomic_block
    vector_index.indexed_scope_ids()  # the catalogue, read once per process and interval
    for _ in range(5):
        q = _unit(tree["rng"])
        with CaptureQueriesContext(connection) as sent:
            auto = vector.nearest(elig, q, 10)
        # the settings, then the search: two statements sent in one pipeline (one round trip, both prepared)
        assert [q["sql"].startswith("SELECT set_config") for q in sent.captured_queries] == [True, False]
        with transaction.atomic():
            inside = vector.nearest(elig, q, 10)
        assert auto == inside and [i for i, _ in auto] == [
            i for i, _ in vector.nearest(elig, q, 10, mode="exact")
        ]
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('enable_seqscan'), current_setting('hnsw.iterative_scan')")
            assert cursor.fetchone() == ("on", "off")
    with connection.cursor() as cursor:  # prepared, and run again from the second search on
        cursor.execute(
            "SELECT generic_plans + custom_plans FROM pg_prepared_statements WHERE statement LIKE 'WITH q AS%%'"
        )
        runs = [n for (n,) in cursor.fetchall()]
    assert runs and max(runs) >= 4, runs


@pytest.mark.django_db(transaction=True)
def test_without_prepared_statements_the_settings_and_the_search_are_one_message(tree, settings):
    vector_index.maintain(min_rows=30, max_indexes=10)
    settings.DB_PREPARED_STATEMENTS = False
    elig = _eligibility(tree["root"], tree["big"], tree["small"])
    vector_index.indexed_scope_ids()  # the catalogue, read once per process and interval
    q = _unit(tree["rng"])
    with CaptureQueriesContext(connection) as sent:
        auto = vector.nearest(elig, q, 10)
    assert len(sent.captured_queries) == 1 and "set_config" in sent.captured_queries[0]["sql"]
    assert [i for i, _ in auto] == [i for i, _ in vector.nearest(elig, q, 10, mode="exact")]
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('enable_seqscan')")
        assert cursor.fetchone() == ("on",)


def test_the_indexed_statement_really_walks_the_hnsw_index(tree):
    vector_index.maintain(min_rows=30, max_indexes=10)
    where, params = _eligibility(tree["big"]).where("m")
    vec = vector.vector_literal(_unit(tree["rng"]))
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("SET LOCAL enable_seqscan = off")
        sql, args = vector._query(
            [(vector._statement(f"m.scope_id = {tree['big'].pk}", where), [*params, 10])], vec
        )
        cursor.execute("EXPLAIN " + sql, args)
        plan = "\n".join(r[0] for r in cursor.fetchall())
    assert vector_index.index_name(tree["big"].pk) in plan


def test_no_sibling_and_nothing_out_of_force_comes_back_through_an_index(tree):
    vector_index.maintain(min_rows=30, max_indexes=10)
    big = tree["rows"]["big"]
    retired, forgotten = big[0], big[1]
    memory_retire(memory_id=retired.pk, actor=None, reason="wrong")
    memory_forget(memory_id=forgotten.pk, actor=None, reason="asked to", hard=True)
    elig = _eligibility(tree["root"], tree["big"], statuses=WITH_SUPERSEDED)
    sibling_ids = {m.pk for m in tree["rows"]["sibling"]}
    for memory in (retired, forgotten, tree["rows"]["sibling"][0]):
        q = (
            Memory.objects.filter(pk=tree["rows"]["sibling"][0].pk).values_list("embedding", flat=True)[0]
            if memory.pk in sibling_ids
            else np.array(_unit(tree["rng"]))
        )
        ids = [i for i, _ in vector.nearest(elig, q, 70)]
        assert retired.pk not in ids and forgotten.pk not in ids
        assert not sibling_ids & set(ids)
    # A retired memory's vector is still stored (retired is not forgotten); the filter, not the index, hides it.
    assert Memory.objects.get(pk=retired.pk).status == Status.RETIRED


def test_an_empty_chain_finds_nothing(db):
    assert (
        vector.nearest(
            Eligibility(scope_ids=(), statuses=WITHOUT_SUPERSEDED, at=timezone.now()),
            np.ones(DIMS) / np.sqrt(DIMS),
            5,
        )
        == []
    )


def test_a_shrunken_scope_loses_its_index_and_an_invalid_leftover_is_dropped(tree):
    vector_index.maintain(min_rows=30, max_indexes=10)
    # Below half the threshold: dropped. (Between half and the threshold it would be kept.)
    Memory.objects.filter(pk__in=[m.pk for m in tree["rows"]["sibling"][:30]]).update(status=Status.RETIRED)
    report = vector_index.maintain(min_rows=30, max_indexes=10)
    assert report["dropped"] == [tree["sibling"].pk]
    assert vector_index.indexed_scope_ids() == {tree["big"].pk}
    # An interrupted CONCURRENTLY build leaves an invalid index behind: maintenance drops it and rebuilds.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass",
            [vector_index.index_name(tree["big"].pk)],
        )
    vector_index.forget_known()  # what another process sees once its cached catalogue read expires
    assert vector_index.indexed_scope_ids() == set()  # never queried while invalid
    report = vector_index.maintain(min_rows=30, max_indexes=10)
    assert report["dropped_invalid"] == [tree["big"].pk] and report["built"] == [tree["big"].pk]


def test_the_hysteresis_keeps_an_index_near_the_line(tree):
    vector_index.maintain(min_rows=30, max_indexes=10)
    Memory.objects.filter(pk__in=[m.pk for m in tree["rows"]["sibling"][:15]]).update(status=Status.RETIRED)
    report = vector_index.maintain(min_rows=30, max_indexes=10)  # 25 rows left: above 15, below 30
    assert tree["sibling"].pk in report["kept"] and report["dropped"] == []


def test_the_dry_run_changes_nothing(tree):
    report = vector_index.maintain(min_rows=30, max_indexes=10, dry_run=True)
    assert sorted(report["built"]) == sorted([tree["big"].pk, tree["sibling"].pk])
    assert vector_index.existing() == {}


def test_the_beat_task_is_scheduled():
    from django.conf import settings

    entries = {e["task"] for e in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "governance.tasks.maintain_vector_indexes" in entries


def test_the_command_lists_and_builds(tree):
    import json
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("vector_indexes", "--min-rows", "30", "--json", stdout=out)
    listed = {r["scope"]: r["state"] for r in json.loads(out.getvalue())["scopes"]}
    assert listed == {"vx/big": "missing", "vx/sib": "missing"}
    out = StringIO()
    call_command("vector_indexes", "--build", "--min-rows", "30", stdout=out)
    assert "built 2" in out.getvalue() and "2 ready" in out.getvalue()
