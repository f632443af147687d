"""Operational figures read from the database: outbox lag and embedding backlog. Each is one bounded
query (an index range scan or a counted LIMIT), cheap enough to run on every readiness probe and scrape."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Min
from django.utils import timezone

from governance.embedding.backends import embedder_class
from governance.models import Outbox, WebhookDelivery
from governance.propagation import needs_embedding


def outbox_lag_seconds() -> float:
    """Age in seconds of the oldest pending outbox row, 0.0 when none is pending (the `outbox_pending`
    partial index answers it with one index entry)."""
    oldest = Outbox.objects.filter(state=Outbox.State.PENDING).aggregate(oldest=Min("created_at"))["oldest"]
    if oldest is None:
        return 0.0
    return max(0.0, (timezone.now() - oldest).total_seconds())


def embedding_backlog_queryset():
    """Memories that need a vector from the configured embedder: not purged, in a status that is embedded,
    and with no vector, a vector of an older text or one from another model."""
    return needs_embedding(embedder_class(settings.EMBEDDING_BACKEND).name)


def embedding_backlog(*, cap: int) -> int:
    """How many memories need a vector, counted up to `cap` (a LIMIT keeps a huge backlog from costing a
    full count on every probe); a result equal to `cap` means "at least cap"."""
    return embedding_backlog_queryset().values("pk")[:cap].count()


def webhook_overdue_seconds() -> float:
    """How late the most overdue pending webhook delivery is (0.0 when none is due): workers or the broker
    are not keeping up. The `webhook_delivery_due` partial index answers it with one index entry."""
    now = timezone.now()
    oldest = WebhookDelivery.objects.filter(
        state=WebhookDelivery.State.PENDING, next_attempt_at__lt=now
    ).aggregate(oldest=Min("next_attempt_at"))["oldest"]
    return 0.0 if oldest is None else max(0.0, (now - oldest).total_seconds())


def webhook_failed(*, cap: int) -> int:
    """Webhook deliveries that used up their attempts and wait for a person, counted up to `cap`."""
    return WebhookDelivery.objects.filter(state=WebhookDelivery.State.FAILED).values("pk")[:cap].count()


def turn_retention_totals() -> tuple[int, int]:
    """(turns pruned, turns archived) by every retention policy so far: one row per policy, not per turn."""
    from django.db.models import Sum

    from governance.models import RetentionPolicy

    row = RetentionPolicy.objects.aggregate(pruned=Sum("turns_pruned"), archived=Sum("turns_archived"))
    return int(row["pruned"] or 0), int(row["archived"] or 0)
