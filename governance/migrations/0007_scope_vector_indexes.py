"""Drop the HNSW index over the whole memory table: vector search now uses one partial HNSW index per big
scope (built on beat by governance.recall.vector_index.maintain, or `manage.py vector_indexes --build`)
and an exact search for small scopes. Until the per-scope indexes exist every search is exact: correct,
only slower on big scopes."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("governance", "0006_evaluation"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="memory",
            name="memory_embedding_hnsw",
        ),
    ]
