"""The web processes' gunicorn settings (memoryui/gunicorn_conf.py) load in gunicorn itself, give a
stopping worker time to finish what it serves, and are what runstack and the topology start."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

from devtools import topology
from devtools.management.commands import runstack


def _printed_config(**env: str) -> dict[str, str]:
    result = subprocess.run(
        [sys.executable, "-m", "gunicorn", "--config=python:memoryui.gunicorn_conf", "--print-config"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return {
        name.strip(): value.strip()
        for name, _, value in (line.partition("=") for line in result.stdout.splitlines())
        if value
    }


def test_gunicorn_loads_the_config_with_graceful_restarts_and_no_preload():
    config = _printed_config()
    assert config["wsgi_app"] == "memoryui.wsgi:application"
    assert config["worker_class"] == "gthread"
    assert int(config["graceful_timeout"]) >= 30  # longer than the slowest request under load
    assert config["preload_app"] == "False"  # the embedder must not be created before a fork
    assert config["max_requests"] == "0"


def test_the_config_reads_the_environment():
    config = _printed_config(
        WEB_GRACEFUL_TIMEOUT="45", WEB_MAX_REQUESTS="1000", WEB_MAX_REQUESTS_JITTER="100"
    )
    assert (config["graceful_timeout"], config["max_requests"], config["max_requests_jitter"]) == (
        "45",
        "1000",
        "100",
    )


def test_runstack_and_the_topology_start_gunicorn_with_the_config():
    for module in (topology, runstack):
        assert "--config=python:memoryui.gunicorn_conf" in inspect.getsource(module)
