from __future__ import annotations

import logging

from django.db import transaction

from governance.models import Memory, Outbox, OutboxDelivery

logger = logging.getLogger(__name__)

# Which derived stores each topic must reach. Creation needs an embedding and fresh caches; a status
# change touches caches, summaries and the hot set; a forget touches every copy of the data.
TOPIC_STORES: dict[str, tuple[str, ...]] = {
    "memory.created": ("embedding", "cache", "summaries"),
    "memory.status": ("cache", "summaries"),
    "memory.forgotten": ("embedding", "keyword", "cache", "summaries", "turns"),
    "memory.archived": ("cache",),
    # A contradiction proposed or dismissed (governance/services/dispute.py): packets mark the pair.
    "memory.disputed": ("cache", "summaries"),
    "memory.reembed": ("embedding",),
    "grant.changed": ("cache",),
    # Renamed, moved, archived or reconfigured: cached recalls and the subtree's summaries are stale.
    "scope.changed": ("cache", "summaries"),
}


def outbox_emit(*, topic: str, memory: Memory | None = None, payload: dict | None = None) -> Outbox:
    """Write the outbox row and its per-store deliveries; dispatch after commit (the reconciler
    re-dispatches anything a lost message or dead worker left pending)."""
    assert transaction.get_connection().in_atomic_block, "outbox rows belong to the change's transaction"
    from governance.propagation.webhooks import webhook_events

    payload = dict(payload or {})
    stores = TOPIC_STORES[topic]
    # Outbound events are one more store, for the rows a subscription somewhere takes (docs/webhooks.md).
    events = webhook_events(topic, memory, payload)
    if events:
        payload["webhook_events"] = events
        stores = (*stores, "webhooks")
    row = Outbox.objects.create(topic=topic, memory=memory, payload=payload)
    OutboxDelivery.objects.bulk_create(OutboxDelivery(outbox=row, store=store) for store in stores)
    transaction.on_commit(lambda: _dispatch(row.pk, stores))
    return row


def _dispatch(outbox_id: int, stores: tuple[str, ...]) -> None:
    from governance.propagation.tasks import dispatch_outbox

    try:
        dispatch_outbox(outbox_id, stores)
    except Exception:  # broker down: the change is committed, the reconciler will dispatch it later
        logger.warning(
            "could not queue propagation of outbox %s; the reconciler will", outbox_id, exc_info=True
        )
