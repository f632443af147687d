"""Celery tasks: they take ids, re-fetch, return quietly when the row is gone, retry transient errors."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from celery.signals import worker_ready
from django.core.cache import cache
from django.db import OperationalError
from django.db.models import Q
from django.utils import timezone
from redis.exceptions import RedisError

from governance import heartbeat, propagation
from governance.models import Memory, Outbox, OutboxDelivery
from governance.propagation import needs_embedding

logger = logging.getLogger(__name__)

TRANSIENT = (OperationalError, RedisError, ConnectionError, TimeoutError)
RETRY = {"autoretry_for": TRANSIENT, "retry_backoff": 2, "retry_backoff_max": 120, "retry_jitter": True,
         "max_retries": 10}


@shared_task(**RETRY)
def propagate_outbox(outbox_id: int) -> dict:
    """Apply one outbox row to each derived store that has not applied it yet, except the embedding
    store: that one is the `embedding` queue's work (embed_outbox), so a backlog of embeddings never
    holds up a forget, a cache bump or a summary."""
    outbox = Outbox.objects.filter(pk=outbox_id).first()
    if outbox is None or outbox.state == Outbox.State.DONE:
        return {"outbox": outbox_id, "skipped": True}
    applied = []
    pending = outbox.deliveries.select_related("outbox").exclude(state=OutboxDelivery.State.DONE)
    for delivery in pending.exclude(store="embedding"):
        if propagation.run_delivery(delivery):
            applied.append(delivery.store)
    propagation.finish_outbox(outbox_id)
    return {"outbox": outbox_id, "applied": applied}


@shared_task(**RETRY)
def embed_outbox(outbox_id: int) -> dict:
    """The embedding delivery of one outbox row (routed to the `embedding` queue)."""
    delivery = (OutboxDelivery.objects.select_related("outbox").filter(outbox_id=outbox_id, store="embedding")
                .exclude(state=OutboxDelivery.State.DONE).first())
    if delivery is None:
        return {"outbox": outbox_id, "skipped": True}
    applied = propagation.run_delivery(delivery)
    propagation.finish_outbox(outbox_id)
    return {"outbox": outbox_id, "applied": ["embedding"] if applied else []}


def dispatch_outbox(outbox_id: int, stores) -> None:
    """Queue the work of one outbox row: the embedding on its own queue, everything else on the default."""
    if any(store != "embedding" for store in stores):
        propagate_outbox.delay(outbox_id)
    if "embedding" in stores:
        embed_outbox.delay(outbox_id)


@shared_task(**RETRY)
def deliver_webhook(delivery_id: int) -> str | None:
    """Send one webhook delivery if it is due and unclaimed (its own retries are scheduled by the
    attempt itself, with backoff and jitter; docs/webhooks.md)."""
    return propagation.webhook_attempt(delivery_id)


@shared_task(**RETRY)
def embed_memories(memory_ids: list[int]) -> int:
    """Embed these memories (routed to the `embedding` queue); rows another caller holds are skipped."""
    return propagation.embed_memories(memory_ids)


@shared_task(**RETRY)
def reconcile(*, stale_after_seconds: int | None = None, limit: int = 500) -> dict:
    """Finish what a lost message, a dead worker or a Redis restart left undone, and repair drift."""
    if stale_after_seconds is None:
        from django.conf import settings

        stale_after_seconds = getattr(settings, "RECONCILE_STALE_AFTER_SECONDS", 30)
    cutoff = timezone.now() - timedelta(seconds=stale_after_seconds)
    pending = list(
        Outbox.objects.filter(state=Outbox.State.PENDING, created_at__lt=cutoff).order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    stores = {}
    for outbox_id, store in OutboxDelivery.objects.filter(outbox_id__in=pending).exclude(
        state=OutboxDelivery.State.DONE
    ).values_list("outbox_id", "store"):
        stores.setdefault(outbox_id, set()).add(store)
    for outbox_id in pending:
        dispatch_outbox(outbox_id, stores.get(outbox_id, {"cache"}))
    # Drift: vectors of purged memories, and memories whose vector is missing or from an older text/model.
    purged = Memory.objects.filter(purged_at__isnull=False).exclude(embedding=None).update(
        embedding=None, embedding_hash=""
    )
    stale_ids = list(
        # Any model's vector counts as current here: a model switch is `manage.py reembed`'s work.
        needs_embedding(None).filter(created_at__lt=cutoff)
        # A row someone is embedding right now (an import, a worker) is theirs until the lease ends.
        .filter(Q(embedding_claimed_until__isnull=True) | Q(embedding_claimed_until__lt=timezone.now()))
        .values_list("pk", flat=True)[:limit]
    )
    if stale_ids:
        embed_memories.delay(stale_ids)
    webhooks = propagation.webhook_deliveries_due(overdue_seconds=stale_after_seconds, limit=limit)
    cache.set("reconciler:last_run", timezone.now().isoformat(), timeout=None)
    drift = repair_derived_drift()
    return {"redispatched": len(pending), "purged_vectors": purged, "reembed": len(stale_ids),
            "webhooks_requeued": webhooks, **drift}


def repair_derived_drift() -> dict:
    """Derived copies that disagree with the source: hot-set members that are no longer recallable,
    cached entries of an old generation (they may hold a forgotten text), stored packets still showing a
    purged memory, purged text left in the keyword column."""
    from governance.models import RECALLABLE
    from governance.services.summary import summaries_redact

    client = propagation._redis()
    hot_removed = 0
    for key in propagation._scan("hot:*"):
        if client.type(key) != b"zset":
            continue
        members = [int(m) for m in client.zrange(key, 0, -1) if m.isdigit()]
        live = set(
            Memory.objects.filter(pk__in=members, status__in=RECALLABLE, meta__archived_at__isnull=True)
            .values_list("pk", flat=True)
        )
        dead = [str(m) for m in members if m not in live]
        if dead:
            hot_removed += client.zrem(key, *dead)
    old_entries = 0
    for key in propagation._scan("ws:*"):
        # <prefix>:<version>:ws:<workspace>:g<generation>:...
        parts = key.decode().split(":")
        try:
            at = parts.index("ws")
            workspace_id, generation = int(parts[at + 1]), int(parts[at + 2].lstrip("g"))
        except (ValueError, IndexError):
            continue
        current = cache.get(propagation.cache_generation_key(workspace_id)) or 0
        if generation != int(current):
            old_entries += client.delete(key)
    drifted = propagation.turns_still_holding_purged()
    if drifted:
        propagation.redact_turns(sorted({m for _, m in drifted}))
    lexical = Memory.objects.filter(purged_at__isnull=False).exclude(lexical="").update(lexical="")
    from governance.models import Summary

    purged_ids = list(Memory.objects.filter(purged_at__isnull=False).values_list("pk", flat=True)[:5000])
    cited = Summary.objects.filter(cited_ids__overlap=purged_ids).exists() if purged_ids else False
    redacted = summaries_redact(memory_ids=purged_ids) if cited else 0
    return {"hot_removed": hot_removed, "old_cache_entries": old_entries, "turns_redacted": len(drifted),
            "lexical_cleared": lexical, "summaries_redacted": redacted}


@shared_task(**RETRY)
def apply_retention() -> dict:
    """Run every enabled retention policy (beat)."""
    from governance.services.retention import retention_apply_all

    return retention_apply_all()


@shared_task(**RETRY)
def scan_promotions() -> int:
    """Turn repeated, consistent candidates into promotion proposals (beat)."""
    from governance.models import Scope, Status
    from governance.services.promotion import PROMOTABLE_KINDS, promotion_scan

    scope_ids = set(
        Memory.objects.filter(status=Status.CANDIDATE, kind__in=PROMOTABLE_KINDS).values_list("scope_id", flat=True)
    )
    return sum(len(promotion_scan(scope=scope)) for scope in Scope.objects.filter(pk__in=scope_ids))


@shared_task(**RETRY)
def rebuild_stale_summaries() -> int:
    from governance.services.summary import rebuild_stale_summaries as rebuild

    return rebuild()


@shared_task(**RETRY)
def maintain_vector_indexes() -> dict:
    """Give every big scope its own HNSW index and drop the ones no longer wanted (beat; see
    governance/recall/vector_index.py). Builds run CONCURRENTLY: writes go on meanwhile."""
    from governance.recall import vector_index

    report = vector_index.maintain()
    if report["built"] or report["dropped"] or report["dropped_invalid"]:
        logger.info("vector indexes: built %s, dropped %s, dropped invalid %s", report["built"],
                    report["dropped"], report["dropped_invalid"])
    return {k: v for k, v in report.items() if k != "ms"} | {"ms": {str(k): v for k, v in report["ms"].items()}}


@shared_task(ignore_result=True)
def worker_heartbeat() -> None:
    """Beat queues this every HEARTBEAT_EVERY_SECONDS: that a worker ran it proves a worker takes tasks
    from the broker (readiness reads the age, /readyz)."""
    heartbeat.record_heartbeat()


@worker_ready.connect
def _heartbeat_on_start(**_kwargs) -> None:
    # A worker that just started is alive before beat's next tick.
    try:
        heartbeat.record_heartbeat()
    except TRANSIENT:  # Redis not there yet: the periodic task records it later
        logger.warning("worker heartbeat could not be recorded at start")


# An uploaded conversation file is imported (and embedded) and measured in one task: longer limits than
# the global ones, still capped; the upload size limit (EVALUATION_UPLOAD_MAX_BYTES) bounds the work.
@shared_task(soft_time_limit=1800, time_limit=1900)
def run_retrieval_evaluation(run_id: int) -> str:
    """Run a queued evaluation of an uploaded file (governance.services.evaluation); idempotent: only the
    worker that moves the run from queued to running does the work."""
    from governance.services.evaluation import evaluation_run_retrieval

    run = evaluation_run_retrieval(run_id=run_id)
    return run.state if run is not None else "skipped"
