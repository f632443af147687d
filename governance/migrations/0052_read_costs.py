"""Every GIN index that a write or a recall reads keeps a short pending list (64 kB instead of 4 MB): a read
cost that grew with the writes since the last merge, not with what a query returns.

GIN's fast update appends new entries to an unsorted pending list and merges them into the index only when
the list passes `gin_pending_list_limit` (4 MB by default) or at VACUUM. Every scan of the index reads the
whole pending list and checks each tuple in it. At 100,000 statements in a scope, the near-duplicate check's
candidate query (services/near_duplicate.py) read 228 pending pages of `memory_scope_lexical_tsv` and took
13.6 ms; after `gin_clean_pending_list` it took 0.48 ms and read 54 buffers (EXPLAIN ANALYZE; the bench
`bench_write --near-duplicates 100000`, docs/benchmarks.md). The same list sat in front of the keyword path
of every recall (`memory_scope_lexical_tsv`), its fuzzy match and conflict detection (`memory_text_trgm`,
`memory_active_statement_trgm`) and the dashboard's turn search (`turn_query_fts`).

64 kB (the smallest limit PostgreSQL accepts) bounds a scan's extra reading to 8 pages and keeps fast update
for bulk writes, at a cost to them: a 100k-row COPY of short statements took 57 s against 48 s with the
default limit (88 s with fast update off), and 2,000 LongMemEval turns (~1,000 characters) 4.9-6.7 s against
1.1-2.4 s, ~2.5 ms more per long turn beside the ~200 ms of its embedding (the shared 2-core machine at load
6-12, two runs each). A memory is read by every recall and every write's checks far more often than it is
written. The pending lists already there are merged once here.
"""

from django.db import migrations

INDEXES = ("memory_scope_lexical_tsv", "memory_text_trgm", "memory_active_statement_trgm", "turn_query_fts")
LIMIT_KB = 64


def _forward() -> list[str]:
    out = []
    for name in INDEXES:
        out.append(f"ALTER INDEX IF EXISTS {name} SET (gin_pending_list_limit = {LIMIT_KB})")
        out.append(
            f"SELECT gin_clean_pending_list(c.oid) FROM pg_class c WHERE c.relname = '{name}' AND c.relkind = 'i'"
        )
    return out


def _backward() -> list[str]:
    return [f"ALTER INDEX IF EXISTS {name} RESET (gin_pending_list_limit)" for name in INDEXES]


class Migration(migrations.Migration):
    # Each statement commits on its own: ALTER INDEX locks the index, and an autovacuum merging that index's
    # pending list while this transaction held it would wait on it (a deadlock was seen with ANALYZE).
    atomic = False
    dependencies = [("governance", "0051_embedding_inline")]

    operations = [migrations.RunSQL(_forward(), _backward())]
