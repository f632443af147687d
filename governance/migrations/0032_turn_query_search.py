"""The dashboard's turn search: the words of a turn's query, full text (the `simple` configuration, as the
memories' keyword index), so finding a turn by a word of its query reads an index at 10k+ turns
(governance.selectors.dashboard.turn_search)."""

from django.db import migrations


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY: a live turns table is not locked against writes

    dependencies = [
        ("governance", "0026_purged_hash_index"),
    ]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS turn_query_fts ON governance_turn"
            " USING gin (to_tsvector('simple', query))",
            "DROP INDEX CONCURRENTLY IF EXISTS turn_query_fts",
        ),
    ]
