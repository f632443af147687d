"""In force means confirmed by a person: Memory.confirmed_by / confirmed_at, and a data step that sets them
for the active rows that a principal with the confirm right (reviewer, curator or owner on the memory's
scope or above, directly or through a group) confirmed or wrote active, or that the system wrote.

Active rows an agent wrote by itself (a keyed working memory marked active, before this change) stay
unconfirmed: they are no longer pinned as constraints or preferences, and show as unconfirmed evidence
until a reviewer confirms them. Plain unkeyed episodes are evidence whoever wrote them and are left alone."""

import django.db.models.deletion
from django.db import migrations, models

# A rule-like active row: anything but a plain unkeyed episode.
RULE_LIKE = "m.status = 'active' AND m.confirmed_at IS NULL AND NOT (m.key IS NULL AND m.kind IN ('episodic', 'working'))"


def _can_confirm(principal_column: str) -> str:
    return (
        "EXISTS (SELECT 1 FROM governance_grant g"
        " JOIN governance_scope gs ON gs.id = g.scope_id"
        " JOIN governance_scope s ON s.id = m.scope_id"
        " WHERE gs.tree @> s.tree AND g.role IN ('reviewer', 'curator', 'owner')"
        f" AND (g.principal_id = {principal_column} OR g.principal_id IN"
        f"  (SELECT to_principal_id FROM governance_principal_groups WHERE from_principal_id = {principal_column})))"
    )


# 1. The latest confirmation in the audit log, when its actor could confirm there (or was the system).
FROM_AUDIT = f"""
UPDATE governance_memory m SET confirmed_at = a.at, confirmed_by_id = a.actor_id
FROM (
    SELECT DISTINCT ON (target_id) target_id, at, actor_id, actor_name FROM governance_auditevent
    WHERE action = 'memory.confirm' AND target_type = 'memory' ORDER BY target_id, at DESC, id DESC
) a
WHERE a.target_id = m.id::text AND {RULE_LIKE}
  AND ((a.actor_id IS NULL AND a.actor_name = 'system') OR (a.actor_id IS NOT NULL AND {_can_confirm('a.actor_id')}));
"""

# 2. Written active (or superseded into being) by the system or by someone with the confirm right.
FROM_WRITER = f"""
UPDATE governance_memory m SET confirmed_at = m.created_at, confirmed_by_id = m.created_by_id
WHERE {RULE_LIKE} AND (m.created_by_id IS NULL OR {_can_confirm('m.created_by_id')});
"""

UNDO = "UPDATE governance_memory SET confirmed_at = NULL, confirmed_by_id = NULL;"


class Migration(migrations.Migration):

    dependencies = [
        ("governance", "0010_token_bounds"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="confirmed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="memory",
            name="confirmed_by",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+",
                to="governance.principal",
            ),
        ),
        migrations.RunSQL(FROM_AUDIT + FROM_WRITER, reverse_sql=UNDO),
    ]
