"""A per-row claim on the embedding work: an importer that embeds its own rows and the embedding worker
that receives the same rows' outbox delivery must never both run the embedder on them (issue 13)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("governance", "0012_keyed_content_hash"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="embedding_claimed_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
