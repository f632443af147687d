from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("governance", "0016_memory_stale_source_ref")]

    operations = [
        migrations.AddField(
            model_name="relation",
            name="by_hand",
            field=models.BooleanField(default=False),
        ),
    ]
