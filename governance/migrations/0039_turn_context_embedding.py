"""A conversation turn is embedded with the turn before it in its session
(governance.models.lexical.in_context, governance.propagation.embedding.turn_context): mark the vector of
every turn of a session as made from an older input (an empty embedding_hash), so that the reconciler, or
`manage.py reembed`, embeds it again. Recall keeps the old vector until the new one lands. The stored text
and the keyword column do not change."""

from django.db import migrations


def forward(apps, schema_editor):
    Memory = apps.get_model("governance", "Memory")
    Memory.objects.filter(purged_at__isnull=True, kind="episodic").exclude(session="").exclude(
        embedding_hash=""
    ).update(embedding_hash="")


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0027_walls_by_identity"),
    ]

    operations = [
        migrations.RunPython(forward, forward, elidable=True),
    ]
