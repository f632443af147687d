from __future__ import annotations

import logging

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from governance.models import Memory, Outbox, OutboxDelivery, ReadFence, Scope
from governance.runtime.degraded import publish
from governance.runtime.replica import FENCE_ALL_WORKSPACES, STAMP_FENCE_SQL

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

# Topics that may take something out of force or out of a caller's reach (a forget, a supersede, a retire,
# any status change, an archive, a grant or scope change): a replica must have replayed them before it
# answers a read of their workspace (read-your-forgets, governance/runtime/replica.py). A new memory is
# not among them: a replica that has not replayed it yet serves what the primary served a moment ago.
FENCED_TOPICS = frozenset(
    {"memory.status", "memory.forgotten", "memory.archived", "grant.changed", "scope.changed"}
)


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
    if topic in FENCED_TOPICS:
        read_fence_raise(workspace_id=_workspace_of(memory, payload))
    # Queued when committed (below): the reconciler leaves the rows to that message for a while.
    queued_at = timezone.now()
    OutboxDelivery.objects.bulk_create(
        OutboxDelivery(outbox=row, store=store, queued_at=queued_at) for store in stores
    )
    transaction.on_commit(lambda: _dispatch(row.pk, stores))
    return row


def read_fence_raise(*, workspace_id: int) -> None:
    """Read-your-forgets: a replica may answer a read of this workspace only once it has replayed this
    transaction. The LSN that guarantees it is the commit record's, which no statement inside the
    transaction can know (pg_current_wal_insert_lsn() here is before the commit record: a replica at that
    position has not replayed the commit and still shows the old rows). So: inside the transaction the
    fence becomes NULL ("the primary's position now", always safe, visible exactly when the change is);
    right after the commit it is stamped with the primary's WAL flush position, which a committed
    transaction has passed (STAMP_FENCE_SQL)."""
    ReadFence.objects.bulk_create(
        [ReadFence(workspace_id=workspace_id, commit_lsn=None, changed_at=timezone.now())],
        update_conflicts=True,
        unique_fields=["workspace_id"],
        update_fields=["commit_lsn", "changed_at"],
    )
    transaction.on_commit(lambda: _stamp_fence(workspace_id))


def _stamp_fence(workspace_id: int) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute(STAMP_FENCE_SQL, [workspace_id])
    except DatabaseError:  # the fence stays NULL: readers wait for the primary's position then (safe)
        logger.warning("could not stamp the read fence of workspace %s", workspace_id, exc_info=True)


def _workspace_of(memory: Memory | None, payload: dict) -> int:
    if memory is not None:
        return memory.scope.workspace_id
    if payload.get("scope_id") is not None:
        return Scope.objects.values_list("workspace_id", flat=True).get(pk=payload["scope_id"])
    return FENCE_ALL_WORKSPACES  # a team membership: its grants may lie in any workspace


def _dispatch(outbox_id: int, stores: tuple[str, ...]) -> None:
    from governance.propagation.tasks import dispatch_outbox

    # Broker down: the change is committed and the request answers; the reconciler dispatches it later
    # (its deliveries lose their queued_at, so it does not wait RECONCILE_REQUEUE_AFTER_SECONDS first).
    if not publish(lambda: dispatch_outbox(outbox_id, stores), what=f"propagation of outbox {outbox_id}"):
        OutboxDelivery.objects.filter(outbox_id=outbox_id).update(queued_at=None)
