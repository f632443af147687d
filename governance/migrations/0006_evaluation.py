"""Schema changes of the evaluation work (kept in one file so parallel work never forks the migration graph)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("governance", "0005_dashboard")]
    operations: list = []
