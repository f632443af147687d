"""Schema changes of the governance work (kept in one file so parallel work never forks the migration graph):
per-scope derived summaries and retention policies."""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("governance", "0003_api")]
    operations = [
        migrations.CreateModel(
            name='RetentionPolicy',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('retire_unused_days', models.PositiveIntegerField(blank=True, null=True)),
                ('archive_cold', models.BooleanField(default=False)),
                ('cold_threshold', models.FloatField(blank=True, null=True)),
                ('kinds', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=12), blank=True, default=list, size=None)),
                ('enabled', models.BooleanField(default=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('last_run_at', models.DateTimeField(blank=True, null=True)),
                ('scope', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='retention_policy', to='governance.scope')),
                ('updated_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='governance.principal')),
            ],
            options={
                'verbose_name_plural': 'retention policies',
                'constraints': [models.CheckConstraint(condition=models.Q(('retire_unused_days__isnull', True), ('retire_unused_days__gte', 1), _connector='OR'), name='retention_days_positive'), models.CheckConstraint(condition=models.Q(('cold_threshold__isnull', True), models.Q(('cold_threshold__gt', 0), ('cold_threshold__lt', 10)), _connector='OR'), name='retention_threshold_range')],
            },
        ),
        migrations.CreateModel(
            name='Summary',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('lines', models.JSONField(default=list)),
                ('text', models.TextField(blank=True, default='')),
                ('cited_ids', django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(), blank=True, default=list, size=None)),
                ('writer', models.CharField(default='deterministic', max_length=50)),
                ('stale', models.BooleanField(default=False)),
                ('stale_reason', models.CharField(blank=True, default='', max_length=200)),
                ('built_at', models.DateTimeField()),
                ('built_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='governance.principal')),
                ('scope', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='summary', to='governance.scope')),
            ],
            options={
                'verbose_name_plural': 'summaries',
                'indexes': [django.contrib.postgres.indexes.GinIndex(fields=['cited_ids'], name='summary_cited_ids_gin')],
            },
        ),
    ]
