"""Outbound events end to end: a change, the outbox, the real Celery worker, a real HTTP receiver on
loopback. What arrives is signed, retried, capped, never carries a memory's text, and stays in its
workspace."""

from __future__ import annotations

import time

from governance.models import Outbox, Role, WebhookDelivery
from governance.services.memory import memory_confirm, memory_forget, memory_retire
from governance.services.principal import grant_add
from governance.services.scope import scope_ensure
from governance.services.webhook import webhook_redeliver
from tests.conftest import wait_for
from tests.governance.webhooks.conftest import remember, subscribe
from tests.webhook_receiver import WebhookReceiver


def _delivery(event_type: str, state: str | None = None):
    qs = WebhookDelivery.objects.filter(event_type=event_type)
    return qs.filter(state=state).first() if state else qs.first()


def test_a_confirmed_memory_reaches_the_receiver_signed_with_the_subscriptions_secret(
    celery_worker,
    owner,
    project_scope,
    receiver,
):
    sub, secret = subscribe(project_scope, receiver.url, owner, ["memory.confirmed"])
    memory = remember(project_scope, "Decks are exported as PDF", key="export_format", actor=owner)
    hit = receiver.wait_for(1)[0]
    body = hit.json()
    assert body["type"] == "memory.confirmed" and body["workspace"] == "acme" and body["actor"] == "olivia"
    assert body["data"]["memory"]["id"] == memory.pk and body["data"]["memory"]["key"] == "export_format"
    assert body["data"]["memory"]["scope"] == "acme/slides" and body["data"]["memory"]["status"] == "active"
    assert (
        hit.headers["x-memgov-event-id"] == body["id"] and hit.headers["x-memgov-event"] == "memory.confirmed"
    )
    assert WebhookReceiver.verify(hit, secret)
    assert not WebhookReceiver.verify(hit, secret + "x")  # the check can fail
    delivery = wait_for(lambda: _delivery("memory.confirmed", "delivered"))
    assert (delivery.attempts, delivery.last_status_code, delivery.subscription_id) == (1, 200, sub.pk)
    assert delivery.response_ms is not None and str(delivery.event_id) == body["id"]
    assert wait_for(lambda: Outbox.objects.get(memory=memory, topic="memory.created").state == "done")


def test_a_receiver_answering_500_gets_the_same_event_again_until_it_answers_200(
    celery_worker,
    owner,
    project_scope,
):
    with WebhookReceiver(statuses=[500, 503]) as receiver:
        subscribe(project_scope, receiver.url, owner, ["memory.confirmed"])
        remember(project_scope, "Invoices are due in 30 days", key="invoice_terms", actor=owner)
        hits = receiver.wait_for(3)
        delivery = wait_for(lambda: _delivery("memory.confirmed", "delivered"))
    assert len({h.headers["x-memgov-event-id"] for h in hits}) == 1  # one event, three attempts
    assert [h.headers["x-memgov-attempt"] for h in hits] == ["1", "2", "3"]
    assert hits[0].body == hits[2].body
    assert hits[1].at > hits[0].at and (delivery.attempts, delivery.last_status_code) == (3, 200)


def test_a_receiver_that_keeps_failing_leaves_the_delivery_failed_after_the_cap_and_a_person_can_redeliver(
    celery_worker,
    owner,
    project_scope,
    settings,
):
    with WebhookReceiver(statuses=[500, 500, 500, 500]) as receiver:
        subscribe(project_scope, receiver.url, owner, ["memory.confirmed"])
        remember(project_scope, "Meetings end at five", key="meeting_end", actor=owner)
        failed = wait_for(lambda: _delivery("memory.confirmed", "failed"))
        assert failed.attempts == settings.WEBHOOK_MAX_ATTEMPTS == 3
        assert failed.last_status_code == 500 and "HTTP 500" in failed.last_error
        time.sleep(1.5)  # longer than any backoff: no fourth attempt comes on its own
        assert len(receiver.received) == 3
        webhook_redeliver(delivery_id=failed.pk, actor=owner)
        wait_for(lambda: _delivery("memory.confirmed", "delivered"))
        assert len(receiver.received) == 5  # the fourth answer was 500 too, the fifth 200
    assert len({h.headers["x-memgov-event-id"] for h in receiver.received}) == 1


