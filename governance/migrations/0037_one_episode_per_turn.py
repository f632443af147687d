"""One turn, one episode (issue 25): two `import_conversations` runs into one scope at the same time stored
duplicate episodes (891 for 788 LoCoMo turns), since nothing in the database stopped one turn (scope,
session, source ref) being stored twice. A unique partial index now does.

The data step, for a database that already holds such copies: nothing is deleted (a memory ends through
the services, audited and propagated). The oldest episode of a turn keeps its ref; each later copy keeps
its text and status, gives up its `source_ref` and records the ref and the kept row in
`meta.duplicate_turn` ({"ref": ..., "of": id}), so a person can find and retire the copies
(the release notes of this change say so)."""

from django.db import migrations, models

MOVE_COPIES = """
WITH ranked AS (
    SELECT id, source_ref, first_value(id) OVER w AS kept, row_number() OVER w AS n
    FROM governance_memory
    WHERE kind = 'episodic' AND source_ref <> ''
    WINDOW w AS (PARTITION BY scope_id, session, source_ref ORDER BY id)
)
UPDATE governance_memory AS m
SET meta = m.meta || jsonb_build_object('duplicate_turn', jsonb_build_object('ref', r.source_ref, 'of', r.kept)),
    source_ref = ''
FROM ranked AS r
WHERE m.id = r.id AND r.n > 1
"""


class Migration(migrations.Migration):
    dependencies = [("governance", "0027_walls_by_identity")]

    operations = [
        migrations.RunSQL(MOVE_COPIES, migrations.RunSQL.noop),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.UniqueConstraint(
                condition=models.Q(("kind", "episodic"), models.Q(("source_ref", ""), _negated=True)),
                fields=("scope", "session", "source_ref"),
                name="memory_one_episode_per_turn",
            ),
        ),
    ]
