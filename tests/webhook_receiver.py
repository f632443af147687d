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
                    receiver.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
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
        raise AssertionError(f"the receiver got {len(self.received)} requests, not {count}, within {timeout}s")

    @staticmethod
    def verify(hit: Received, secret: str, tolerance: float = 300.0) -> bool:
        """What a receiver does (docs/webhooks.md): recompute the HMAC over "<timestamp>.<body>", compare
        in constant time, and refuse a timestamp too far from now (a replay)."""
        timestamp = hit.headers["x-memgov-timestamp"]
        expected = "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + hit.body, hashlib.sha256).hexdigest()
        fresh = abs(time.time() - int(timestamp)) <= tolerance
        return fresh and hmac.compare_digest(expected, hit.headers["x-memgov-signature"])


class Tarpit:
    """A receiver that reads the request, then answers one byte at a time (`interval` apart), forever or
    until the sender hangs up: every read gets a byte well within any per-read timeout. Counts requests."""

    def __init__(self, interval: float = 0.1):
        import socket

        self.interval = interval
        self.requests = 0
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/hooks/tarpit"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn) -> None:
        self.requests += 1
        answer = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100000
        try:
            conn.settimeout(5)
            conn.recv(65536)
            for i in range(len(answer)):
                if self._stop.wait(self.interval):
                    break
                conn.sendall(answer[i : i + 1])
        except OSError:
            pass
        finally:
            conn.close()

    def __enter__(self) -> Tarpit:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.thread.join(2)
        self._sock.close()
