"""Keyword search per scope: a GIN index over (scope_id, the full-text vector of `lexical`), with
btree_gin for the scope column. The keyword query filters by the visible scopes; with only the
text index (memory_lexical_fts) PostgreSQL ANDs two bitmaps, and at 1M memories reading the scope
bitmap (≈54k rows for a task's three scopes) cost more than the whole rest of the query. The
composite index answers both conditions in one scan (bench_context, docs/api.md "Measured")."""

from django.contrib.postgres.operations import BtreeGinExtension
from django.db import migrations

# CONCURRENTLY (so outside a transaction): building it takes ≈40 s at 1M memories, during which a plain
# CREATE INDEX would hold back every write to the table.
INDEX_SQL = (
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_scope_lexical_fts ON governance_memory"
    " USING gin (scope_id, to_tsvector('simple', lexical))"
)


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("governance", "0007_scope_vector_indexes")]

    operations = [
        BtreeGinExtension(),
        migrations.RunSQL(INDEX_SQL, "DROP INDEX CONCURRENTLY IF EXISTS memory_scope_lexical_fts"),
    ]
