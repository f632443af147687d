"""Retries, Retry-After and timeouts, against a real HTTP server that answers what the test scripts
(the service itself does not throttle on demand). No database needed."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import memgov

RECALL_OK = {
    "results": [
        {
            "memory_id": 1,
            "text": "t",
            "kind": "semantic",
            "key": None,
            "revision": 1,
            "status": "active",
            "source": {"kind": "user", "ref": ""},
            "score": 1.0,
            "scores": {},
        }
    ]
}


class Scripted:
    """A server on 127.0.0.1 that answers each request with the next scripted (status, headers, body,
    delay) and records when each request arrived."""

    def __init__(self, answers):
        self.answers, self.arrivals = list(answers), []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.arrivals.append((time.monotonic(), self.headers.get("Authorization")))
                status, headers, body, delay = outer.answers.pop(0) if outer.answers else (500, {}, {}, 0)
                time.sleep(delay)
                data = json.dumps(body).encode()
                self.send_response(status)
                for k, v in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def gaps(self) -> list[float]:
        times = [a for a, _ in self.arrivals]
        return [b - a for a, b in zip(times, times[1:], strict=False)]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted():
    servers = []

    def make(*answers):
        servers.append(Scripted(answers))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


THROTTLED = {"error": "throttled", "message": "Request was throttled."}


def test_429_is_retried_after_the_wait_retry_after_asks_for(scripted):
    server = scripted((429, {"Retry-After": "1"}, THROTTLED, 0), (200, {}, RECALL_OK, 0))
    hits = memgov.Client(server.url, "tok", backoff=0.01).recall(scope="a", query="q")
    assert hits[0].memory_id == 1 and len(server.arrivals) == 2
    assert server.gaps()[0] >= 0.95
    assert server.arrivals[1][1] == "Token tok"


def test_503_without_retry_after_backs_off_then_succeeds(scripted):
    unavailable = {"error": "service_unavailable", "message": "down"}
    server = scripted((503, {}, unavailable, 0), (503, {}, unavailable, 0), (200, {}, RECALL_OK, 0))
    assert memgov.Client(server.url, "tok", backoff=0.05).recall(scope="a", query="q")[0].text == "t"
    assert len(server.arrivals) == 3


def test_throttled_after_the_last_retry_raises_with_retry_after(scripted):
    server = scripted(*[(429, {"Retry-After": "0"}, THROTTLED, 0)] * 3)
    with pytest.raises(memgov.Throttled) as err:
        memgov.Client(server.url, "tok", max_retries=2).recall(scope="a", query="q")
    assert len(server.arrivals) == 3 and err.value.retry_after == 0.0 and err.value.status == 429


def test_other_errors_are_not_retried(scripted):
    server = scripted((409, {}, {"error": "stale_revision", "message": "A later revision exists."}, 0))
    with pytest.raises(memgov.StaleRevision):
        memgov.Client(server.url, "tok").memories.create(scope="a", text="x")
    assert len(server.arrivals) == 1


def test_no_answer_within_the_timeout_is_a_connection_error(scripted):
    server = scripted((200, {}, RECALL_OK, 1.5))
    with pytest.raises(memgov.APIConnectionError) as err:
        memgov.Client(server.url, "tok", timeout=0.3).recall(scope="a", query="q")
    assert err.value.timeout is True


def test_async_client_retries_the_same_way(scripted):
    server = scripted((429, {"Retry-After": "1"}, THROTTLED, 0), (200, {}, RECALL_OK, 0))

    async def go():
        async with memgov.AsyncClient(server.url, "tok") as client:
            return await client.recall(scope="a", query="q")

    assert asyncio.run(go())[0].memory_id == 1 and server.gaps()[0] >= 0.95


def test_unreachable_service_is_a_connection_error_after_retries():
    with pytest.raises(memgov.APIConnectionError):
        memgov.Client("http://127.0.0.1:9", "tok", max_retries=1, backoff=0.01).recall(scope="a", query="q")
