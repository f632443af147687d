"""Real processes for crash tests: a private redis-server on a temporary unix socket (never the shared
one) and a Celery worker subprocess (solo pool, embedded beat) on the test database and that Redis."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import redis
from django.conf import settings
from django.db import connection

from devtools.embedded import redis_server_binary

ROOT = Path(__file__).resolve().parents[3]


class PrivateRedis:
    """A redis-server with an always-fsynced append-only file, so a SIGKILL loses nothing that was
    acknowledged (like a production Redis with AOF): what was in it comes back after a restart."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.sock = folder / "redis.sock"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.sock}?db=0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                redis_server_binary(),
                "--port",
                "0",
                "--unixsocket",
                str(self.sock),
                "--unixsocketperm",
                "700",
                "--dir",
                str(self.folder),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self.client().ping():
                    return
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError("private redis-server did not start")

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def client(self) -> redis.Redis:
        return redis.Redis(unix_socket_path=str(self.sock), socket_connect_timeout=1)


def database_url_for_test_db() -> str:
    name = connection.settings_dict["NAME"]
    base = settings.DATABASE_URL
    head, _, query = base.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")


class WorkerProcess:
    def __init__(self, redis_url: str, folder: Path):
        self.redis_url = redis_url
        self.folder = folder
        self.proc: subprocess.Popen | None = None
        self.log = folder / "worker.log"

    def start(self) -> None:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "memoryui.settings.test",
            "DATABASE_URL": database_url_for_test_db(),
            "REDIS_URL": self.redis_url,
            "RECONCILE_EVERY_SECONDS": "1",
            "RECONCILE_STALE_AFTER_SECONDS": "0",
            "RECONCILE_REQUEUE_AFTER_SECONDS": "3",  # a message lost with Redis is sent again soon
            "OUTBOX_LEASE_SECONDS": "3",
            "PROMOTION_EVERY_SECONDS": "3600",
            "RETENTION_EVERY_SECONDS": "3600",
        }
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "memoryui",
                "worker",
                "--pool=solo",
                "-B",
                "--loglevel=INFO",
                "-s",
                str(self.folder / "beat-schedule"),
                "-n",
                f"crash-test-{os.getpid()}@%h",
            ],
            cwd=ROOT,
            env=env,
            stdout=open(self.log, "ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self) -> None:
        """SIGKILL the worker and its embedded beat (its whole process group): no clean shutdown."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def pause(self) -> None:
        """SIGSTOP the worker's process group: it stays alive but cannot race a check the test makes."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGCONT)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""
