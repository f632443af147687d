"""Structured logs: one JSON object per line, the request id on every line of a request, and never the
text of a memory."""

from __future__ import annotations

import io
import json
import logging

import pytest
from celery import shared_task

from memoryui.ops.logs import ContextFilter, RequestIdMiddleware, logging_config, new_request_id
from tests.conftest import token_client

SECRET_TEXTS = ("Export as PDF with the Zanzibar watermark", "Export as PPTX with the Quokka theme")


@pytest.fixture
def captured_log():
    """The stream of the handler the project's LOGGING set up on the root logger, swapped for a buffer."""
    handler = next(
        h for h in logging.getLogger().handlers if any(isinstance(f, ContextFilter) for f in h.filters)
    )
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    yield buffer
    handler.setStream(previous)


def _lines(buffer: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]


def test_log_lines_of_a_write_a_conflict_and_a_context_request_are_json_with_request_ids_and_no_memory_text(
    captured_log, reviewer, project_scope
):
    client = token_client(reviewer)
    write = {
        "scope": "acme/slides",
        "kind": "convention",
        "key": "export_format",
        "text": SECRET_TEXTS[0],
        "status": "active",
        "source": {"kind": "user", "ref": "t1"},
    }
    created = client.post("/api/v1/memories", write, format="json", HTTP_X_REQUEST_ID="write-1")
    assert created.status_code == 201, created.json()
    assert created["X-Request-ID"] == "write-1"
    conflict = client.post(
        "/api/v1/memories", {**write, "text": SECRET_TEXTS[1]}, format="json", HTTP_X_REQUEST_ID="conflict-2"
    )
    assert conflict.status_code == 409, conflict.json()
    context = client.post(
        "/api/v1/context",
        {"scope": "acme/slides", "query": "Zanzibar export format", "budget_tokens": 400},
        format="json",
    )
    assert context.status_code == 200, context.json()
    assert SECRET_TEXTS[0] in context.content.decode()  # the answer has the text; the logs must not
    generated = context["X-Request-ID"]
    assert len(generated) == 32

    raw = captured_log.getvalue()
    lines = _lines(captured_log)  # every line parses as JSON, or this raises
    for secret in (*SECRET_TEXTS, "Zanzibar", "Quokka"):
        assert secret not in raw
    requests = [line for line in lines if line["logger"] == "memoryui.request"]
    assert [(r["request_id"], r["method"], r["status"]) for r in requests] == [
        ("write-1", "POST", 201),
        ("conflict-2", "POST", 409),
        (generated, "POST", 200),
    ]
    assert all(r["route"] and isinstance(r["duration_ms"], float) for r in requests)
    # Other loggers' lines in the 409 request carry its id too (Django logs the 4xx answer).
    others = [
        line for line in lines if line["logger"] != "memoryui.request" and line["request_id"] == "conflict-2"
    ]
    assert others, lines
    assert {"ts", "level", "logger", "message", "request_id", "task_id"} <= set(lines[0])


def test_a_request_id_that_is_not_a_sane_token_is_replaced():
    assert new_request_id("abc-123.x") == "abc-123.x"
    replaced = new_request_id("evil\nFAKE LOG LINE")
    assert "\n" not in replaced and len(replaced) == 32
    assert len(new_request_id("x" * 500)) == 32


@shared_task(name="tests.memoryui.ops.log_probe")
def _log_probe() -> None:
    logging.getLogger("governance.tasks").warning("probe ran")


def test_log_lines_written_inside_a_celery_task_carry_its_task_id(captured_log):
    _log_probe.apply(task_id="task-abc-123")
    probe = [line for line in _lines(captured_log) if line["message"] == "probe ran"]
    assert probe and probe[0]["task_id"] == "task-abc-123"
    assert probe[0]["request_id"] == ""


def test_log_format_is_configurable_and_refuses_an_unknown_value():
    assert logging_config(fmt="text", level="INFO")["handlers"]["console"]["formatter"] == "text"
    assert logging_config(fmt="json", level="INFO")["handlers"]["console"]["formatter"] == "json"
    with pytest.raises(ValueError, match="LOG_FORMAT"):
        logging_config(fmt="xml", level="INFO")


def test_the_request_id_middleware_is_first_so_every_later_line_has_the_id(settings):
    assert settings.MIDDLEWARE[0] == f"{RequestIdMiddleware.__module__}.{RequestIdMiddleware.__name__}"
