from django.apps import AppConfig


class MemoryUIConfig(AppConfig):
    name = "memoryui"
    verbose_name = "Memory dashboard"

    def ready(self) -> None:
        from django.core.signals import request_finished, request_started

        from memoryui.ops.logs import begin_request, end_request

        request_started.connect(begin_request, dispatch_uid="memoryui.ops.begin_request")
        request_finished.connect(end_request, dispatch_uid="memoryui.ops.end_request")

        from memoryui.ops.tracing import setup

        setup()  # OpenTelemetry, when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set; otherwise nothing
