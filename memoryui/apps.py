from django.apps import AppConfig


class MemoryUIConfig(AppConfig):
    name = "memoryui"
    verbose_name = "Memory dashboard"
