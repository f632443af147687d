"""The team deployment, run the way a team runs it (devtools/topology.py): PostgreSQL and Redis as
separate servers on TCP, gunicorn with several workers, two Celery workers on different queues, beat,
all configured only through the production settings and environment variables. One fault: the
propagation worker is SIGKILLed right after a hard forget. Nothing accepted may be lost.

Find it with `pytest -m topology`. It starts its own servers under a temporary folder and leaves nothing
running."""

from __future__ import annotations

import time
import uuid

import httpx
import pytest

from devtools.topology import Topology

pytestmark = [pytest.mark.topology, pytest.mark.slow]

# Short periods so the reconciler finishes a dead worker's work within seconds (operators keep the
# defaults of 30 s; docs/operations.md).
FAST_RECOVERY = {
    "RECONCILE_EVERY_SECONDS": "2",
    "RECONCILE_STALE_AFTER_SECONDS": "2",
    "RECONCILE_REQUEUE_AFTER_SECONDS": "5",
    "OUTBOX_LEASE_SECONDS": "5",
    "HEARTBEAT_EVERY_SECONDS": "5",
}


@pytest.fixture(scope="module")
def topology(tmp_path_factory):
    topo = Topology(
        tmp_path_factory.mktemp("topology"), web_workers=2, extra_env=FAST_RECOVERY, collectstatic=False
    )
    topo.start()
    try:
        yield topo
    finally:
        topo.stop()
    assert not any(proc.alive() for proc in topo.procs.values())
    assert not (topo.pgdata / "postmaster.pid").exists()  # PostgreSQL stopped too


def headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Token {key}"}


def eventually(check, timeout: float = 60.0, every: float = 0.5):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(every)


def redis_values_holding(topology: Topology, needle: bytes) -> list[bytes]:
    import redis

    client = redis.Redis(host="127.0.0.1", port=topology.redis_port)
    found = []
    for key in client.scan_iter(count=500):
        kind = client.type(key)
        if kind == b"string" and needle in (client.get(key) or b""):
            found.append(key)
        elif kind == b"list" and any(needle in item for item in client.lrange(key, 0, -1)):
            found.append(key)
        elif kind == b"hash" and any(needle in v for v in client.hvals(key)):
            found.append(key)
    return found


