"""A worker SIGKILLed in the middle of propagation, and a Redis restarted while propagation is pending:
after a restart the reconciler completes the work and nothing forgotten resurfaces."""

import json

import pytest
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections
from django.test import override_settings

from governance import propagation
from governance.models import Memory, Outbox, OutboxDelivery, Status, Turn, TurnMemory
from governance.recall.packet import assemble_context, recall_memories
from governance.services import outbox as outbox_module
from governance.services.memory import MemoryInput, memory_forget, memory_record
from tests.conftest import wait_for
from tests.governance.propagation.helpers import postgres_hits, redis_hits, unique_marker
from tests.governance.propagation.procs import PrivateRedis, WorkerProcess

pytestmark = pytest.mark.slow


@pytest.fixture
def private_redis(tmp_path):
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.kill()


@pytest.fixture
def stack(transactional_db, private_redis, tmp_path, monkeypatch):
    """This process and a worker subprocess both on the private Redis (broker and cache)."""
    from memoryui.celery import app

    broker = private_redis.url.replace("unix://", "redis+socket://", 1)

    def dispatch(outbox_id: int, stores) -> None:
        from governance.tasks import embed_outbox, propagate_outbox

        try:
            with app.connection_for_write(broker) as conn:
                propagate_outbox.apply_async(args=[outbox_id], connection=conn, retry=False)
                if "embedding" in stores:
                    embed_outbox.apply_async(args=[outbox_id], connection=conn, retry=False)
        except Exception:  # broker down: committed anyway, the reconciler will dispatch it
            pass

    monkeypatch.setattr(outbox_module, "_dispatch", dispatch)
    caches = {"default": {**cache_settings(), "LOCATION": private_redis.url}}
    worker = WorkerProcess(private_redis.url, tmp_path)
    with override_settings(CACHES=caches):
        yield worker
    worker.kill()


def cache_settings() -> dict:
    from django.conf import settings

    return dict(settings.CACHES["default"])


