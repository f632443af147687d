import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings.dev")

app = Celery("memoryui")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