def test_a_team_deployment_loses_nothing_when_a_worker_is_killed_after_a_forget(topology):
    base = f"{topology.base_url}/api/v1"
    agent, owner, outsider = map(
        headers,
        topology.issue_tokens(
            [
                ("topo-agent", "acme/project", "agent", "agent"),
                ("topo-owner", "acme", "owner", "user"),
                ("topo-outsider", "other/project", "agent", "agent"),
            ]
        ),
    )
    run = uuid.uuid4().hex[:8]
    texts = [f"Deployment note {run}-{i}: the build uses toolchain number {i}" for i in range(5)]
    secret = texts[0]

    accepted = []
    for text in texts:
        response = httpx.post(
            f"{base}/memories",
            headers=agent,
            timeout=30,
            json={
                "scope": "acme/project",
                "kind": "episodic",
                "text": text,
                # One turn, one ref: an episode names one turn (docs/api.md, turn_already_stored).
                "source": {"kind": "user", "ref": f"{run}-{len(accepted)}"},
            },
        )
        assert response.status_code == 201, response.text
        accepted.append(response.json()["id"])

    packet = httpx.post(
        f"{base}/context",
        headers=owner,
        timeout=60,
        json={"scope": "acme/project", "query": f"toolchain {run}-0", "budget_tokens": 800},
    )
    assert packet.status_code == 200, packet.text
    assert secret in packet.text  # the stored turn now holds the text a hard forget must redact
    outsider_packet = httpx.post(
        f"{base}/context",
        headers=outsider,
        timeout=60,
        json={"scope": "other/project", "query": f"toolchain {run}-0", "budget_tokens": 800},
    )
    assert outsider_packet.status_code == 200 and run not in outsider_packet.text
    assert httpx.get(f"{base}/memories/{accepted[0]}", headers=outsider, timeout=30).status_code == 404

    forget = httpx.post(
        f"{base}/memories/{accepted[0]}/forget",
        headers=owner,
        timeout=30,
        json={"mode": "hard", "reason": "asked to be forgotten"},
    )
    assert forget.status_code == 202, forget.text
    killed = topology.kill_worker(
        "worker"
    )  # the propagation worker, with the forget's delivery queued or running

    # Writes accepted while the worker is dead or restarting.
    for i in range(2):
        response = httpx.post(
            f"{base}/memories",
            headers=agent,
            timeout=30,
            json={
                "scope": "acme/project",
                "kind": "episodic",
                "text": f"Written during the fault {run}-{i}",
                "source": {"kind": "user", "ref": f"{run}-fault-{i}"},
            },
        )
        assert response.status_code == 201, response.text
        accepted.append(response.json()["id"])

    assert eventually(lambda: topology.procs["worker"].pid != killed and topology.procs["worker"].alive(), 10)
    with topology.connect() as db:

        def settled():
            pending = db.execute(
                "SELECT count(*) FROM governance_outboxdelivery WHERE state <> 'done'"
            ).fetchone()[0]
            unembedded = db.execute(
                "SELECT count(*) FROM governance_memory WHERE embedding IS NULL AND purged_at IS NULL"
            ).fetchone()[0]
            return pending == 0 and unembedded == 0

        assert eventually(settled, timeout=90), "deliveries or embeddings still pending after the fault"

        # Every accepted write is stored exactly once.
        rows = db.execute(
            "SELECT id, text FROM governance_memory WHERE source_ref LIKE %s", [f"{run}-%"]
        ).fetchall()
        assert sorted(r[0] for r in rows) == sorted(accepted)
        stored_texts = [r[1] for r in rows if r[0] != accepted[0]]
        assert len(stored_texts) == len(set(stored_texts)) == len(accepted) - 1
        assert db.execute("SELECT count(*) FROM governance_outbox WHERE state <> 'done'").fetchone()[0] == 0
        # The forget reached every store: the row, its vector and keyword terms, the stored turns.
        purged = db.execute(
            "SELECT text, lexical, embedding IS NULL, purged_at IS NOT NULL, status FROM "
            "governance_memory WHERE id = %s",
            [accepted[0]],
        ).fetchone()
        assert purged == ("", "", True, True, "forgotten")
        assert (
            db.execute(
                "SELECT count(*) FROM governance_turn WHERE CAST(governance_turn.* AS text) LIKE %s",
                [f"%{secret}%"],
            ).fetchone()[0]
            == 0
        )
    assert redis_values_holding(topology, secret.encode()) == []
    again = httpx.post(
        f"{base}/context",
        headers=owner,
        timeout=60,
        json={"scope": "acme/project", "query": f"toolchain {run}-0", "budget_tokens": 800},
    )
    assert again.status_code == 200 and secret not in again.text
    audit = httpx.get(f"{base}/audit/verify", headers=owner, timeout=60)
    assert audit.status_code == 200 and audit.json()["ok"] is True, audit.text
    assert "worker" in {name for _, name in topology.restarts}


def test_the_application_runs_on_the_production_settings_and_tcp_servers_only(topology):
    env = topology.env
    assert env["DJANGO_SETTINGS_MODULE"] == "memoryui.settings.production"
    assert env["DATABASE_URL"].startswith("postgres://") and "@127.0.0.1:" in env["DATABASE_URL"]
    assert env["REDIS_URL"].startswith("redis://127.0.0.1:")
    assert "MEMORY_VAR_DIR" not in env
    ready = httpx.get(f"{topology.base_url}/readyz", timeout=30)
    body = ready.json()
    assert ready.status_code == 200, body
    # No embedded server was started by any application process: the topology's folder has no var/.
    assert not (topology.root / "var").exists()
    with topology.connect() as db:
        assert db.execute("SELECT inet_server_port()").fetchone()[0] == topology.pg_port
