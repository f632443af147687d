"""The index the read path reads a session's requirements by (governance/recall/session.py): the user's
statements of one scope and session that are not episodes, whatever the number of the session's turns."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('governance', '0056_passage'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='memory',
            index=models.Index(condition=models.Q(('source_kind', 'user'), models.Q(('kind', 'episodic'), _negated=True), models.Q(('session', ''), _negated=True)), fields=['scope', 'session', 'occurred_at'], name='memory_session_requirements'),
        ),
    ]
