"""The reconciler: finishes what a lost message, a dead worker or a Redis restart left undone, and
repairs derived copies that disagree with the source. Beat runs it (`governance.tasks.reconcile`, on
the `propagation` queue); it is safe to run any number of times, and concurrently."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db.models import Q
from django.utils import timezone

from governance.models import Memory, Outbox, OutboxDelivery
from governance.propagation.embedding import drop_purged_vectors, needs_embedding
from governance.propagation.stores import cache_generation_key, redis_client, scan_keys
from governance.propagation.turns import redact_turns, turns_still_holding_purged

LAST_RUN_KEY = "reconciler:last_run"


def pending_outbox(*, stale_after_seconds: float, limit: int) -> dict[int, set[str]]:
    """Outbox rows still pending after `stale_after_seconds`, oldest first, with the stores each has not
    finished (a row with every delivery done but not yet marked done gets {"cache"}: re-running a done
    delivery is a no-op that lets finish_outbox close the row). A delivery whose message is still
    waiting (queued less than RECONCILE_REQUEUE_AFTER_SECONDS ago, not yet taken by a worker: a backlog)
    is left to it; a row whose open deliveries all are is not dispatched again on this pass."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=stale_after_seconds)
    requeue = now - timedelta(seconds=float(settings.RECONCILE_REQUEUE_AFTER_SECONDS))
    pending = list(
        Outbox.objects.filter(state=Outbox.State.PENDING, created_at__lt=cutoff)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    stores: dict[int, set[str]] = {outbox_id: set() for outbox_id in pending}
    for outbox_id, store, queued_at in (
        OutboxDelivery.objects.filter(outbox_id__in=pending)
        .exclude(state=OutboxDelivery.State.DONE)
        .values_list("outbox_id", "store", "queued_at")
    ):
        stores[outbox_id].add(store if queued_at is None or queued_at < requeue else "")
    return {
        outbox_id: {s for s in found if s} or {"cache"}
        for outbox_id, found in stores.items()
        if not found or any(found)
    }


def mark_dispatched(outbox_stores: dict[int, set[str]]) -> None:
    """The reconciler queued these rows' open deliveries: they wait for that message for a while."""
    if outbox_stores:
        now = timezone.now()
        requeue = now - timedelta(seconds=float(settings.RECONCILE_REQUEUE_AFTER_SECONDS))
        OutboxDelivery.objects.filter(outbox_id__in=list(outbox_stores)).exclude(
            state=OutboxDelivery.State.DONE
        ).filter(Q(queued_at__isnull=True) | Q(queued_at__lt=requeue)).update(queued_at=now)


def stale_embeddings(*, stale_after_seconds: float, limit: int) -> list[int]:
    """Memories whose vector is missing or from an older text, older than the cutoff and not under a
    live claim (a row someone is embedding right now is theirs until the lease ends)."""
    cutoff = timezone.now() - timedelta(seconds=stale_after_seconds)
    return list(
        # Any model's vector counts as current here: a model switch is `manage.py reembed`'s work.
        needs_embedding(None)
        .filter(created_at__lt=cutoff)
        .filter(Q(embedding_claimed_until__isnull=True) | Q(embedding_claimed_until__lt=timezone.now()))
        .values_list("pk", flat=True)[:limit]
    )


def reconcile(*, dispatch, embed, stale_after_seconds: float | None = None, limit: int = 500) -> dict:
    """One pass. `dispatch(outbox_id, stores)` queues an outbox row's deliveries and `embed(ids)` queues
    an embedding batch (the tasks module passes its Celery senders; a test may pass direct calls)."""
    if stale_after_seconds is None:
        stale_after_seconds = settings.RECONCILE_STALE_AFTER_SECONDS
    pending = pending_outbox(stale_after_seconds=stale_after_seconds, limit=limit)
    for outbox_id, stores in pending.items():
        dispatch(outbox_id, stores)
    mark_dispatched(pending)
    # Drift: vectors of purged memories, and memories whose vector is missing or from an older text.
    purged = drop_purged_vectors()
    stale_ids = stale_embeddings(stale_after_seconds=stale_after_seconds, limit=limit)
    if stale_ids:
        embed(stale_ids)
    from governance.propagation.webhooks import webhook_deliveries_due

    webhooks = webhook_deliveries_due(overdue_seconds=stale_after_seconds, limit=limit)
    from governance.propagation.stores import REPAIRS

    # Evaluation runs whose message was lost (governance/evaluation/runs.py registers the repair).
    requeue_runs = REPAIRS.get("evaluation_runs_requeue")
    runs = requeue_runs(older_than_seconds=settings.RECONCILE_REQUEUE_AFTER_SECONDS) if requeue_runs else 0
    cache.set(LAST_RUN_KEY, timezone.now().isoformat(), timeout=None)
    drift = repair_derived_drift()
    return {
        "redispatched": len(pending),
        "purged_vectors": purged,
        "reembed": len(stale_ids),
        "webhooks_requeued": webhooks,
        "evaluation_runs_requeued": runs,
        **drift,
    }


def repair_derived_drift() -> dict:
    """Derived copies that disagree with the source: hot-set members that are no longer recallable,
    cached entries of an old generation (they may hold a forgotten text), stored packets still showing a
    purged memory, purged text left in the keyword column."""
    from governance.models import RECALLABLE, Summary
    from governance.propagation.stores import REPAIRS

    client = redis_client()
    hot_removed = 0
    for key in scan_keys("hot:*"):
        if client.type(key) != b"zset":
            continue
        members = [int(m) for m in client.zrange(key, 0, -1) if m.isdigit()]
        live = set(
            Memory.objects.filter(
                pk__in=members, status__in=RECALLABLE, meta__archived_at__isnull=True
            ).values_list("pk", flat=True)
        )
        dead = [str(m) for m in members if m not in live]
        if dead:
            hot_removed += client.zrem(key, *dead)
    old_entries = 0
    for key in scan_keys("ws:*"):
        # <prefix>:<version>:ws:<workspace>:g<generation>:...
        parts = key.decode().split(":")
        try:
            at = parts.index("ws")
            workspace_id, generation = int(parts[at + 1]), int(parts[at + 2].lstrip("g"))
        except (ValueError, IndexError):
            continue
        current = cache.get(cache_generation_key(workspace_id)) or 0
        if generation != int(current):
            old_entries += client.delete(key)
    drifted = turns_still_holding_purged()
    if drifted:
        redact_turns(sorted({m for _, m in drifted}))
    lexical = Memory.objects.filter(purged_at__isnull=False).exclude(lexical="").update(lexical="")
    purged_ids = list(Memory.objects.filter(purged_at__isnull=False).values_list("pk", flat=True)[:5000])
    cited = Summary.objects.filter(cited_ids__overlap=purged_ids).exists() if purged_ids else False
    redacted = REPAIRS["summaries_redact"](memory_ids=purged_ids) if cited else 0
    return {
        "hot_removed": hot_removed,
        "old_cache_entries": old_entries,
        "turns_redacted": len(drifted),
        "lexical_cleared": lexical,
        "summaries_redacted": redacted,
    }
