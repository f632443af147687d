"""Spans of the domain's own stages (each recall stage), for OpenTelemetry when tracing is on
(memoryui.ops.tracing turns it on from the standard OTEL_* variables). Off, `span` is a shared
`nullcontext`: no OpenTelemetry call at all. A span carries a stage's name and counts, never memory
text, a query or a scope path.

The same stages' durations also go to the request being served, when it collects them (`collecting`,
opened by memoryui.ops.logs.RequestIdMiddleware): the response's `Server-Timing` header then names
each stage and its milliseconds (`embed;dur=17.2, vector;dur=3.1, …`), so a client, a browser's
developer tools or a benchmark sees where a request's time went without a second mechanism."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any

_OFF = nullcontext()
_tracer: Any = None  # an opentelemetry Tracer while tracing is on
# The request's (name, ms) pairs while it collects them; None outside a collecting request.
_timings: ContextVar[list[tuple[str, float]] | None] = ContextVar("server_timings", default=None)


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


def timed(name: str, ms: float) -> None:
    """Note that `name` (a stage's name: letters, digits, `_`) took `ms` in the request being served."""
    timings = _timings.get()
    if timings is not None:
        timings.append((name, ms))


@contextmanager
def timing(name: str) -> Iterator[None]:
    """`timed(name, …)` with the block's duration."""
    started = time.perf_counter()
    try:
        yield
    finally:
        timed(name, (time.perf_counter() - started) * 1000)


@contextmanager
def collecting() -> Iterator[list[tuple[str, float]]]:
    """Collect the `timed` durations of the code run inside (one request), in order."""
    timings: list[tuple[str, float]] = []
    token = _timings.set(timings)
    try:
        yield timings
    finally:
        _timings.reset(token)


def server_timing(timings: list[tuple[str, float]]) -> str:
    """The `Server-Timing` header value of (name, ms) pairs (RFC: `name;dur=ms`, comma separated)."""
    return ", ".join(f"{name};dur={ms:.2f}" for name, ms in timings)


def parse_server_timing(value: str) -> dict[str, float]:
    """{name: ms} of a `Server-Timing` header value (`name;dur=1.5, other;dur=2`)."""
    out: dict[str, float] = {}
    for part in value.split(","):
        name, _, rest = part.strip().partition(";")
        for param in rest.split(";"):
            key, _, dur = param.strip().partition("=")
            if key == "dur" and name:
                out[name] = out.get(name, 0.0) + float(dur)
    return out
