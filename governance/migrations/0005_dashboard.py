"""Schema changes of the dashboard work (kept in one file so parallel work never forks the migration graph).

One covering index for the dashboard's activation reads (the overview histogram, the timeline's top
memories): they read activation_log_k and decay_rate of every memory of a scope in a status, and with
the two columns in the index PostgreSQL answers from the index alone instead of the whole table (100k
memories: the index is a few MB, the table with texts and vectors is far larger). Raw SQL because
Django's Index cannot express INCLUDE on this model without moving the index into governance's model
Meta, which another part owns; the index changes no model state."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("governance", "0004_governance")]
    operations: list = [
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS memory_dashboard_activation ON governance_memory "
            "(scope_id, status) INCLUDE (activation_log_k, decay_rate)",
            "DROP INDEX IF EXISTS memory_dashboard_activation",
        ),
    ]
