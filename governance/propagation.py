"""Carrying a change to every derived store. One handler per store; each is idempotent, so running a
delivery twice (a retry, the reconciler, two workers) is harmless."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from django.core.cache import cache
from django.db.models import F, Q
from django.utils import timezone

from governance.embedding import get_embedder
from governance.models import Memory, Outbox, OutboxDelivery, Status

logger = logging.getLogger(__name__)

LEASE = timedelta(seconds=120)
EMBED_STATUSES = (Status.ACTIVE, Status.CANDIDATE, Status.PROPOSED, Status.SUPERSEDED, Status.RETIRED)

Handler = Callable[[Outbox], None]
HANDLERS: dict[str, Handler] = {}


def handler(store: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[store] = fn
        return fn

    return register


def _ids(outbox: Outbox) -> list[int]:
    ids = list(outbox.payload.get("memory_ids") or [])
    if outbox.memory_id and outbox.memory_id not in ids:
        ids.append(outbox.memory_id)
    return ids


def embed_memories(memory_ids: list[int], *, batch_size: int = 64) -> int:
    """Embed the memories whose stored embedding is missing or was made from another text or model.
    Each row is written only if its text is still the one embedded (a purge in between wins)."""
    embedder = get_embedder()
    todo = (
        Memory.objects.filter(pk__in=memory_ids, purged_at__isnull=True, status__in=EMBED_STATUSES)
        .filter(Q(embedding__isnull=True) | ~Q(embedding_hash=F("content_hash")) | ~Q(embedding_model=embedder.name))
        .order_by("pk")
        .values_list("pk", "text", "content_hash")
    )
    rows = list(todo)
    done = 0
    for start in range(0, len(rows), batch_size):
        chunk = rows[start : start + batch_size]
        vectors = embedder.embed_memories([text for _, text, _ in chunk])
        for (pk, _, digest), vector in zip(chunk, vectors, strict=True):
            done += Memory.objects.filter(pk=pk, content_hash=digest, purged_at__isnull=True).update(
                embedding=vector, embedding_hash=digest, embedding_model=embedder.name
            )
    return done


@handler("embedding")
def _embedding_store(outbox: Outbox) -> None:
    ids = _ids(outbox)
    # Purged memories lose their vector (the service already cleared it; this repairs any racing write).
    Memory.objects.filter(pk__in=ids, purged_at__isnull=False).exclude(embedding=None).update(
        embedding=None, embedding_hash=""
    )
    embed_memories(ids)


@handler("keyword")
def _keyword_store(outbox: Outbox) -> None:
    Memory.objects.filter(pk__in=_ids(outbox), purged_at__isnull=False).exclude(lexical="").update(lexical="")


def cache_generation_key(workspace_id: int) -> str:
    return f"gen:ws:{workspace_id}"


def bump_cache_generation(workspace_id: int) -> None:
    """Cached recalls and packets carry their workspace's generation in their key; bumping it drops them all."""
    key = cache_generation_key(workspace_id)
    if not cache.add(key, 1, timeout=None):
        cache.incr(key)


@handler("cache")
def _cache_store(outbox: Outbox) -> None:
    from governance.models import Scope

    scope_ids = set(Memory.objects.filter(pk__in=_ids(outbox)).values_list("scope_id", flat=True))
    if outbox.payload.get("scope_id"):
        scope_ids.add(outbox.payload["scope_id"])
    for workspace_id in set(Scope.objects.filter(pk__in=scope_ids).values_list("workspace_id", flat=True)):
        bump_cache_generation(workspace_id)


def claim(delivery_id: int) -> bool:
    """Take a delivery for one lease: a conditional UPDATE whose row count says whether we got it."""
    now = timezone.now()
    return bool(
        OutboxDelivery.objects.filter(pk=delivery_id)
        .exclude(state=OutboxDelivery.State.DONE)
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .update(claimed_until=now + LEASE, attempts=F("attempts") + 1)
    )


def run_delivery(delivery: OutboxDelivery) -> bool:
    if not claim(delivery.pk):
        return False
    try:
        HANDLERS[delivery.store](delivery.outbox)
    except Exception as exc:
        OutboxDelivery.objects.filter(pk=delivery.pk).exclude(state=OutboxDelivery.State.DONE).update(
            state=OutboxDelivery.State.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000], claimed_until=None
        )
        raise
    OutboxDelivery.objects.filter(pk=delivery.pk).exclude(state=OutboxDelivery.State.DONE).update(
        state=OutboxDelivery.State.DONE, done_at=timezone.now(), error="", claimed_until=None
    )
    return True


def finish_outbox(outbox_id: int) -> None:
    if not OutboxDelivery.objects.filter(outbox_id=outbox_id).exclude(state=OutboxDelivery.State.DONE).exists():
        Outbox.objects.filter(pk=outbox_id, state=Outbox.State.PENDING).update(
            state=Outbox.State.DONE, done_at=timezone.now()
        )
