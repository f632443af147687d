"""The Celery tasks that carry changes to the derived stores, and the reconciler's task.

Their names stay `governance.tasks.<name>` (where they lived before this package): beat's schedule,
the queue routes and messages already waiting in Redis from an older version all use those names, and
a worker of this version still runs them. Queues (memoryui/settings/base.py, CELERY_TASK_ROUTES):
`propagation` for deliveries and the reconciler, `embedding` for everything that runs the embedder."""

from __future__ import annotations

from celery import shared_task

from governance.models import Outbox, OutboxDelivery
from governance.propagation import reconcile as reconciler
from governance.propagation.embedding import embed_memories as embed_rows
from governance.propagation.stores import finish_outbox, run_delivery
from governance.propagation.webhooks import deliver_webhook  # noqa: F401  (defined beside its work; importable here)
from governance.runtime.retries import RETRY

EMBEDDING_STORE = "embedding"


@shared_task(name="governance.tasks.propagate_outbox", **RETRY)
def propagate_outbox(outbox_id: int) -> dict:
    """Apply one outbox row to each derived store that has not applied it yet, except the embedding
    store: that one is the `embedding` queue's work (embed_outbox), so a backlog of embeddings never
    holds up a forget, a cache bump or a summary."""
    outbox = Outbox.objects.filter(pk=outbox_id).first()
    if outbox is None or outbox.state == Outbox.State.DONE:
        return {"outbox": outbox_id, "skipped": True}
    applied = []
    pending = outbox.deliveries.select_related("outbox").exclude(state=OutboxDelivery.State.DONE)
    for delivery in pending.exclude(store=EMBEDDING_STORE):
        if run_delivery(delivery):
            applied.append(delivery.store)
    finish_outbox(outbox_id)
    return {"outbox": outbox_id, "applied": applied}


@shared_task(name="governance.tasks.embed_outbox", **RETRY)
def embed_outbox(outbox_id: int) -> dict:
    """The embedding delivery of one outbox row (routed to the `embedding` queue)."""
    delivery = (
        OutboxDelivery.objects.select_related("outbox")
        .filter(outbox_id=outbox_id, store=EMBEDDING_STORE)
        .exclude(state=OutboxDelivery.State.DONE)
        .first()
    )
    if delivery is None:
        return {"outbox": outbox_id, "skipped": True}
    applied = run_delivery(delivery)
    finish_outbox(outbox_id)
    return {"outbox": outbox_id, "applied": [EMBEDDING_STORE] if applied else []}


def dispatch_outbox(outbox_id: int, stores) -> None:
    """Queue the work of one outbox row: the embedding on its own queue, every other store on the
    propagation queue."""
    if any(store != EMBEDDING_STORE for store in stores):
        propagate_outbox.delay(outbox_id)
    if EMBEDDING_STORE in stores:
        embed_outbox.delay(outbox_id)


@shared_task(name="governance.tasks.embed_memories", **RETRY)
def embed_memories(memory_ids: list[int]) -> int:
    """Embed these memories (routed to the `embedding` queue); rows another caller holds are skipped."""
    return embed_rows(memory_ids)


@shared_task(name="governance.tasks.reconcile", **RETRY)
def reconcile(*, stale_after_seconds: int | None = None, limit: int = 500) -> dict:
    """Finish what a lost message, a dead worker or a Redis restart left undone, and repair drift
    (governance/propagation/reconcile.py)."""
    return reconciler.reconcile(
        dispatch=dispatch_outbox,
        embed=embed_memories.delay,
        stale_after_seconds=stale_after_seconds,
        limit=limit,
    )
