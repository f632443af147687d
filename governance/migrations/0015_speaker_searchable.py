"""The speaker is part of what a memory is found by (governance.models.lexical.searchable_text): recompute the
keyword column of every row that has a speaker, and mark its vector as made from an older input (an empty
embedding_hash), so that the reconciler, or `manage.py reembed`, embeds "Speaker: text" again. Recall
keeps the old vector until the new one lands. Purged rows keep their empty text and column."""

from django.db import migrations

BATCH = 2000


def forward(apps, schema_editor):
    from governance.models.lexical import lexical_text

    Memory = apps.get_model("governance", "Memory")
    rows = Memory.objects.filter(purged_at__isnull=True).exclude(speaker="").order_by("pk")
    last = 0
    while True:
        chunk = list(rows.filter(pk__gt=last).values_list("pk", "text", "speaker")[:BATCH])
        if not chunk:
            break
        for pk, text, speaker in chunk:
            Memory.objects.filter(pk=pk).update(lexical=lexical_text(text, speaker))
        last = chunk[-1][0]
    rows.exclude(embedding_hash="").update(embedding_hash="")


def backward(apps, schema_editor):
    from governance.models.lexical import lexical_text

    Memory = apps.get_model("governance", "Memory")
    for pk, text in Memory.objects.filter(purged_at__isnull=True).exclude(speaker="").values_list("pk", "text"):
        Memory.objects.filter(pk=pk).update(lexical=lexical_text(text))
    Memory.objects.filter(purged_at__isnull=True).exclude(speaker="").exclude(embedding_hash="").update(
        embedding_hash="")


class Migration(migrations.Migration):

    dependencies = [
        ("governance", "0014_memory_embedding_claim"),
    ]

    operations = [
        migrations.RunPython(forward, backward, elidable=True),
    ]
