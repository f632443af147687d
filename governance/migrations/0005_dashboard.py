"""Schema changes of the dashboard work (kept in one file so parallel work never forks the migration graph)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("governance", "0004_governance")]
    operations: list = []
