"""Conflict detection's first step reads the scope's active unkeyed statements from an index of only those.

`services/conflict.nearest_statements` first reads the ids of the statements a new one could contradict (at
most FEW + 1, in id order). The planner's estimate of how many a scope has is wrong whenever the table is
mixed: on the development database (LoCoMo imports, benchmark scopes), with 100,000 candidates in the written
scope and its one active statement, it expected 29,678 active ones and chose a sequential scan it hoped to
stop early, which read 201,855 rows: 101 ms per write. This index holds only those rows, by scope and id, so the ordered read is a
short index scan whatever the estimate (0.03 ms, 3 buffers). Its predicate is 0046's; the kinds are
services/conflict.CHECKED_KINDS (tests/governance/services/test_conflict_index.py keeps them the same).

Tried and not kept: extended statistics on (scope_id, status, kind) (MCV and dependencies). They fixed the
estimate in a table of two scopes, not in the mixed one (their 100 combinations were taken by others), and
they moved the recall path's plans: `/recall` on the LoCoMo dev import went from p50 34 to 105 ms in process
(keyword stage 7.6 -> 50 ms, vector 4.5 -> 17.7 ms; quiet machine, `evaluate_retrieval --http`). A
development database that made them with an earlier draft of 0052 loses them here."""

from django.db import migrations

# CONCURRENTLY (so outside a transaction), as 0046: a plain CREATE INDEX would hold back every write.
INDEX = (
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_active_statement_scope ON governance_memory (scope_id, id)"
    " WHERE status = 'active' AND key IS NULL"
    " AND kind IN ('semantic', 'preference', 'convention', 'method', 'stage_fact')"
)
DROP_INDEX = "DROP INDEX CONCURRENTLY IF EXISTS memory_active_statement_scope"


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("governance", "0052_read_costs")]

    operations = [
        migrations.RunSQL(INDEX, DROP_INDEX),
        migrations.RunSQL("DROP STATISTICS IF EXISTS memory_scope_status_kind_stats", migrations.RunSQL.noop),
    ]
