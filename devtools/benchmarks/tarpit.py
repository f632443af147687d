"""A webhook receiver that never finishes answering: it reads the request, then sends its answer one byte
at a time, `interval` apart, until the sender hangs up. Every read gets a byte well within any per-read
timeout, so only a total deadline per delivery ends it (docs/webhooks.md). Used by the webhook isolation
tests and by `bench_load --tarpit N`. Counts the requests it got."""

from __future__ import annotations

import socket
import threading


class Tarpit:
    """A receiver that reads the request, then answers one byte at a time (`interval` apart), forever or
    until the sender hangs up: every read gets a byte well within any per-read timeout. Counts requests."""

    def __init__(self, interval: float = 0.1, host: str = "127.0.0.1"):
        self.interval = interval
        self.requests = 0
        self._count = threading.Lock()
        self._stop = threading.Event()
        self._sock = socket.create_server((host, 0))
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
        with self._count:
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
