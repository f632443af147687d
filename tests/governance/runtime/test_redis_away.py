"""Redis is not on the answer path (issue 23). With the cache and the broker pointed at a port nothing
listens on (what a Redis restart looks like to a web process): a write that committed answers 201 within
a bounded time and its outbox row waits for the reconciler, which delivers it through the real broker and
worker once Redis is back; reads answer without the cache; the throttle counts in the process (and still
refuses past the rate) and /readyz and /metrics say so."""

from __future__ import annotations

import contextlib
import socket
import time

import pytest
from django.core.cache import cache
from django.test import Client, override_settings

from governance.models import Outbox, OutboxDelivery
from governance.runtime import degraded
from tests.conftest import token_client, wait_for
from tests.security.test_abuse_limits import MEMORY, rates

# A refused port costs a publish well under a second; the bound is loose for a loaded machine (the silent
# broker's test below is the one that tells a bounded publish from kombu's defaults).
BOUNDED_SECONDS = 5.0


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"


@contextlib.contextmanager
def broker_at(url: str):
    """The Celery app publishing to `url` (its connection and producer pools are made again for it)."""
    from memoryui.celery import app

    def repoint(to: str) -> None:
        app.conf.broker_url = to
        app._pool = None
        app.amqp._producer_pool = None

    before = app.conf.broker_url
    repoint(url)
    try:
        yield
    finally:
        repoint(before)


@pytest.fixture
def warm_client(agent):
    """A token client that has made one write while Redis was there (the first request of a process loads
    the URLconf, DRF and the write path: not what is timed here)."""
    client = token_client(agent)
    assert client.post("/api/v1/memories", {**MEMORY, "text": "Warm-up."}, format="json").status_code == 201
    return client


@pytest.fixture
def redis_away(settings):
    """Cache and broker unreachable for the test's duration; every part's breaker closed before and after."""
    for breaker in degraded.BREAKERS:
        breaker.reset()
    url = closed_port_url()
    cache_settings = {**settings.CACHES["default"], "LOCATION": url}
    with override_settings(CACHES={"default": cache_settings}), broker_at(url):
        yield
    for breaker in degraded.BREAKERS:
        breaker.reset()


@pytest.mark.django_db
def test_while_redis_is_away_a_write_answers_201_quickly_and_its_outbox_row_waits(
    agent, warm_client, redis_away, django_capture_on_commit_callbacks
):
    client = warm_client
    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True) as published:  # the dispatch after the commit
        created = client.post("/api/v1/memories", MEMORY, format="json")
    elapsed = time.monotonic() - started
    assert created.status_code == 201, created.content
    assert published and elapsed < BOUNDED_SECONDS
    assert degraded.BROKER.degraded and degraded.THROTTLE.degraded
    row = Outbox.objects.get(memory_id=created.json()["id"])
    assert row.state == Outbox.State.PENDING
    # The next write does not even try the broker (the breaker is open), and answers as fast.
    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True):
        second = client.post("/api/v1/memories", {**MEMORY, "text": "Second."}, format="json")
    assert second.status_code == 201 and time.monotonic() - started < BOUNDED_SECONDS


def test_a_broker_that_accepts_but_never_answers_holds_a_publish_for_a_bounded_time():
    """kombu's defaults wait on a silent broker for ever (measured: still waiting after 100 s)."""
    from django.conf import settings

    from governance.tasks import worker_heartbeat

    degraded.BROKER.reset()
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # connections complete in the backlog; nothing ever reads or answers
        with broker_at(f"redis://127.0.0.1:{silent.getsockname()[1]}/0"):
            started = time.monotonic()
            assert degraded.publish(worker_heartbeat.delay, what="a heartbeat") is False
            elapsed = time.monotonic() - started
    timeout = settings.CELERY_BROKER_TRANSPORT_OPTIONS["socket_timeout"]
    assert elapsed < 2 * timeout + 2  # two attempts (the publish retry policy), each up to the timeout
    assert degraded.BROKER.degraded
    degraded.BROKER.reset()


def test_once_redis_is_back_the_reconciler_delivers_what_was_written_while_it_was_away(
    agent, celery_worker, settings
):
    from governance.tasks import reconcile

    for breaker in degraded.BREAKERS:
        breaker.reset()
    client = token_client(agent)
    url = closed_port_url()
    with (
        override_settings(CACHES={"default": {**settings.CACHES["default"], "LOCATION": url}}),
        broker_at(url),
    ):
        created = client.post("/api/v1/memories", MEMORY, format="json")
        assert created.status_code == 201, created.content
    row = Outbox.objects.get(memory_id=created.json()["id"])
    time.sleep(0.5)  # nothing was queued for it: still pending once the worker had the chance
    assert OutboxDelivery.objects.filter(outbox=row).exclude(state=OutboxDelivery.State.DONE).exists()
    # Redis is back: the reconciler (beat queues it every RECONCILE_EVERY_SECONDS) finds the row and the
    # worker delivers it to every store.
    reconcile.delay(stale_after_seconds=0)
    wait_for(
        lambda: (
            not OutboxDelivery.objects.filter(outbox=row).exclude(state=OutboxDelivery.State.DONE).exists()
        ),
        timeout=60,
    )
    for breaker in degraded.BREAKERS:
        breaker.reset()


