"""Passages: the sentences of a turn a person said, embedded on their own (governance/models/passage.py).
The turns that may have some (a person's, long enough for two sentences) get their vector marked as made
from an older input (an empty embedding_hash), as 0015 did, so that the reconciler or `manage.py reembed`
embeds them again, and their passages with them. Recall keeps the old vectors until then; a turn without
passages is scored by its whole vector, as before."""

import django.db.models.deletion
import pgvector.django.vector
from django.conf import settings
from django.db import migrations, models

# Two parts of a turn, one of them a sentence long enough to be a passage (lexical.passage_texts).
MIN_TEXT = 52


def forward(apps, schema_editor):
    from django.db.models.functions import Length

    Memory = apps.get_model("governance", "Memory")
    Memory.objects.annotate(chars=Length("text")).filter(
        source_kind="user", purged_at__isnull=True, chars__gte=MIN_TEXT
    ).exclude(embedding_hash="").update(embedding_hash="")


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0055_stem_final_e"),
    ]

    operations = [
        migrations.CreateModel(
            name="Passage",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("content_hash", models.CharField(max_length=64)),
                ("embedding", pgvector.django.vector.VectorField(dimensions=settings.EMBEDDING_DIMENSIONS)),
                (
                    "memory",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="passages",
                        to="governance.memory",
                    ),
                ),
            ],
        ),
        migrations.RunPython(forward, migrations.RunPython.noop, elidable=True),
    ]
