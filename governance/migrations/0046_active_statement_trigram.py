"""Conflict detection's trigram query reads an index of the rows it can return, not of the whole table.

`services/conflict.find_conflicts` (and four-eyes' `_contradicted_by_text`, `move_would_override`) look
for an active, unkeyed statement of a scope whose `lexical` is similar (`%`) to the new one. The only
trigram index was memory_text_trgm (0002), over every row of every scope and status. Once the table
held active statements anywhere, the planner chose it: at 100,000 candidates in the written scope and
5,000 active statements in another, the bitmap scan returned 90,871 rows of every scope and status,
each rechecked for similarity, 1.17 s per write (EXPLAIN ANALYZE), with nothing to find. This index
holds only active unkeyed statements of the checked kinds (its predicate is the query's own, so the
planner can prove it applies), with scope_id for the scope's own: the same query, the same rows.
memory_text_trgm stays for the recall path's fuzzy match (governance/recall/search.py), which reads
every status and kind."""

from django.db import migrations

# CONCURRENTLY (so outside a transaction), as 0008 and 0030: a plain CREATE INDEX would hold back writes.
# The kinds are services/conflict.CHECKED_KINDS (test_conflict_index.py keeps them the same).
INDEX = (
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_active_statement_trgm ON governance_memory"
    " USING gin (scope_id, lexical gin_trgm_ops)"
    " WHERE status = 'active' AND key IS NULL"
    " AND kind IN ('semantic', 'preference', 'convention', 'method', 'stage_fact')"
)
DROP_INDEX = "DROP INDEX CONCURRENTLY IF EXISTS memory_active_statement_trgm"


class Migration(migrations.Migration):
    atomic = False
    dependencies = [
        ("governance", "0045_merge_disputes"),
        # Main's leaf when main was merged in (made beside this one): following it too keeps one leaf, so
        # no merge migration is needed (different objects).
        ("governance", "0041_one_fulltext_expression"),
    ]

    operations = [migrations.RunSQL(INDEX, DROP_INDEX)]
