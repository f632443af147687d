"""Schema changes of the api work (kept in one file so parallel work never forks the migration graph)."""

from django.db import migrations

# The read path asks, per visible scope, for the latest active turns (recall.recent_stage); this partial
# index answers that with a short range scan instead of a sort over every turn of the scope.
RECENT_SQL = (
    "CREATE INDEX IF NOT EXISTS memory_recent_episodic ON governance_memory (scope_id, occurred_at DESC) "
    "WHERE kind = 'episodic' AND status = 'active'"
)


class Migration(migrations.Migration):
    dependencies = [("governance", "0002_database_invariants")]
    operations: list = [migrations.RunSQL(RECENT_SQL, "DROP INDEX IF EXISTS memory_recent_episodic")]
