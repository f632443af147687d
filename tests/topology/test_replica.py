"""Read replicas with read-your-forgets, on the team deployment (devtools/topology.py, `replica=True`): a
PostgreSQL primary and one streaming replica (a hot standby made by pg_basebackup), the application
configured with DATABASE_URL and DATABASE_REPLICA_URL only.

The replica's replay is paused, so it keeps serving the past; a hard forget and a supersede on the primary
must still never be answered from that past: /recall and /context go to the primary (within the bounded
wait, well under a second) and say so (`served_by`). With replay resumed, reads go back to the replica.

Find it with `pytest -m topology`. It starts its own servers under a temporary folder and leaves nothing
running."""

from __future__ import annotations

import time
import uuid

import httpx
import pytest

from devtools.topology import Topology

pytestmark = [pytest.mark.topology, pytest.mark.slow]


@pytest.fixture(scope="module")
def topology(tmp_path_factory):
    topo = Topology(tmp_path_factory.mktemp("replica"), web_workers=2, replica=True, collectstatic=False)
    topo.start()
    try:
        yield topo
    finally:
        topo.stop()
    assert not any(proc.alive() for proc in topo.procs.values())
    assert not (topo.pgdata / "postmaster.pid").exists()
    assert not (topo.replica_data / "postmaster.pid").exists()


def headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Token {key}"}


def eventually(check, timeout: float = 30.0, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(every)


class Replay:
    """pg_wal_replay_pause() / pg_wal_replay_resume() on the replica."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology

    def pause(self) -> None:
        with self.topology.replica_connect() as conn:
            conn.execute("SELECT pg_wal_replay_pause()")
            assert eventually(
                lambda: conn.execute("SELECT pg_get_wal_replay_pause_state()").fetchone()[0] == "paused", 10
            )

    def resume(self) -> None:
        with self.topology.replica_connect() as conn:
            conn.execute("SELECT pg_wal_replay_resume()")

    def replayed_text(self, memory_id: int) -> str:
        """What the paused replica still holds for the memory (the proof that it lags)."""
        with self.topology.replica_connect() as conn:
            return conn.execute("SELECT text FROM governance_memory WHERE id = %s", [memory_id]).fetchone()[0]


@pytest.fixture
def replay(topology):
    replay = Replay(topology)
    yield replay
    replay.resume()  # whatever the test did, the next one starts with a replica that replays


@pytest.fixture(scope="module")
def tokens(topology):
    owner, agent = topology.issue_tokens(
        [("replica-owner", "acme", "owner", "user"), ("replica-agent", "acme/project", "agent", "agent")]
    )
    return headers(owner), headers(agent)


def post(topology, path: str, who: dict, body: dict) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = httpx.post(f"{topology.base_url}/api/v1{path}", headers=who, json=body, timeout=30)
    return response, time.monotonic() - started


def recall(topology, who, query):
    return post(topology, "/recall", who, {"scope": "acme/project", "query": query, "k": 10})


def context(topology, who, query):
    return post(topology, "/context", who, {"scope": "acme/project", "query": query, "budget_tokens": 800})


def served_by_replica_with(topology, who, query, needle) -> bool:
    """A recall answered by the replica that holds `needle` (the replica has replayed its row)."""
    response, _ = recall(topology, who, query)
    return (
        response.status_code == 200 and response.json()["served_by"] == "replica" and needle in response.text
    )


def warm(topology, who, query) -> None:
    """Each gunicorn worker's first packet loads what a packet needs (seconds on a busy machine): ask a few
    times first, so the timings below are the read path's, not a cold start's."""
    for _ in range(4):
        context(topology, who, query)


def test_a_hard_forget_is_never_served_by_a_paused_replica(topology, tokens, replay):
    owner, agent = tokens
    run = uuid.uuid4().hex[:8]
    secret = f"The vault door code {run} is written on the blue card"
    created, _ = post(
        topology,
        "/memories",
        agent,
        {"scope": "acme/project", "kind": "episodic", "text": secret, "source": {"kind": "user", "ref": run}},
    )
    assert created.status_code == 201, created.text
    memory_id = created.json()["id"]
    query = f"vault door code {run}"
    # Before the forget the replica answers, with the text (once it has replayed the new row).
    assert eventually(lambda: served_by_replica_with(topology, owner, query, secret))
    warm(topology, owner, query)

    replay.pause()
    forget, _ = post(topology, f"/memories/{memory_id}/forget", owner, {"mode": "hard", "reason": "asked to"})
    assert forget.status_code == 202, forget.text
    assert replay.replayed_text(memory_id) == secret  # the replica still holds the forgotten text

    for ask in (recall, context):
        for who in (owner, agent):
            response, seconds = ask(topology, who, query)
            assert response.status_code == 200, response.text
            assert run not in response.text, f"{ask.__name__} served the forgotten text"
            assert response.json()["served_by"] == "primary"
            assert seconds < 1.0, f"{ask.__name__} took {seconds:.2f}s"

    replay.resume()
    assert eventually(lambda: recall(topology, owner, query)[0].json()["served_by"] == "replica")
    for ask in (recall, context):
        response, _ = ask(topology, owner, query)
        assert response.json()["served_by"] == "replica" and run not in response.text


def test_a_paused_replica_never_serves_the_superseded_revision(topology, tokens, replay):
    owner, _ = tokens
    run = uuid.uuid4().hex[:8]
    old_text, new_text = (
        f"Release builds {run} use toolchain seven",
        f"Release builds {run} use toolchain nine",
    )
    created, _ = post(
        topology,
        "/memories",
        owner,
        {
            "scope": "acme/project",
            "kind": "convention",
            "key": f"toolchain-{run}",
            "text": old_text,
            "status": "active",
            "source": {"kind": "user", "ref": run},
        },
    )
    assert created.status_code == 201 and created.json()["status"] == "active", created.text
    query = f"which toolchain do release builds {run} use"
    assert eventually(lambda: served_by_replica_with(topology, owner, query, old_text))
    warm(topology, owner, query)

    replay.pause()
    new, _ = post(
        topology,
        f"/memories/{created.json()['id']}/supersede",
        owner,
        {"text": new_text, "reason": "moved on", "source": {"kind": "user", "ref": run}},
    )
    assert new.status_code == 201, new.text
    new_id = new.json()["id"]

    response, seconds = context(topology, owner, query)
    assert response.status_code == 200 and seconds < 1.0, (response.status_code, seconds)
    body = response.json()
    assert body["served_by"] == "primary"
    in_force = [b for slot in ("constraints", "evidence", "preferences") for b in body["packet"][slot]]
    assert [b["memory_id"] for b in in_force if run in b["text"]] == [new_id]
    assert all(b["text"] != old_text for b in in_force)
    recalled, seconds = recall(topology, owner, query)
    assert recalled.json()["served_by"] == "primary" and seconds < 1.0
    assert [r["memory_id"] for r in recalled.json()["results"] if run in r["text"]] == [new_id]

    replay.resume()
    assert eventually(lambda: served_by_replica_with(topology, owner, query, new_text))
    body = context(topology, owner, query)[0].json()
    assert body["served_by"] == "replica"
    in_force = [b for slot in ("constraints", "evidence", "preferences") for b in body["packet"][slot]]
    assert [b["memory_id"] for b in in_force if run in b["text"]] == [new_id]
