"""Spans of the domain's own stages (each recall stage), for OpenTelemetry when tracing is on
(memoryui.ops.tracing turns it on from the standard OTEL_* variables). Off, `span` is a shared
`nullcontext`: no OpenTelemetry call at all. A span carries a stage's name and counts, never memory
text, a query or a scope path."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

_OFF = nullcontext()
_tracer: Any = None  # an opentelemetry Tracer while tracing is on


def enable(tracer: Any) -> None:
    global _tracer
    _tracer = tracer


def disable() -> None:
    global _tracer
    _tracer = None


def enabled() -> bool:
    return _tracer is not None


def span(name: str, **attributes: int | float | str | bool) -> AbstractContextManager:
    """A span named `name` (e.g. `recall.vector`) around a block, when tracing is on."""
    if _tracer is None:
        return _OFF
    return _tracer.start_as_current_span(name, attributes=attributes or None)
