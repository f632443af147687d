"""Indexes for the memories list's sortable columns (docs/dashboard.md, "Memories").

The list pages by keyset: each page is `(column, id) > (value, id)` (or `<`) ordered by (column, id),
LIMIT 51, which is one range scan of a btree on (column, id) in either direction, whatever the page's
depth; without it PostgreSQL sorts every governed row for each page. Rows without a value (never used,
no key) are read as their own segment, `column IS NULL ORDER BY id`, from the same index. The written
column sorts by created_at.

Activation is computed at the walk's instant, so no index holds its order; memory_sort_activation holds
what ranking needs (scope and status to filter, log K, decay rate and id included) so that the top of a
page is an index-only scan and a sort of narrow entries, not of the table's wide rows (figures in
docs/benchmarks.md).

Raw SQL with CONCURRENTLY (the table stays writable while the indexes are built) and no change of model
state: the model's Meta is shared with other parts of the code base, and these indexes serve only the
dashboard's reads."""

from django.db import migrations

SORT_COLUMNS = {
    "memory_sort_created": "created_at",
    "memory_sort_last_used": "last_reinforced_at",
    "memory_sort_confidence": "confidence",
    "memory_sort_key": "key",
    "memory_sort_status": "status",
}


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("governance", "0020_webhooks")]
    operations: list = [
        migrations.RunSQL(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON governance_memory ({column}, id)",
            f"DROP INDEX CONCURRENTLY IF EXISTS {name}",
        )
        for name, column in SORT_COLUMNS.items()
    ] + [
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_sort_activation ON governance_memory "
            "(scope_id, status) INCLUDE (activation_log_k, decay_rate, id)",
            "DROP INDEX CONCURRENTLY IF EXISTS memory_sort_activation",
        ),
        # The search by meaning over a whole workspace is the agents' exact vector branch over all its
        # (small) scopes: without this index it read every row of those scopes to keep the ones with a
        # vector (97k rows for 10k vectors in the bench workspace, 220 ms under load); with it, only the
        # rows with a vector (112 ms, the rest is the distances). The recall's exact branch uses it too.
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_vectored_scope ON governance_memory "
            "(scope_id, status) WHERE embedding IS NOT NULL",
            "DROP INDEX CONCURRENTLY IF EXISTS memory_vectored_scope",
        ),
    ]
