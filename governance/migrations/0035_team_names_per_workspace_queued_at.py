"""Issue 20's leftovers: a team's name is unique within its workspace only (users, agents and teams
without a home keep one namespace across the installation), and outbox and webhook deliveries remember
when a message for them was queued, so the reconciler does not queue them again on every pass."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0027_walls_by_identity"),
    ]

    operations = [
        migrations.AlterField(
            model_name="principal",
            name="name",
            field=models.CharField(max_length=150),
        ),
        migrations.AddConstraint(
            model_name="principal",
            constraint=models.UniqueConstraint(
                condition=models.Q(workspace__isnull=True), fields=("name",), name="principal_name_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="principal",
            constraint=models.UniqueConstraint(
                condition=models.Q(workspace__isnull=False),
                fields=("workspace", "name"),
                name="team_name_unique_in_workspace",
            ),
        ),
        migrations.AddField(
            model_name="outboxdelivery",
            name="queued_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="webhookdelivery",
            name="queued_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
