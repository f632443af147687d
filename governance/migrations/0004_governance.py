"""Schema changes of the governance work (kept in one file so parallel work never forks the migration graph)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("governance", "0003_api")]
    operations: list = []