def seed(scope, owner, marker: str, copies: int) -> tuple[Memory, list[int]]:
    secret = memory_record(
        item=MemoryInput(
            scope=scope,
            kind="semantic",
            text=f"The vault code is {marker}",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    first = assemble_context(principal=owner, scope=scope, query="what is the vault code?", budget_tokens=800)
    assert marker in first["text"]
    template = Turn.objects.get(pk=first["turn_id"])
    clones = Turn.objects.bulk_create(
        [
            Turn(
                scope=scope,
                principal=owner,
                query=template.query,
                request=template.request,
                packet=template.packet,
                text=template.text,
                trace=template.trace,
                budget_limit=template.budget_limit,
            )
            for _ in range(copies)
        ],
        batch_size=1000,
    )
    TurnMemory.objects.bulk_create(
        [TurnMemory(turn=t, memory=secret, slot="evidence") for t in clones], batch_size=2000
    )
    return secret, [first["turn_id"], *[t.pk for t in clones]]


def plant_redis_copies(scope, secret: Memory) -> None:
    """Put the memory in the hot set and a cached packet quoting it. Called once the seeding's own
    propagation is done, so that propagation (a cache generation bump) cannot drop them before the test."""
    packet = Turn.objects.filter(cited__memory=secret).order_by("pk").first().packet
    client = propagation.redis_client()
    client.zadd(cache.make_key(propagation.hot_set_key(scope.pk)), {str(secret.pk): 2.0})
    cache.set(
        propagation.workspace_cache_key(scope.workspace_id, "packet", "p1"), json.dumps(packet), timeout=3600
    )


def assert_nothing_resurfaces(secret: Memory, owner, scope, marker: str, redis_client) -> None:
    memory = Memory.objects.get(pk=secret.pk)
    assert (memory.status, memory.text, memory.embedding) == (Status.FORGOTTEN, "", None)
    assert secret.pk not in [
        r["memory_id"] for r in recall_memories(principal=owner, scope=scope, query="vault code")
    ]
    assert postgres_hits(marker) == []
    assert redis_hits(redis_client, marker) == []
    assert propagation.turns_still_holding_purged() == []


def all_done() -> bool:
    return not Outbox.objects.filter(state=Outbox.State.PENDING).exists()


def test_worker_killed_mid_propagation_is_completed_by_the_reconciler_after_restart(
    stack, project_scope, owner, private_redis
):
    marker = unique_marker()
    secret, turn_ids = seed(project_scope, owner, marker, copies=5000)
    stack.start()
    wait_for(all_done, timeout=120)
    plant_redis_copies(project_scope, secret)

    # The worker redacts the turns in batches, each committed; on a quiet machine all 5,000 take a quarter
    # of a second, too fast to kill it half-way by watching. So another connection holds the last turn's
    # row: the worker commits the first batches, then waits on that row, and is killed there.
    blocker = connections.create_connection(DEFAULT_DB_ALIAS)
    blocker.set_autocommit(False)
    with blocker.cursor() as cursor:
        cursor.execute("SELECT 1 FROM governance_turn WHERE id = %s FOR UPDATE", [max(turn_ids)])
    try:
        memory_forget(memory_id=secret.pk, actor=owner, reason="user asked", hard=True)
        outbox = Outbox.objects.filter(memory=secret, topic="memory.forgotten").get()
        turns_delivery = OutboxDelivery.objects.get(outbox=outbox, store="turns")
        # Kill once the worker has claimed the turns store and redacted part of the packets, not all.
        wait_for(
            lambda: Turn.objects.filter(pk__in=turn_ids, text__contains=propagation.REDACTED).exists(),
            timeout=60,
            interval=0.01,
        )
        stack.kill()
        # Checked while the row is still held: the killed worker's last UPDATE may still be waiting on it in
        # the server, and once the lock goes it commits there (the batch, not the delivery).
        turns_delivery.refresh_from_db()
        redacted = Turn.objects.filter(pk__in=turn_ids, text__contains=propagation.REDACTED).count()
        assert turns_delivery.state != OutboxDelivery.State.DONE and 0 < redacted < len(turn_ids), (
            stack.tail()
        )
    finally:
        blocker.rollback()
        blocker.close()
    assert Outbox.objects.get(pk=outbox.pk).state == Outbox.State.PENDING

    stack.start()  # the reconciler (beat in the new worker) re-dispatches once the dead worker's lease ends
    wait_for(lambda: Outbox.objects.get(pk=outbox.pk).state == Outbox.State.DONE, timeout=120)
    assert Turn.objects.filter(pk__in=turn_ids, text__contains=propagation.REDACTED).count() == len(turn_ids)
    assert_nothing_resurfaces(secret, owner, project_scope, marker, private_redis.client())


def test_redis_restarted_while_propagation_is_pending_loses_nothing(
    stack, project_scope, owner, private_redis
):
    marker = unique_marker()
    secret, turn_ids = seed(project_scope, owner, marker, copies=200)
    stack.start()
    wait_for(all_done, timeout=120)
    plant_redis_copies(project_scope, secret)
    assert redis_hits(private_redis.client(), marker), "the copies are in Redis before it dies"

    private_redis.kill()  # Redis dies: the forget still commits (reads never depend on propagation)
    memory_forget(memory_id=secret.pk, actor=owner, reason="user asked", hard=True)
    outbox = Outbox.objects.filter(memory=secret, topic="memory.forgotten").get()
    assert secret.pk not in [
        r["memory_id"] for r in recall_memories(principal=owner, scope=project_scope, query="vault code")
    ]
    import time

    time.sleep(2)  # the worker runs on without its broker for a while
    assert Outbox.objects.get(pk=outbox.pk).state == Outbox.State.PENDING
    # The append-only file brings back the hot set and the cached packet with the text. The worker is held
    # still while we look, or its reconnecting reconciler could clean the copy before the check sees it.
    stack.pause()
    try:
        private_redis.start()
        assert redis_hits(private_redis.client(), marker), "the restarted Redis should hold the stale copy"
    finally:
        stack.resume()
    wait_for(lambda: Outbox.objects.get(pk=outbox.pk).state == Outbox.State.DONE, timeout=120)
    assert_nothing_resurfaces(secret, owner, project_scope, marker, private_redis.client())
