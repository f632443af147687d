"""Migration 0052: the GIN indexes a write or a recall reads keep a short pending list (docs/benchmarks.md,
"Near-duplicate check at write")."""

from __future__ import annotations

import importlib

from django.db import connection

from governance.models import fulltext

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
    assert READ_COSTS.LIMIT_KB == fulltext.GIN_PENDING_LIST_KB  # what a rebuilt index is given (benchmarks)
    for name, options in found.items():
        assert options and f"gin_pending_list_limit={READ_COSTS.LIMIT_KB}" in options, (name, options)


def test_a_trigram_search_over_memories_is_planned_from_a_small_sample_of_texts(db):
    """Migration 0054: the planner estimates a fuzzy match by running it on every common value and histogram
    entry kept for `lexical`; the column keeps ten of each, so planning the fallback stays well under its run."""
    from governance.models import Memory
    from governance.services.scope import scope_ensure

    scope = scope_ensure(path="acme/notes", actor=None)
    Memory.objects.bulk_create(
        Memory(
            scope=scope,
            kind="semantic",
            source_kind="user",
            status="active",
            text=f"t{i}",
            lexical=f"note number {i} " + "ledger line " * (i % 40),
        )
        for i in range(3000)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE governance_memory")
        cursor.execute(
            "SELECT attstattarget FROM pg_attribute WHERE attrelid = 'governance_memory'::regclass"
            " AND attname = 'lexical'"
        )
        assert cursor.fetchone()[0] == 10
        cursor.execute(
            "SELECT coalesce(array_length(histogram_bounds::text::text[], 1), 0)"
            " + coalesce(array_length(most_common_vals::text::text[], 1), 0)"
            " FROM pg_stats WHERE tablename = 'governance_memory' AND attname = 'lexical'"
        )
        assert 0 < cursor.fetchone()[0] <= 22
