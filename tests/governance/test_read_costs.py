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
