"""Planning a trigram search over memories costs in proportion to the statistics kept on `lexical`: a
fuzzy-match operator's selectivity (pg_trgm's `matchingsel`) is estimated by running the operator on each
most-common value and histogram entry of the column, and those are texts of up to 1 kB. With the default
statistics target (100), planning the keyword path's trigram fallback took 8-9 ms against 3-5 ms to run it
(EXPLAIN (ANALYZE, SUMMARY), the LoCoMo dev import beside LongMemEval haystacks, 42 common values and 101
histogram bounds); with a target of 10, 0.6-1.6 ms to plan (two measurements) and 3.2-3.3 to run, and the same plan (the scope's rows,
then the trigram test). Nothing else reads statistics of `lexical`: the keyword search uses the stored
tsvector and its own statistics, and conflict detection's trigram reads are bounded by the scope first
(services/conflict.py). docs/benchmarks.md, "Plans kept for every run"."""

from django.db import migrations

TARGET = 10


class Migration(migrations.Migration):
    dependencies = [("governance", "0053_active_statement_scope")]

    operations = [
        migrations.RunSQL(
            [
                f"ALTER TABLE governance_memory ALTER COLUMN lexical SET STATISTICS {TARGET}",
                "ANALYZE governance_memory (lexical)",
            ],
            ["ALTER TABLE governance_memory ALTER COLUMN lexical SET STATISTICS -1"],
        )
    ]
