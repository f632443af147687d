"""OpenTelemetry traces, configured by the standard OTEL_* variables and off unless an OTLP endpoint is
set (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; OTEL_SDK_DISABLED=true or
OTEL_TRACES_EXPORTER=none keep it off). Off, nothing of OpenTelemetry is imported or installed.

On: the SDK's TracerProvider with a batching OTLP/HTTP exporter (endpoint, headers, timeout, service name,
resource attributes and sampler all from OTEL_*), and the maintained instrumentations: Django (a span per
request), psycopg (each SQL statement, without its parameters), Redis (each command, without its values)
and Celery (publish and run, the context carried in the message, so a forget's request trace reaches its
propagation task). The recall stages add one span each (governance.runtime.tracing). The request id in the logs
is then the trace id (memoryui.ops.logs)."""

from __future__ import annotations

import os

_installed: list = []  # the provider and the instrumentors, once set up
_global: list = []  # the provider set as OpenTelemetry's global one (the first)


def wanted(environ=os.environ) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() in ("none", ""):
        return False
    return bool(
        environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    )


def setup(environ=os.environ) -> bool:
    """Turn tracing on when the environment asks for it (idempotent). Returns whether it is on."""
    if _installed:
        return True
    if not wanted(environ):
        return False
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from governance.runtime import tracing

    resource = Resource.create({"service.name": environ.get("OTEL_SERVICE_NAME") or "memory-governance"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    if not _global:  # the API lets a process set its global provider once; instrumentors get `provider`
        trace.set_tracer_provider(provider)
        _global.append(provider)
    instrumentors = [DjangoInstrumentor(), PsycopgInstrumentor(), RedisInstrumentor(), CeleryInstrumentor()]
    for instrumentor in instrumentors:
        if not instrumentor.is_instrumented_by_opentelemetry:
            hooks = (
                {"request_hook": redact_request_span} if isinstance(instrumentor, DjangoInstrumentor) else {}
            )
            instrumentor.instrument(tracer_provider=provider, **hooks)
    tracing.enable(provider.get_tracer("governance"))
    _installed.extend([provider, *instrumentors])
    return True


# The request span's attributes that hold the request's path (semantic conventions old and new).
_PATH_ATTRIBUTES = ("http.url", "http.target", "url.full", "url.path", "http.route")


def redact_request_span(span, request) -> None:
    """The Django request span without the credential of a secret-bearing path (an invitation's token, a
    password reset's): the instrumentation records the full URL (`http.url`) before any view runs, and a
    span leaves the process for the collector. The same redaction as the log lines'."""
    from memoryui.ops.secrets import redact_secrets

    if not span.is_recording():
        return
    attributes = getattr(span, "attributes", None) or {}
    for name in _PATH_ATTRIBUTES:
        value = attributes.get(name)
        if isinstance(value, str) and (cleaned := redact_secrets(value)) != value:
            span.set_attribute(name, cleaned)


def shutdown() -> None:
    """Flush what is buffered and take the instrumentations out (tests; a clean process exit)."""
    from governance.runtime import tracing

    tracing.disable()
    if not _installed:
        return
    provider, *instrumentors = _installed
    for instrumentor in instrumentors:
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
    provider.force_flush()
    provider.shutdown()
    _installed.clear()


def current_trace_id() -> str:
    """The current span's trace id (32 hex digits), or "" when tracing is off or there is no span."""
    if not _installed:
        return ""
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else ""
