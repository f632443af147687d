"""Celery tasks: they take ids, re-fetch, return quietly when the row is gone, retry transient errors."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.db import OperationalError
from django.db.models import F, Q
from django.utils import timezone
from redis.exceptions import RedisError

from governance import propagation
from governance.models import Memory, Outbox, OutboxDelivery
from governance.propagation import EMBED_STATUSES

logger = logging.getLogger(__name__)

TRANSIENT = (OperationalError, RedisError, ConnectionError, TimeoutError)
RETRY = {"autoretry_for": TRANSIENT, "retry_backoff": 2, "retry_backoff_max": 120, "retry_jitter": True,
         "max_retries": 10}


@shared_task(**RETRY)
def propagate_outbox(outbox_id: int) -> dict:
    """Apply one outbox row to each derived store that has not applied it yet."""
    outbox = Outbox.objects.filter(pk=outbox_id).first()
    if outbox is None or outbox.state == Outbox.State.DONE:
        return {"outbox": outbox_id, "skipped": True}
    applied = []
    for delivery in outbox.deliveries.select_related("outbox").exclude(state=OutboxDelivery.State.DONE):
        if propagation.run_delivery(delivery):
            applied.append(delivery.store)
    propagation.finish_outbox(outbox_id)
    return {"outbox": outbox_id, "applied": applied}


@shared_task(**RETRY)
def embed_memories(memory_ids: list[int]) -> int:
    return propagation.embed_memories(memory_ids)


@shared_task(**RETRY)
def reconcile(*, stale_after_seconds: int = 30, limit: int = 500) -> dict:
    """Finish what a lost message, a dead worker or a Redis restart left undone, and repair drift."""
    cutoff = timezone.now() - timedelta(seconds=stale_after_seconds)
    pending = list(
        Outbox.objects.filter(state=Outbox.State.PENDING, created_at__lt=cutoff).order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    for outbox_id in pending:
        propagate_outbox.delay(outbox_id)
    # Drift: vectors of purged memories, and memories whose vector is missing or from an older text/model.
    purged = Memory.objects.filter(purged_at__isnull=False).exclude(embedding=None).update(
        embedding=None, embedding_hash=""
    )
    stale_ids = list(
        Memory.objects.filter(purged_at__isnull=True, status__in=EMBED_STATUSES, created_at__lt=cutoff)
        .filter(Q(embedding__isnull=True) | ~Q(embedding_hash=F("content_hash")))
        .values_list("pk", flat=True)[:limit]
    )
    if stale_ids:
        embed_memories.delay(stale_ids)
    from django.core.cache import cache

    cache.set("reconciler:last_run", timezone.now().isoformat(), timeout=None)
    return {"redispatched": len(pending), "purged_vectors": purged, "reembed": len(stale_ids)}
