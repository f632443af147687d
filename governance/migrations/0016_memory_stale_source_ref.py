from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CONCURRENTLY: the memory table stays writable while the index is built
    dependencies = [("governance", "0015_speaker_searchable")]

    operations = [
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("status__in", ["superseded", "retired", "forgotten"]), models.Q(("source_ref", ""), _negated=True)),
                fields=["scope", "source_ref"],
                name="memory_stale_source_ref",
            ),
        ),
    ]
