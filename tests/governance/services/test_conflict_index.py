"""Conflict detection's trigram query (services/conflict.find_conflicts) never reads the trigram index of
the whole table. It reads the scope's active unkeyed statements by id when they are few
(`conflict.FEW`), and otherwise has an index of the rows it can return (migration 0046): active, unkeyed
statements of the checked kinds, by scope. Through the whole table's index, every scope and status, a
write took over a second at 100k memories (docs/benchmarks.md, "Conflict detection at write")."""

from __future__ import annotations

import importlib
import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance.models import Memory, Relation, RelationKind
from governance.services import conflict
from governance.services.conflict import CHECKED_KINDS
from governance.services.memory import MemoryInput, memory_record

INDEX = "memory_active_statement_trgm"


def _write(scope, text, status):
    return memory_record(
        item=MemoryInput(scope=scope, kind="convention", text=text, source_kind="user", status=status),
        actor=None,
    )


def test_the_index_holds_the_kinds_conflict_detection_checks(db):
    for name in ("0046_active_statement_trigram", "0053_active_statement_scope"):
        migration = importlib.import_module(f"governance.migrations.{name}")
        kinds = re.search(r"kind IN \(([^)]*)\)", migration.INDEX).group(1)
        assert {k.strip(" '") for k in kinds.split(",")} == {str(k) for k in CHECKED_KINDS}
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [INDEX])
        (definition,) = cursor.fetchone()
    assert "gin (scope_id, lexical gin_trgm_ops)" in definition
    assert "'active'" in definition and "key IS NULL" in definition


def _write_scene(project_scope, sibling_scope):
    rule = _write(project_scope, "Always export the quarterly deck as PPTX for the client.", "active")
    for i in range(30):  # rows neither route returns: candidates here, statements of another scope
        _write(project_scope, f"The quarterly deck number {i} was exported for the client.", "candidate")
        _write(sibling_scope, f"Always export the quarterly deck number {i} as PDF.", "active")
    with CaptureQueriesContext(connection) as ctx:
        said = _write(project_scope, "Never export the quarterly deck as PPTX for the client.", "candidate")
    assert set(
        Relation.objects.filter(source=said, kind=RelationKind.CONTRADICTS).values_list(
            "target_id", flat=True
        )
    ) == {rule.pk}
    assert Memory.objects.get(pk=said.pk).status == "proposed"
    return rule, [q["sql"] for q in ctx.captured_queries if "similarity" in q["sql"] or " % " in q["sql"]]


def test_a_scope_with_few_rules_compares_them_by_id_and_never_reads_a_trigram_index(
    project_scope, sibling_scope
):
    with CaptureQueriesContext(connection) as ctx:
        rule, queries = _write_scene(project_scope, sibling_scope)
    # First the ids, in id order, from the index of active unkeyed statements by scope (0053): ordered, the
    # read cannot be a scan hoping to stop early, whatever the planner expects the scope to hold.
    first = [  # the last write's (the contradiction)
        q["sql"]
        for q in ctx.captured_queries
        if q["sql"].startswith('SELECT "governance_memory"."id" AS "pk" FROM "governance_memory"')
        and '"governance_memory"."key" IS NULL' in q["sql"]
        and "LIMIT 501" in q["sql"]
        and f'"scope_id" = {project_scope.pk}' in q["sql"]
    ][-1]
    assert "ORDER BY 1 ASC LIMIT 501" in first, first  # 1: the id
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + first)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("SET LOCAL enable_seqscan = on")
    assert "memory_active_statement_scope" in plan, plan
    (sql,) = [q for q in queries if "governance_memory" in q]
    # The scope's one rule, by id; similarity as a function, which no index can serve (`%` could).
    assert " % " not in sql and f"IN ({rule.pk})" in sql, sql
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a few rows: any route would do otherwise
        cursor.execute("EXPLAIN " + sql)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "governance_memory_pkey" in plan and "Index Scan on memory_" not in plan, plan


def test_above_few_rules_the_trigram_query_can_use_the_index_and_still_finds_the_contradiction(
    project_scope, sibling_scope, monkeypatch
):
    monkeypatch.setattr(conflict, "FEW", 0)
    _rule, queries = _write_scene(project_scope, sibling_scope)
    (sql,) = [q for q in queries if " % " in q and "governance_memory" in q]
    with connection.cursor() as cursor:
        # A test database of a few rows would be read by any route: take away every other index the planner
        # could read (in the test's transaction, rolled back after it) and sequential scans, so the plan shows
        # whether it can prove the partial index's predicate from the query's WHERE.
        cursor.execute(
            "SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid"
            " WHERE x.indrelid = 'governance_memory'::regclass AND i.relname <> %s"
            " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)",
            [INDEX],
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f'DROP INDEX "{name}"')
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert f"Bitmap Index Scan on {INDEX}" in plan, plan


def test_the_trigram_threshold_is_read_on_a_connection_that_has_not_loaded_pg_trgm(
    transactional_db, project_scope
):
    """pg_trgm's settings exist in a session only once the library is loaded there (by its first trigram
    function), so `current_setting('pg_trgm.similarity_threshold')` as a new connection's first use of
    pg_trgm was an error, and the four-eyes contradiction check a 500."""
    kept = _write(project_scope, "Client files are kept for seven years.", "active")
    connection.close()  # the next query opens a new session, pg_trgm not loaded in it
    found = list(conflict.similar_by_id([kept.pk], "client files are never kept for seven years"))
    assert found == [kept]
