"""GET /metrics: who may scrape it, and the metric families it carries."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from governance.models import Outbox, OutboxDelivery
from governance.services.memory import MemoryInput, memory_record
from memoryui.ops.metrics import BAD_METRICS_TOKEN
from tests.conftest import token_client


def _scrape(client: Client | None = None, **extra):
    return (client or Client()).get("/metrics", **extra)


def _value(text: str, sample: str) -> float:
    """The value of the sample line that starts with `sample` (name and labels)."""
    for line in text.splitlines():
        if line.startswith(sample + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{sample} not in the scrape:\n{text}")


@pytest.mark.django_db
def test_metrics_are_served_to_a_loopback_address_by_default():
    response = _scrape(REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert "memory_outbox_lag_seconds" in response.content.decode()


@pytest.mark.django_db
def test_metrics_are_hidden_from_other_addresses_without_a_token(settings):
    settings.METRICS_TOKEN = "s3cret-token"
    response = _scrape(REMOTE_ADDR="203.0.113.9")
    assert response.status_code == 404
    assert b"memory_" not in response.content


@pytest.mark.django_db
def test_metrics_are_served_to_any_address_with_the_bearer_token_and_refused_with_a_wrong_one(settings):
    settings.METRICS_TOKEN = "s3cret-token"
    ok = _scrape(REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer s3cret-token")
    assert ok.status_code == 200 and b"memory_embedding_backlog" in ok.content
    wrong = _scrape(REMOTE_ADDR="127.0.0.1", HTTP_AUTHORIZATION="Bearer guess")
    assert wrong.status_code == 403
    assert wrong.content.decode() == BAD_METRICS_TOKEN


@pytest.mark.django_db
def test_no_token_is_accepted_when_none_is_configured(settings):
    settings.METRICS_TOKEN = ""
    assert _scrape(REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer ").status_code == 404
    assert _scrape(REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer anything").status_code == 403


@pytest.mark.django_db
def test_allowed_addresses_come_from_the_setting(settings):
    settings.METRICS_ALLOWED_IPS = ["10.0.0.5"]
    assert _scrape(REMOTE_ADDR="10.0.0.5").status_code == 200
    assert _scrape(REMOTE_ADDR="127.0.0.1").status_code == 404


@pytest.mark.django_db
def test_scrape_time_gauges_show_outbox_lag_backlog_and_propagation_latency(project_scope, agent):
    memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="episodic",
            text="The client wants PPTX.",
            source_kind="user",
            session="s1",
        ),
        actor=agent,
    )  # no worker: no vector
    old = Outbox.objects.create(topic="memory.created")
    Outbox.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(seconds=300))
    done = Outbox.objects.create(topic="memory.created", state=Outbox.State.DONE)
    OutboxDelivery.objects.create(
        outbox=done,
        store="cache",
        state=OutboxDelivery.State.DONE,
        done_at=done.created_at + timedelta(seconds=2),
    )
    text = _scrape(REMOTE_ADDR="127.0.0.1").content.decode()
    assert _value(text, "memory_metrics_database_up") == 1.0
    assert 300 <= _value(text, "memory_outbox_lag_seconds") < 400
    assert _value(text, "memory_embedding_backlog") == 1.0
    assert _value(text, 'memory_propagation_latency_seconds{stat="max",store="cache"}') == pytest.approx(
        2.0, abs=0.01
    )


@pytest.mark.django_db
def test_requests_context_stages_and_throttled_answers_are_counted(settings, reviewer, project_scope):
    client = token_client(reviewer)
    context = client.post(
        "/api/v1/context",
        {"scope": "acme/slides", "query": "export format", "budget_tokens": 300},
        format="json",
    )
    assert context.status_code == 200
    stages = {stage["name"] for stage in context.json()["trace"]["stages"]}
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "read": "1/min"},
    }
    before = _scrape(REMOTE_ADDR="127.0.0.1").content.decode()
    throttled_before = _value_or_zero(before, 'memory_throttled_requests_total{bucket="read"}')
    answers = [client.get("/api/v1/memories").status_code for _ in range(3)]
    assert 429 in answers
    text = _scrape(REMOTE_ADDR="127.0.0.1").content.decode()
    assert _value(text, 'memory_throttled_requests_total{bucket="read"}') >= throttled_before + 2
    assert 'memory_http_request_duration_seconds_count{method="POST",route="' in text
    assert 'status_class="2xx"' in text and 'status_class="4xx"' in text
    for stage in stages:
        assert f'memory_context_stage_seconds_count{{stage="{stage}"}}' in text


def _value_or_zero(text: str, sample: str) -> float:
    try:
        return _value(text, sample)
    except AssertionError:
        return 0.0
