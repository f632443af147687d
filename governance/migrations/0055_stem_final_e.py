"""The keyword stemmer drops a final "e" left after the suffix (governance.models.lexical._stem: move,
moves, moved and moving are all "mov"; before, "move" stayed "move"). Recompute the keyword column of every
row whose terms it changes; the stored tsvector follows the column. Vectors are untouched: the embedded
text is the memory's own words, not its terms. Purged rows keep their empty text and column.

Not atomic: each batch commits on its own, so a large table is not locked against writes for the whole
run, and a run stopped half-way is finished by running it again (recomputing a row twice gives the same
terms; until then a row stemmed the old way misses only the base forms of e-final words)."""

from django.db import migrations, transaction

BATCH = 2000


def forward(apps, schema_editor):
    from governance.models.lexical import lexical_text

    Memory = apps.get_model("governance", "Memory")
    rows = (
        Memory.objects.filter(purged_at__isnull=True).order_by("pk").only("pk", "text", "speaker", "lexical")
    )
    last = 0
    while True:
        chunk = list(rows.filter(pk__gt=last)[:BATCH])
        if not chunk:
            break
        changed = []
        for memory in chunk:
            new = lexical_text(memory.text or "", memory.speaker or "")
            if new != memory.lexical:
                memory.lexical = new
                changed.append(memory)
        with transaction.atomic():
            Memory.objects.bulk_update(changed, ["lexical"], batch_size=500)
        last = chunk[-1].pk


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("governance", "0054_lexical_statistics")]

    # Backward leaves the terms as they are: the code of the version migrated back recomputes a row's terms
    # whenever it writes it, and its searches then miss only the inflected forms of e-final words.
    operations = [migrations.RunPython(forward, migrations.RunPython.noop, elidable=True)]
