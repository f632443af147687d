"""The keyword stemmer drops a final "e" left after the suffix (governance.models.lexical._stem: move,
moves, moved and moving are all "mov"; before, "move" stayed "move"). Recompute the keyword column of every
row whose terms it changes, in batches; the stored tsvector follows the column. Vectors are untouched: the
embedded text is the memory's own words, not its terms. Purged rows keep their empty text and column."""

from django.db import migrations

BATCH = 2000


def _recompute(apps, stem_terms):
    Memory = apps.get_model("governance", "Memory")
    rows = Memory.objects.filter(purged_at__isnull=True).order_by("pk")
    last = 0
    while True:
        chunk = list(rows.filter(pk__gt=last).values_list("pk", "text", "speaker", "lexical")[:BATCH])
        if not chunk:
            break
        for pk, text, speaker, old in chunk:
            new = stem_terms(text or "", speaker or "")
            if new != old:
                Memory.objects.filter(pk=pk).update(lexical=new)
        last = chunk[-1][0]


def forward(apps, schema_editor):
    from governance.models.lexical import lexical_text

    _recompute(apps, lexical_text)


class Migration(migrations.Migration):
    dependencies = [("governance", "0054_lexical_statistics")]

    # Backward leaves the terms as they are: the code of the version migrated back to recomputes a row's
    # terms whenever it writes it, and its searches then miss only the base forms of e-final words.
    operations = [migrations.RunPython(forward, migrations.RunPython.noop, elidable=True)]
