"""Every keyword read of memories now matches the stored vector `lexical_tsv` (migration 0030) through its
index memory_scope_lexical_tsv (governance.models.fulltext): the memory lists' search used the expression
index memory_lexical_fts (0002), the last reader of `to_tsvector('simple', lexical)` computed per query.
Nothing reads that index any more, and every write paid for it: it goes.

The SQL is written out here, not imported: a migration records what was done then.
tests/governance/models/test_fulltext_one_expression.py compares the database's definitions with
governance.models.fulltext, so a change there without a migration fails."""

from django.db import migrations

DROP = "DROP INDEX CONCURRENTLY IF EXISTS memory_lexical_fts"
# CONCURRENTLY (so outside a transaction), as 0008 and 0030: a plain CREATE INDEX would hold back writes.
RECREATE = (
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_lexical_fts ON governance_memory"
    " USING gin (to_tsvector('simple', lexical))"
)


class Migration(migrations.Migration):
    atomic = False
    dependencies = [
        ("governance", "0027_walls_by_identity"),
        # Main's leaf when this was merged (made beside this one): following it too keeps one leaf, so no merge
        # migration is needed (different objects).
        ("governance", "0045_merge_disputes"),
    ]

    operations = [migrations.RunSQL(DROP, RECREATE)]
