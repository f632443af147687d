# The governance tabs: audit pages by action or actor walk one index range in id order (keyset), and the
# propagation tab counts only open deliveries. Replaces the single-column action index.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('governance', '0020_webhooks'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='auditevent',
            name='governance__action_a0b3a0_idx',
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['action', 'id'], name='audit_action_id'),
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['actor_name', 'id'], name='audit_actor_id'),
        ),
        migrations.AddIndex(
            model_name='outboxdelivery',
            index=models.Index(condition=models.Q(('state__in', ['pending', 'failed'])), fields=['store', 'state', 'outbox'], name='delivery_open'),
        ),
    ]
