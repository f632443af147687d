"""Migration 0052: the GIN indexes a write or a recall reads keep a short pending list, and the planner has
statistics of scope, status and kind together (docs/benchmarks.md, "Near-duplicates at write")."""

from __future__ import annotations

import importlib

from django.db import connection

READ_COSTS = importlib.import_module("governance.migrations.0052_read_costs")


def _gin_indexes() -> dict[str, list[str] | None]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, c.reloptions FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid"
            " JOIN pg_am am ON am.oid = c.relam"
            " WHERE am.amname = 'gin' AND x.indrelid IN ('governance_memory'::regclass, 'governance_turn'::regclass)"
        )
        return dict(cursor.fetchall())


def test_every_gin_index_of_memories_and_turns_keeps_a_64_kb_pending_list(db):
    found = _gin_indexes()
    # A new GIN index on these tables joins the list (and the migration that makes it sets the limit).
    assert set(found) == set(READ_COSTS.INDEXES)
    for name, options in found.items():
        assert options and f"gin_pending_list_limit={READ_COSTS.LIMIT_KB}" in options, (name, options)


def test_the_planner_has_statistics_of_scope_status_and_kind_together(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.stxkind, array_agg(a.attname ORDER BY a.attname) FROM pg_statistic_ext s"
            " JOIN pg_attribute a ON a.attrelid = s.stxrelid AND a.attnum = ANY(s.stxkeys)"
            " WHERE s.stxname = %s GROUP BY s.stxkind",
            [READ_COSTS.STATISTICS],
        )
        ((kinds, columns),) = cursor.fetchall()
    assert set(kinds) == {"m", "f"} and columns == ["kind", "scope_id", "status"]
