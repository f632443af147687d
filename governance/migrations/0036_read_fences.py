import django.db.models
from django.db import migrations

import governance.models.outbox


class Migration(migrations.Migration):
    dependencies = [
        ('governance', '0027_walls_by_identity'),
    ]

    operations = [
        migrations.CreateModel(
            name='ReadFence',
            fields=[
                ('workspace_id', django.db.models.BigIntegerField(primary_key=True, serialize=False)),
                ('commit_lsn', governance.models.outbox.LsnField(blank=True, max_length=32, null=True)),
                ('changed_at', django.db.models.DateTimeField()),
            ],
        ),
    ]
