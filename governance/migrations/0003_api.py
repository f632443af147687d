"""Schema changes of the api work (kept in one file so parallel work never forks the migration graph)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("governance", "0002_database_invariants")]
    operations: list = []
