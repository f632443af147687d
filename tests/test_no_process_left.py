"""A test run leaves no process behind: a short run of its own, on a fresh data folder (so it starts the
embedded PostgreSQL and Redis itself, as `make test` does on a fresh clone), and afterwards no process names
that folder; run in parallel as `make test` runs it, where the workers find the servers the controlling
process started and only it stops them. (`make run` stopped with Ctrl-C or SIGTERM: tests/test_stack_smoke.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.test_stack_smoke import BASE_DIR, processes_using

pytestmark = pytest.mark.slow


def test_a_test_run_stops_the_embedded_servers_it_started():
    with tempfile.TemporaryDirectory(prefix="memgov-run-") as tmp:
        var_dir = Path(tmp) / "var"
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
        }
        env.update(MEMORY_VAR_DIR=str(var_dir), PYTHONUNBUFFERED="1")
        try:
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "-n",  # in parallel, as `make test` runs: the controlling process stops the servers
                    "2",
                    "tests/test_import_contracts.py::test_the_top_of_governance_holds_only_packages",
                    "tests/test_import_contracts.py::test_no_product_module_is_over_500_lines",
                ],
                cwd=BASE_DIR,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
            # The run did start both servers in that folder ...
            assert (var_dir / "pgdata" / "PG_VERSION").exists() and (var_dir / "redis.conf").exists()
            # ... and stopped them: no postgres, no redis-server names it any more.
            left = processes_using(var_dir)
            assert left == [], [p.info["cmdline"] for p in left]
        finally:
            for proc in processes_using(var_dir):  # a failed check must not leave them running either
                proc.kill()
