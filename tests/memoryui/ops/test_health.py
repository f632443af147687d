"""Liveness and readiness: each check named with its state and figure, 503 when one fails."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from governance.models import Outbox
from governance.runtime.heartbeat import HEARTBEAT_KEY, record_heartbeat
from governance.services.memory import MemoryInput, memory_record
from memoryui.ops.health import NO_HEARTBEAT

CHECK_NAMES = {"database", "redis", "throttle", "worker_heartbeat", "outbox_lag", "embedding_backlog"}


@pytest.fixture(autouse=True)
def _no_heartbeat():
    cache.delete(HEARTBEAT_KEY)
    yield
    cache.delete(HEARTBEAT_KEY)


def test_healthz_answers_without_touching_the_database():
    # No django_db mark: any database access in this test raises.
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_is_ready_with_database_redis_and_a_fresh_heartbeat():
    record_heartbeat()
    response = Client().get("/readyz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert set(body["checks"]) == CHECK_NAMES
    assert all(check["state"] == "ok" for check in body["checks"].values())
    assert body["checks"]["outbox_lag"]["seconds"] == 0.0
    assert body["checks"]["worker_heartbeat"]["age_seconds"] < 5
    assert body["checks"]["embedding_backlog"]["count"] == 0


@pytest.mark.django_db
def test_readyz_fails_with_503_when_no_worker_ever_beat():
    response = Client().get("/readyz")
    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "fail"
    assert body["checks"]["database"]["state"] == "ok"
    assert body["checks"]["redis"]["state"] == "ok"
    assert body["checks"]["worker_heartbeat"] == {
        "state": "fail",
        "age_seconds": None,
        "max_seconds": 90.0,
        "message": NO_HEARTBEAT,
    }


@pytest.mark.django_db
def test_readyz_fails_when_the_heartbeat_is_older_than_the_setting(settings):
    settings.READY_MAX_HEARTBEAT_AGE_SECONDS = 30
    record_heartbeat(now=time.time() - 120)
    response = Client().get("/readyz")
    heartbeat = response.json()["checks"]["worker_heartbeat"]
    assert response.status_code == 503
    assert heartbeat["state"] == "fail"
    assert heartbeat["age_seconds"] >= 120


@pytest.mark.django_db
def test_readyz_fails_when_the_oldest_pending_outbox_row_is_past_the_lag_limit(settings):
    settings.READY_MAX_OUTBOX_LAG_SECONDS = 60
    record_heartbeat()
    row = Outbox.objects.create(topic="memory.created")
    Outbox.objects.filter(pk=row.pk).update(created_at=timezone.now() - timedelta(seconds=600))
    Outbox.objects.create(topic="memory.created", state=Outbox.State.DONE)  # a done row is no lag
    response = Client().get("/readyz")
    lag = response.json()["checks"]["outbox_lag"]
    assert response.status_code == 503
    assert lag["state"] == "fail"
    assert 600 <= lag["seconds"] < 700


@pytest.mark.django_db
def test_readyz_fails_when_the_embedding_backlog_is_past_its_limit_and_counts_boundedly(
    settings, project_scope, agent
):
    settings.READY_MAX_EMBEDDING_BACKLOG = 1
    record_heartbeat()
    for text in ("The client wants PPTX.", "The deadline is Friday.", "Use metric units."):
        # No worker in this test: the rows stay without a vector.
        memory_record(
            item=MemoryInput(
                scope=project_scope, kind="episodic", text=text, source_kind="user", session="s1"
            ),
            actor=agent,
        )
    response = Client().get("/readyz")
    backlog = response.json()["checks"]["embedding_backlog"]
    assert response.status_code == 503
    assert backlog == {"state": "fail", "count": 2, "max": 1, "capped": True}


@pytest.mark.django_db
def test_readyz_names_redis_as_degraded_but_stays_ready_when_redis_is_unreachable(settings, tmp_path):
    """Every request answers without Redis (issue 23), so Redis away does not take the process out of
    service: 200, status `degraded`, and the checks that read Redis name the error."""
    record_heartbeat()
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"unix://{tmp_path}/nothing.sock",
        }
    }
    response = Client().get("/readyz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "degraded"
    assert body["checks"]["database"]["state"] == "ok"
    assert body["checks"]["redis"]["state"] == "degraded"
    assert body["checks"]["redis"]["error"] == "ConnectionError"
    assert body["checks"]["worker_heartbeat"]["state"] == "degraded"


def test_a_worker_running_the_heartbeat_task_makes_the_service_ready(celery_worker):
    from governance.tasks import worker_heartbeat
    from tests.conftest import wait_for

    assert Client().get("/readyz").status_code == 503
    worker_heartbeat.delay()
    wait_for(lambda: cache.get(HEARTBEAT_KEY) is not None, timeout=30)
    assert Client().get("/readyz").status_code == 200
