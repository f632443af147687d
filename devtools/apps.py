from django.apps import AppConfig


class DevtoolsConfig(AppConfig):
    """Development and measurement tools (benchmarks, the synthetic evaluation, the embedded stack,
    `runstack`, the demo data): installed by the development and test settings only."""

    name = "devtools"
    verbose_name = "Development tools"
