"""Webhook delivery cannot hold up forgetting: deliveries run on a queue (and workers) of their own, each
has a total deadline (a receiver that answers one byte at a time is cut there, however short its pauses),
and the claim on a delivery outlives that deadline, so the reconciler never sends it again mid-request.
The SSRF guard judges an IPv6 address that embeds an IPv4 one by that IPv4 address."""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from django.utils import timezone

from governance.errors import InvalidInput
from governance.models import Outbox, WebhookDelivery
from governance.propagation import webhooks as hooks
from governance.propagation.webhook_transport import URL_PRIVATE, DeadlineExceeded, address_allowed, post
from governance.services.webhook import webhook_create
from governance.tasks import propagate_outbox
from memoryui.celery import app
from tests.conftest import token_client
from tests.governance.webhooks.conftest import remember, subscribe
from tests.webhook_receiver import Tarpit


def _fan_out(memory) -> WebhookDelivery:
    propagate_outbox(Outbox.objects.get(memory=memory, topic="memory.created").pk)
    return WebhookDelivery.objects.get()


def test_a_receiver_answering_one_byte_at_a_time_is_cut_at_the_total_deadline(settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 2.0  # each byte comes well within the per-read timeout
    settings.WEBHOOK_DEADLINE_SECONDS = 1.0
    with Tarpit(interval=0.05) as tarpit:
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            post(tarpit.url, b"{}", {})
        took = time.monotonic() - started
    # The tarpit would drip for over an hour; the delivery is over at its deadline (plus scheduling).
    assert took < 1.0 + 2.0, took


@pytest.mark.django_db(transaction=True)  # the sender runs on a thread of its own: it must see the rows
def test_a_tarpit_delivery_is_recorded_as_a_failed_attempt_and_not_sent_twice_while_in_flight(
    owner, project_scope, settings
):
    import threading

    settings.WEBHOOK_TIMEOUT_SECONDS = 2.0
    settings.WEBHOOK_DEADLINE_SECONDS = 1.5
    with Tarpit(interval=0.05) as tarpit:
        subscription, _ = subscribe(project_scope, tarpit.url, owner, ["memory.confirmed"])
        # The delivery row as the outbox's webhooks store makes it, without queueing a task (a worker of the
        # test session would race this test's sender for it).
        delivery = WebhookDelivery.objects.create(
            subscription=subscription,
            event_type="memory.confirmed",
            body={"type": "memory.confirmed"},
            next_attempt_at=timezone.now(),
        )
        before = tarpit.requests
        outcome = {}

        def send():
            from django.db import connection

            try:
                outcome["state"] = hooks.webhook_attempt(delivery.pk)
            finally:
                connection.close()

        sender = threading.Thread(target=send)
        sender.start()
        deadline = time.monotonic() + 5
        while tarpit.requests == before and time.monotonic() < deadline:
            time.sleep(0.02)
        # Mid-request: the reconciler's sweep and a duplicate message find the delivery claimed.
        assert hooks.webhook_deliveries_due(overdue_seconds=0) == 0
        assert hooks.webhook_attempt(delivery.pk) is None
        sender.join(10)
    assert (
        outcome["state"] == WebhookDelivery.State.PENDING
    )  # cut at the deadline, retried later with backoff
    row = WebhookDelivery.objects.get(pk=delivery.pk)
    assert "deadline" in row.last_error and row.attempts == 1
    assert tarpit.requests == before + 1


def test_the_claim_outlives_the_deliverys_deadline(owner, project_scope, settings, receiver):
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.2
    settings.WEBHOOK_DEADLINE_SECONDS = 60.0
    subscribe(project_scope, receiver.url, owner, ["memory.confirmed"])
    delivery = _fan_out(remember(project_scope, "Decks use the 16:9 format.", key="ratio", actor=owner))
    assert hooks._claim(delivery.pk)
    row = WebhookDelivery.objects.get(pk=delivery.pk)
    assert (row.claimed_until - row.last_attempt_at).total_seconds() > settings.WEBHOOK_DEADLINE_SECONDS


def test_webhook_deliveries_have_a_queue_of_their_own():
    queue = app.amqp.router.route({}, "governance.tasks.deliver_webhook")["queue"].name
    assert queue == settings.WEBHOOK_QUEUE == "webhooks"
    # Queueing each delivery (after a fan-out, or the reconciler's re-queue) is the webhooks queue's work too.
    assert app.amqp.router.route({}, "governance.tasks.queue_webhooks")["queue"].name == "webhooks"
    assert queue != settings.PROPAGATION_QUEUE
    assert (
        app.amqp.router.route({}, "governance.tasks.propagate_outbox")["queue"].name
        == settings.PROPAGATION_QUEUE
    )


EMBEDDING_LOOPBACK_OR_PRIVATE = [
    "http://[64:ff9b::7f00:1]/",  # NAT64 of 127.0.0.1
    "http://[64:ff9b::a00:1]/",  # NAT64 of 10.0.0.1
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://[2002:a9fe:a9fe::1]/",  # 6to4 of 169.254.169.254 (cloud metadata)
    "http://[::127.0.0.1]/",  # IPv4-compatible
    "http://[::ffff:0:7f00:1]/",  # IPv4-translated
    "http://[64:ff9b:1::7f00:1]/",  # NAT64 local-use prefix
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",  # Teredo, client 127.0.0.1
]


@pytest.mark.parametrize("url", EMBEDDING_LOOPBACK_OR_PRIVATE)
def test_ipv6_forms_embedding_a_private_ipv4_address_are_refused(owner, workspace_scope, settings, url):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(InvalidInput) as refused:
        webhook_create(
            workspace=workspace_scope.workspace, url=url, event_types=["memory.confirmed"], actor=owner
        )
    assert refused.value.message == URL_PRIVATE


def test_the_same_refusal_through_the_api_for_the_owner_and_403_or_404_for_others(
    owner, reviewer, outsider, workspace_scope, settings
):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    body = {"url": "http://[64:ff9b::7f00:1]/hook", "event_types": ["memory.confirmed"], "workspace": "acme"}
    refused = token_client(owner).post("/api/v1/webhooks", body, format="json")
    assert refused.status_code == 400 and refused.json()["message"] == URL_PRIVATE
    assert token_client(reviewer).post("/api/v1/webhooks", body, format="json").status_code == 403
    assert token_client(outsider).post("/api/v1/webhooks", body, format="json").status_code == 404


def test_public_addresses_behind_nat64_or_6to4_stay_allowed(settings):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    assert address_allowed("64:ff9b::808:808")  # NAT64 of 8.8.8.8
    assert address_allowed("2002:808:808::1")  # 6to4 of 8.8.8.8
    assert not address_allowed("::ffff:127.0.0.1")