@pytest.mark.django_db
def test_while_redis_is_away_reads_answer_without_the_cache(agent, owner, project_scope, redis_away):
    from governance.services.memory import MemoryInput, memory_record

    memory = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="semantic",
            text="Slides use the 16:9 layout.",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    client = token_client(agent)
    assert client.get(f"/api/v1/memories/{memory.pk}").status_code == 200
    found = client.post(
        "/api/v1/recall",
        {"scope": "acme/slides", "query": "16:9 layout"},
        format="json",
    )
    assert found.status_code == 200, found.content
    assert memory.pk in [r["memory_id"] for r in found.json()["results"]]
    packet = client.post(
        "/api/v1/context",
        {"scope": "acme/slides", "query": "16:9 layout", "budget_tokens": 400},
        format="json",
    )
    assert packet.status_code == 200, packet.content
    # The dashboard's pages read the cache too (the reconciler's last run, layouts): they answer without it.
    dashboard = Client()
    dashboard.force_login(owner.user)
    assert dashboard.get("/").status_code == 200
    assert degraded.CACHE.degraded


@pytest.mark.django_db
def test_while_redis_is_away_the_throttle_counts_in_the_process_and_readyz_says_so(agent, redis_away):
    from memoryui.ops.metrics import _registry_text

    client = token_client(agent)
    with override_settings(REST_FRAMEWORK=rates(read="3/min")):
        codes = [client.get("/api/v1/memories").status_code for _ in range(4)]
    # Neither refusing every request nor letting every request through: the rate, counted here.
    assert codes == [200, 200, 200, 429]
    ready = Client().get("/readyz")
    body = ready.json()
    assert ready.status_code == 200, body  # the process answers: not a reason to take it out of service
    assert body["status"] == "degraded"
    assert body["checks"]["throttle"]["state"] == "degraded"
    assert body["checks"]["throttle"]["counts"] == "per-process"
    assert body["checks"]["redis"]["state"] == "degraded"
    assert body["checks"]["database"]["state"] == "ok"
    text = _registry_text().decode()
    assert 'memory_degraded{part="throttle"} 1.0' in text
    assert 'memory_redis_errors_total{use="throttle"}' in text


@pytest.mark.django_db
def test_once_redis_is_back_the_throttle_counts_in_redis_again(agent, settings):
    for breaker in degraded.BREAKERS:
        breaker.reset()
    client = token_client(agent)
    url = closed_port_url()
    with override_settings(CACHES={"default": {**settings.CACHES["default"], "LOCATION": url}}):
        assert client.get("/api/v1/memories").status_code == 200
    assert degraded.THROTTLE.degraded
    degraded.THROTTLE.retry_at = 0.0  # the retry interval has passed
    cache.clear()
    assert client.get("/api/v1/memories").status_code == 200
    assert not degraded.THROTTLE.degraded
    assert Client().get("/readyz").json()["checks"]["throttle"] == {"state": "ok", "counts": "shared"}


@pytest.mark.django_db
def test_while_redis_is_away_an_evaluation_upload_is_queued_quickly_and_the_reconciler_sends_it_later(
    owner, workspace_scope, redis_away, django_capture_on_commit_callbacks
):
    """The upload's publish is bounded like every other (governance/runtime/degraded.py): the run is stored,
    the page answers at once, and the reconciler queues the run once the broker is back."""
    import json

    from django.conf import settings as conf
    from django.core.files.uploadedfile import SimpleUploadedFile

    from governance.evaluation.runs import runs_requeue
    from governance.models import EvaluationRun
    from tests.governance.evaluation.test_benchmark_files import LOCOMO

    dashboard = Client()
    dashboard.force_login(owner.user)
    upload = SimpleUploadedFile("mini.json", json.dumps(LOCOMO).encode(), content_type="application/json")
    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True) as published:
        response = dashboard.post("/evaluation/upload/", {"file": upload, "workspace": "acme"})
    assert response.status_code == 302, response.content
    assert published and time.monotonic() - started < BOUNDED_SECONDS
    assert degraded.BROKER.degraded
    run = EvaluationRun.objects.get(suite="retrieval:mini.json")
    assert run.state == EvaluationRun.State.QUEUED
    # Still away: the reconciler's repair does not even try the broker.
    assert runs_requeue(older_than_seconds=0) == 0
    # Back (the breaker lets the next publish try): the run's message is sent.
    for breaker in degraded.BREAKERS:
        breaker.reset()
    with broker_at(conf.CELERY_BROKER_URL):
        assert runs_requeue(older_than_seconds=0) == 1
