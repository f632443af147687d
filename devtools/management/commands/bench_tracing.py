"""What OpenTelemetry tracing costs a /api/v1/context request: the same request in-process through the
whole stack (middleware, token auth, recall, packing, the stored turn), in alternating blocks with tracing
off and on (OTLP/HTTP export to a receiver this command runs, which decodes and counts the spans), p50/p95
per mode.

    python manage.py bench_tracing [--rounds 6] [--block 20]

It writes a small scope of its own (`bench-tracing/slides`: 40 active memories) once and reuses it. The
query is the same every time, so the query-vector cache answers the embedding after the first request:
what differs between the modes is tracing, not the model. Tracing on means the Django, psycopg, Redis and
Celery instrumentations plus the recall-stage spans, every span exported (no sampling)."""

from __future__ import annotations

import os
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.core.management.base import BaseCommand
from django.db import connections
from rest_framework.test import APIClient

from devtools.benchmarks.stats import percentile
from governance.models import Memory, Role
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add, principal_ensure, token_issue
from governance.services.scope import scope_ensure
from memoryui.ops import tracing

SCOPE = "bench-tracing/slides"
BODY = {"scope": SCOPE, "query": "how do we export the deck?", "budget_tokens": 600}


class _Receiver:
    def __init__(self):
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        self.spans = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server API
                request = ExportTraceServiceRequest()
                request.ParseFromString(self.rfile.read(int(self.headers["Content-Length"])))
                receiver.spans += sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def _ensure_data() -> str:
    scope = scope_ensure(path=SCOPE, actor=None)
    agent = principal_ensure(name="bench-tracing-agent", kind="agent", actor=None)
    grant_add(principal=agent, scope=scope, role=Role.AGENT, actor=None)
    have = Memory.objects.filter(scope=scope).count()
    for i in range(have, 40):
        memory_record(
            item=MemoryInput(
                scope=scope,
                kind="semantic",
                status="active",
                source_kind="user",
                text=f"Deck fact {i}: slides of deck {i} are exported as PPTX, numbered",
            ),
            actor=None,
        )
    return token_issue(principal=agent, actor=None)


class Command(BaseCommand):
    help = "Time /api/v1/context with OpenTelemetry tracing off and on (p50/p95, alternating blocks)."

    def add_arguments(self, parser):
        parser.add_argument("--rounds", type=int, default=6)
        parser.add_argument("--block", type=int, default=20)

    def handle(self, *args, rounds, block, **options):
        if tracing.wanted():
            self.stderr.write(
                "unset OTEL_EXPORTER_OTLP_ENDPOINT first: this command turns tracing on and off itself"
            )
            return
        token = _ensure_data()
        receiver = _Receiver()
        times: dict[str, list[float]] = {"off": [], "on": []}
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "200"}
        for _ in range(rounds):
            for mode in ("off", "on"):
                # A new database connection per block: psycopg's instrumentation wraps connections as
                # they are made, so one kept from the other mode would be traced (or not) wrongly.
                connections.close_all()
                if mode == "on":
                    os.environ.update(env)
                    tracing.setup()
                client = APIClient(
                    HTTP_HOST="127.0.0.1"
                )  # a new handler: it loads the middleware as configured now
                client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
                assert client.post("/api/v1/context", BODY, format="json").status_code == 200  # warm-up
                for _ in range(block):
                    started = time.perf_counter()
                    answer = client.post("/api/v1/context", BODY, format="json")
                    times[mode].append((time.perf_counter() - started) * 1000)
                    assert answer.status_code == 200, answer.content[:300]
                if mode == "on":
                    tracing.shutdown()
                    for name in env:
                        os.environ.pop(name, None)
        load = os.getloadavg()[0]
        self.stdout.write(
            f"/api/v1/context in process, {rounds} rounds x {block} requests per mode, "
            f"load average {load:.1f} (shared machine: compare the ratio)"
        )
        for mode, values in times.items():
            self.stdout.write(
                f"tracing {mode:<3}  p50 {statistics.median(values):7.1f} ms   "
                f"p95 {percentile(values, 0.95):7.1f} ms   (n={len(values)})"
            )
        p50 = statistics.median(times["on"]) / statistics.median(times["off"])
        p95 = percentile(times["on"], 0.95) / percentile(times["off"], 0.95)
        requests_on = rounds * (block + 1)
        self.stdout.write(
            f"on/off: p50 x{p50:.2f}, p95 x{p95:.2f}; spans exported: {receiver.spans} "
            f"(≈ {receiver.spans / requests_on:.0f} per request)"
        )
        receiver.server.shutdown()
