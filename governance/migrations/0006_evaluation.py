"""Schema changes of the evaluation work (kept in one file so parallel work never forks the migration graph)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("governance", "0005_dashboard")]
    operations: list = [
        migrations.CreateModel(
            name="EvaluationRun",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("suite", models.CharField(max_length=50)),
                ("seed", models.BigIntegerField()),
                ("strategies", models.JSONField(default=list)),
                ("task_count", models.PositiveIntegerField(default=0)),
                ("duration_s", models.FloatField(default=0.0)),
                ("environment", models.JSONField(blank=True, default=dict)),
                ("results", models.JSONField(default=dict)),
            ],
            options={
                "indexes": [models.Index(fields=["-created_at"], name="evaluation_run_latest")],
            },
        ),
    ]
