"""A real HTTP receiver for webhook tests (and the browser walk): a ThreadingHTTPServer on loopback that
records every request and answers with the status codes it is told, in order (then 200).

    with WebhookReceiver(statuses=[500]) as receiver:
        ...  # subscribe receiver.url, make a change
        hits = receiver.wait_for(1)
        assert receiver.verify(hits[0], secret)
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.time)

    def json(self) -> dict:
        return json.loads(self.body)


class WebhookReceiver:
    def __init__(self, statuses: list[int] | None = None, redirect_to: str | None = None):
        self.statuses = list(statuses or [])
        self.redirect_to = redirect_to
        self.received: list[Received] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.received.append(
                        Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                if receiver.redirect_to:
                    self.send_header("Location", receiver.redirect_to)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):  # keep test output quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks/memgov"

    def __enter__(self) -> WebhookReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Received]:
        """Wait until at least `count` requests have arrived; return them all."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.05)
        raise AssertionError(
            f"the receiver got {len(self.received)} requests, not {count}, within {timeout}s"
        )

    @staticmethod
    def verify(hit: Received, secret: str, tolerance: float = 300.0) -> bool:
        """What a receiver does (docs/webhooks.md): recompute the HMAC over "<timestamp>.<body>", compare
        in constant time, and refuse a timestamp too far from now (a replay)."""
        timestamp = hit.headers["x-memgov-timestamp"]
        expected = (
            "sha256="
            + hmac.new(secret.encode(), timestamp.encode() + b"." + hit.body, hashlib.sha256).hexdigest()
        )
        fresh = abs(time.time() - int(timestamp)) <= tolerance
        return fresh and hmac.compare_digest(expected, hit.headers["x-memgov-signature"])


# The slow receiver of the isolation tests and of `bench_load --tarpit`: one implementation.
from devtools.benchmarks.tarpit import Tarpit  # noqa: E402, F401