def test_a_forgotten_memorys_event_carries_its_id_and_hash_and_never_its_text(
    celery_worker,
    owner,
    project_scope,
    receiver,
):
    subscribe(project_scope, receiver.url, owner)
    secret_text = "The client's door code is 4711-9932"
    memory = remember(project_scope, secret_text, key="door_code", actor=owner)
    memory_forget(memory_id=memory.pk, actor=owner, reason="sensitive", hard=True)
    hits = receiver.wait_for(2)
    forgotten = [h for h in hits if h.headers["x-memgov-event"] == "memory.forgotten"]
    assert len(forgotten) == 1
    data = forgotten[0].json()["data"]["memory"]
    assert data["id"] == memory.pk and data["content_hash"] == memory.content_hash and data["mode"] == "hard"
    assert "key" not in data and "text" not in data
    for hit in hits:  # not in the forget's event, nor in the confirm's before it
        assert b"4711" not in hit.body and b"door code" not in hit.body.lower()
    assert not WebhookDelivery.objects.filter(body__icontains="4711").exists()


def test_a_subscription_of_one_workspace_never_gets_another_workspaces_events(
    celery_worker,
    owner,
    outsider,
    project_scope,
    other_workspace_scope,
):
    grant_add(principal=outsider, scope=scope_ensure(path="globex", actor=None), role=Role.OWNER, actor=None)
    with WebhookReceiver() as ours, WebhookReceiver() as theirs:
        subscribe(project_scope, ours.url, owner)
        subscribe(other_workspace_scope, theirs.url, outsider)
        remember(other_workspace_scope, "Globex ships on Fridays", key="ship_day", actor=outsider)
        mine = remember(project_scope, "Acme ships on Mondays", key="ship_day", actor=owner)
        memory_retire(memory_id=mine.pk, actor=owner, reason="changed")
        ours.wait_for(2)
        theirs.wait_for(1)
        time.sleep(0.5)
    assert {h.json()["workspace"] for h in ours.received} == {"acme"}
    assert {h.json()["type"] for h in ours.received} == {"memory.confirmed", "memory.retired"}
    assert [h.json()["workspace"] for h in theirs.received] == ["globex"]
    assert all(b"Acme" not in h.body for h in theirs.received)


def test_a_proposal_an_agent_writes_tells_the_subscriber_a_review_is_waiting(
    celery_worker,
    owner,
    agent,
    reviewer,
    project_scope,
    receiver,
):
    subscribe(project_scope, receiver.url, owner, ["review.waiting", "memory.confirmed"])
    proposal = remember(project_scope, "The team prefers dark slides", kind="preference", actor=agent)
    assert proposal.status == "proposed"
    first = receiver.wait_for(1)[0].json()
    assert first["type"] == "review.waiting" and first["data"]["memory"]["id"] == proposal.pk
    assert first["actor"] == "slides-agent"
    memory_confirm(memory_id=proposal.pk, actor=reviewer)
    second = receiver.wait_for(2)[1].json()
    assert second["type"] == "memory.confirmed" and second["data"]["memory"]["id"] == proposal.pk
    assert second["actor"] == "rami"


def test_the_reconciler_sends_a_delivery_whose_task_was_lost(celery_worker, owner, project_scope, receiver):
    from datetime import timedelta

    from django.utils import timezone

    from governance.tasks import reconcile

    sub, secret = subscribe(project_scope, receiver.url, owner, ["memory.retired"])
    # As a worker that died after the fan-out leaves it: pending, due a minute ago, no message queued.
    lost = WebhookDelivery.objects.create(
        subscription=sub,
        event_type="memory.retired",
        next_attempt_at=timezone.now() - timedelta(seconds=60),
        body={"id": "lost", "type": "memory.retired"},
    )
    assert reconcile(stale_after_seconds=30)["webhooks_requeued"] == 1
    hit = receiver.wait_for(1)[0]
    assert hit.headers["x-memgov-event-id"] == str(lost.event_id) and WebhookReceiver.verify(hit, secret)
    assert wait_for(lambda: WebhookDelivery.objects.get(pk=lost.pk).state == "delivered")
