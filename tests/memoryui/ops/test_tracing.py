"""OpenTelemetry: a real OTLP/HTTP receiver (a small HTTP server decoding the protobuf export requests
with opentelemetry-proto) gets a /context trace with one span per recall stage and its SQL, and a
forget's trace that reaches its propagation task on the Celery worker. No span carries memory text or
the query. Tracing is off by default; the request id in the logs is the trace id when it is on."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from governance.runtime import tracing as domain_tracing
from governance.services.principal import token_issue
from memoryui.ops import tracing
from tests.conftest import wait_for

SECRET_TEXT = "Export the slides as PPTX for the Zanzibar client"
QUERY = "which format for the Zanzibar deck"


class Receiver:
    """What the receiver got: one dict per span."""

    def __init__(self):
        self.spans: list[dict] = []
        self.lock = threading.Lock()

    def by_trace(self, trace_id: str) -> list[dict]:
        with self.lock:
            return [s for s in self.spans if s["trace_id"] == trace_id]


def _value(v):
    for field in ("string_value", "int_value", "double_value", "bool_value"):
        if v.HasField(field):
            return getattr(v, field)
    return str(v)


@pytest.fixture
def receiver():
    got = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server API
            body = self.rfile.read(int(self.headers["Content-Length"]))
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            with got.lock:
                for resource_spans in request.resource_spans:
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            got.spans.append(
                                {
                                    "name": span.name,
                                    "trace_id": span.trace_id.hex(),
                                    "span_id": span.span_id.hex(),
                                    "parent": span.parent_span_id.hex(),
                                    "kind": span.kind,
                                    "attributes": {a.key: _value(a.value) for a in span.attributes},
                                }
                            )
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    got.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield got
    server.shutdown()


@pytest.fixture
def traced_service(receiver, celery_worker, monkeypatch):
    """Tracing on (OTLP to the receiver, exported every 100 ms) and a fresh WSGI server in a thread (its
    handler built after the Django instrumentation is in), with the session's Celery worker."""
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "memgov-test")
    assert tracing.setup() is True
    server = ThreadedWSGIServer(("127.0.0.1", 0), WSGIRequestHandler, allow_reuse_address=False)
    server.set_app(get_wsgi_application())
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    tracing.shutdown()


def test_tracing_is_off_without_an_otlp_endpoint():
    assert tracing.wanted({}) is False
    assert tracing.wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}) is False
    assert (
        tracing.wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_TRACES_EXPORTER": "none"}) is False
    )
    assert tracing.wanted({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://x"}) is True
    assert domain_tracing.enabled() is False  # the test settings set no endpoint: nothing installed
    assert domain_tracing.span("recall.vector") is domain_tracing.span("recall.fuse")  # one shared no-op


def test_a_context_trace_has_its_stages_and_sql_and_a_forget_trace_reaches_its_task(
    traced_service, receiver, owner, project_scope
):
    headers = {"Authorization": f"Token {token_issue(principal=owner, actor=None)}"}
    with httpx.Client(base_url=f"{traced_service}/api/v1", headers=headers, timeout=60) as http:
        rule = http.post(
            "/memories",
            json={
                "scope": "acme/slides",
                "kind": "convention",
                "key": "export_format",
                "status": "active",
                "text": SECRET_TEXT,
                "source": {"kind": "user", "ref": "t1"},
            },
        )
        assert rule.status_code == 201, rule.text
        packet = http.post("/context", json={"scope": "acme/slides", "query": QUERY, "budget_tokens": 400})
        assert packet.status_code == 200 and SECRET_TEXT in packet.json()["text"]
        context_trace = packet.headers["X-Request-ID"]  # the request id is the trace id
        forgotten = http.post(
            f"/memories/{rule.json()['id']}/forget", json={"mode": "hard", "reason": "asked"}
        )
        assert forgotten.status_code == 202, forgotten.text
        forget_trace = forgotten.headers["X-Request-ID"]
    assert len(context_trace) == 32 and context_trace != forget_trace

    spans = wait_for(
        lambda: (s := receiver.by_trace(context_trace)) and any(x["kind"] == 2 for x in s) and s, timeout=30
    )
    names = [s["name"] for s in spans]
    server = next(s for s in spans if s["kind"] == 2)  # SERVER: the Django request
    assert server["attributes"].get("http.route", "").endswith("context") and server["parent"] == ""
    stages = [n for n in names if n.startswith("recall.")]
    assert {"recall.lexical", "recall.fuse"} <= set(stages), names
    assert any(s["attributes"].get("db.system") in ("postgresql", "postgres") for s in spans), names

    def forget_task_spans():
        found = receiver.by_trace(forget_trace)
        return found if any(s["name"].startswith("run/") for s in found) else None

    try:
        forget = wait_for(forget_task_spans, timeout=30)
    except AssertionError:
        raise AssertionError(
            (
                "forget trace",
                [s["name"] for s in receiver.by_trace(forget_trace)],
                "all",
                sorted({s["name"] for s in receiver.spans}),
            )
        ) from None
    task_runs = [s["name"] for s in forget if s["name"].startswith("run/")]
    assert any("governance.tasks." in n for n in task_runs), [s["name"] for s in forget]
    assert any(s["name"].startswith("apply_async/") for s in forget)  # published in the request

    # Names and counts only: the memory's text and the query are in no span of either trace.
    for span in spans + forget:
        flat = " ".join([span["name"], *map(str, span["attributes"].values())])
        assert "Zanzibar" not in flat, span


def test_an_invitation_token_is_in_no_span(traced_service, receiver, owner, workspace_scope):
    from governance.services.invitation import invitation_create

    _, raw = invitation_create(scope=workspace_scope, role="viewer", actor=owner)
    with httpx.Client(base_url=traced_service, timeout=60) as http:
        page = http.get(f"/invite/{raw}/?next=/x")
        assert page.status_code == 200
        trace_id = page.headers["X-Request-ID"]
        guessed = http.get("/invite/tok-guessed-Zx9Zx9Zx9/").headers["X-Request-ID"]
    for trace in (trace_id, guessed):
        spans = wait_for(lambda t=trace: (s := receiver.by_trace(t)) and any(x["kind"] == 2 for x in s) and s)
        server = next(s for s in spans if s["kind"] == 2)
        assert any("/invite/[redacted]/" in str(v) for v in server["attributes"].values()), server[
            "attributes"
        ]
    with receiver.lock:
        everything = str(receiver.spans)
    assert raw not in everything and "tok-guessed" not in everything
