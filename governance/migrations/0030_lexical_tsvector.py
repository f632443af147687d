"""The keyword path reads a stored tsvector of `lexical` instead of computing one per row and request.

Before, ranking the full-text matches (ts_rank) and re-scoring them parsed every matching memory's text on
every request: on LongMemEval's long turns (~1,000 characters, ~490 per scope) the keyword path took
p50/p95 287/606 ms while finding the matches took 0.4 ms. The column is computed once, when the row is
written (a memory's content never changes: a new content is a new row), and the keyword score is then
computed in the query from the stored vector (governance/recall/search.py). The composite index of 0008
(over the expression) is replaced by one over the column; memory_lexical_fts (0002, the expression) stays
for the memory lists' search (governance/selectors/search.py).

The column is not a model field: nothing in Python writes or reads it, PostgreSQL keeps it."""

from django.db import migrations

ADD_COLUMN = (
    "ALTER TABLE governance_memory ADD COLUMN IF NOT EXISTS lexical_tsv tsvector"
    " GENERATED ALWAYS AS (to_tsvector('simple', lexical)) STORED"
)
DROP_COLUMN = "ALTER TABLE governance_memory DROP COLUMN IF EXISTS lexical_tsv"
# CONCURRENTLY (so outside a transaction), as 0008: a plain CREATE INDEX would hold back every write.
INDEX = ("CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_scope_lexical_tsv ON governance_memory"
         " USING gin (scope_id, lexical_tsv)")
DROP_INDEX = "DROP INDEX CONCURRENTLY IF EXISTS memory_scope_lexical_tsv"
OLD_INDEX = ("CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_scope_lexical_fts ON governance_memory"
             " USING gin (scope_id, to_tsvector('simple', lexical))")
DROP_OLD_INDEX = "DROP INDEX CONCURRENTLY IF EXISTS memory_scope_lexical_fts"


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("governance", "0026_purged_hash_index")]

    operations = [
        migrations.RunSQL(ADD_COLUMN, DROP_COLUMN),
        migrations.RunSQL(INDEX, DROP_INDEX),
        migrations.RunSQL(DROP_OLD_INDEX, OLD_INDEX),
    ]
