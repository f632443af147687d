"""/metrics carries how late pending webhook deliveries are and how many have failed for good."""

from __future__ import annotations

from datetime import timedelta

from django.test import Client
from django.utils import timezone

from governance.models import Outbox, WebhookDelivery
from governance.tasks import propagate_outbox
from tests.governance.webhooks.conftest import remember, subscribe
from tests.memoryui.ops.test_metrics import _value


def test_the_scrape_reports_overdue_and_failed_webhook_deliveries(owner, project_scope):
    subscribe(project_scope, "https://hooks.example.net/memgov", owner, ["memory.confirmed"])
    for n in range(3):
        memory = remember(project_scope, f"Metric rule {n}", key=f"metric_rule_{n}", actor=owner)
        propagate_outbox(Outbox.objects.get(memory=memory, topic="memory.created").pk)
    first, second, third = WebhookDelivery.objects.order_by("pk")
    WebhookDelivery.objects.filter(pk=first.pk).update(
        next_attempt_at=timezone.now() - timedelta(seconds=600)
    )
    WebhookDelivery.objects.filter(pk__in=[second.pk, third.pk]).update(state="failed")
    text = Client().get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    assert 600 <= _value(text, "memory_webhook_overdue_seconds") < 700
    assert _value(text, "memory_webhook_failed_deliveries") == 2
    WebhookDelivery.objects.update(state="delivered")
    text = Client().get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    assert (
        _value(text, "memory_webhook_overdue_seconds") == 0
        and _value(text, "memory_webhook_failed_deliveries") == 0
    )
