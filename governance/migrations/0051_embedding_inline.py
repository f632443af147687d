"""A memory's row keeps its vector and its keyword tsvector in the heap: the vector column is STORAGE
PLAIN (pgvector's default is EXTERNAL) and the table's toast_tuple_target is 8160 (the default, ~2 KB).

A 384-dimension vector is ~1.5 KB; with a turn's text, its lexical form and their tsvector the row passed
the 2 KB TOAST threshold, and PostgreSQL moved the widest column out of the row: the vector (EXTERNAL,
uncompressed) or, once the vector is PLAIN, the tsvector and the texts. Each exact-search distance was
then a TOAST probe and a chunk read, and so was each `@@` of the keyword score (several per matching
row). `EXPLAIN (ANALYZE, BUFFERS)` on the LoCoMo dev import (~480 eligible rows a question): the vector
query 9.5 ms and 2,922 buffers with the vector in TOAST, 1.4 ms and 149 buffers in the row; the keyword
query 12.3 ms and 5,756 buffers with the tsvector in TOAST, 1.3 ms and 172 buffers in the row. Rows up to
8160 bytes now stay whole and uncompressed in the heap; a longer one has its compressible columns (text,
lexical, lexical_tsv, meta) compressed and moved out first, and its vector stays.

Rows already stored keep their layout until rewritten: the second step rewrites the vector and `lexical`
(so the generated `lexical_tsv` too) of every row, in id ranges of BATCH rows, each its own short
transaction (the migration is not atomic). The expressions make PostgreSQL store new values (an
unchanged one would keep its TOAST pointer); the values are the same (float4 both ways, `|| ''`).
Reversed: the defaults back, without a rewrite."""

from django.conf import settings
from django.db import migrations

BATCH = 10_000
# A PLAIN column can never leave the row, and a row may not pass 8160 bytes: a vector of more dimensions
# (4 bytes each) would leave too little room for the rest of the row and every write would fail with
# "row is too big". Wider vectors (an OpenAI-compatible model configured with more dimensions) keep
# pgvector's default layout.
PLAIN_UP_TO_DIMENSIONS = 1536
FORWARD = [
    "ALTER TABLE governance_memory ALTER COLUMN embedding SET STORAGE PLAIN",
    "ALTER TABLE governance_memory SET (toast_tuple_target = 8160)",
]
BACKWARD = [
    "ALTER TABLE governance_memory ALTER COLUMN embedding SET STORAGE EXTERNAL",
    "ALTER TABLE governance_memory RESET (toast_tuple_target)",
]


def inline(apps, schema_editor):
    if int(settings.EMBEDDING_DIMENSIONS) > PLAIN_UP_TO_DIMENSIONS:
        return
    with schema_editor.connection.cursor() as cursor:
        for statement in FORWARD:
            cursor.execute(statement)


def outline(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        for statement in BACKWARD:
            cursor.execute(statement)


def rewrite_rows(apps, schema_editor):
    if int(settings.EMBEDDING_DIMENSIONS) > PLAIN_UP_TO_DIMENSIONS:
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(min(id), 0), coalesce(max(id), -1) FROM governance_memory")
        low, high = cursor.fetchone()
        for start in range(low, high + 1, BATCH):
            cursor.execute(
                "UPDATE governance_memory SET embedding = embedding::real[]::vector, lexical = lexical || ''"
                " WHERE id >= %s AND id < %s",
                [start, start + BATCH],
            )


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("governance", "0048_idempotent_request")]

    operations = [
        migrations.RunPython(inline, outline),
        migrations.RunPython(rewrite_rows, migrations.RunPython.noop),
    ]
