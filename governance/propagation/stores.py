"""Carrying a change to every derived store. One handler per store; each is idempotent, so running a
delivery twice (a retry, the reconciler, two workers) is harmless."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db.models import F, Q
from django.utils import timezone

from governance.models import Memory, Outbox, OutboxDelivery
from governance.propagation.embedding import drop_purged_vectors, embed_memories, turns_after, waiting_rows
from governance.propagation.turns import redact_turns

logger = logging.getLogger(__name__)

LEASE = timedelta(seconds=120)  # default; settings.OUTBOX_LEASE_SECONDS overrides (tests use a short one)


def lease() -> timedelta:
    from django.conf import settings

    seconds = getattr(settings, "OUTBOX_LEASE_SECONDS", None)
    return timedelta(seconds=seconds) if seconds else LEASE


Handler = Callable[[Outbox], None]
HANDLERS: dict[str, Handler] = {}


def handler(store: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[store] = fn
        return fn

    return register


# A store whose update is a service registers its handler from the service's module (the summaries: their
# rebuild is audited, governance.services.summary), and the reconciler's repair of summaries that still cite
# a purged memory goes through the same registration. governance.apps imports those modules at start-up.
REPAIRS: dict[str, Callable[..., int]] = {}


def repair(name: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    def register(fn: Callable[..., int]) -> Callable[..., int]:
        REPAIRS[name] = fn
        return fn

    return register


# Work that needs the vectors just written (the proposal of unkeyed contradictions, which finds its pairs by
# vector: governance/recall/disputes.py) registers here and runs after every embedding delivery, with
# the ids the delivery embedded. Registered by a module governance.apps imports at start-up.
AFTER_EMBEDDING: list[Callable[[list[int]], object]] = []


def after_embedding(fn: Callable[[list[int]], object]) -> Callable[[list[int]], object]:
    AFTER_EMBEDDING.append(fn)
    return fn


def run_after_embedding(memory_ids: list[int]) -> None:
    """What follows an embedding (AFTER_EMBEDDING), for `memory_ids`: the embedding store's handler calls
    it, and so does any caller that embeds synchronously (the evaluation loader, imports)."""
    for hook in AFTER_EMBEDDING:
        hook(memory_ids)


def outbox_memory_ids(outbox: Outbox) -> list[int]:
    ids = list(outbox.payload.get("memory_ids") or [])
    # A forget's rewritten memories (services/memory/words.py): their text changed, every store follows.
    ids += [pk for pk in outbox.payload.get("rewritten_ids") or [] if pk not in ids]
    if outbox.memory_id and outbox.memory_id not in ids:
        ids.append(outbox.memory_id)
    return ids


def renew_lease(outbox_id: int, store: str) -> None:
    """Extend a delivery's claim while its work goes on. A batch of 1,000 embeddings outlasts the lease on
    a busy machine; without renewal the reconciler would hand the same delivery to a second worker and
    both would embed the same rows."""
    OutboxDelivery.objects.filter(outbox_id=outbox_id, store=store).exclude(
        state=OutboxDelivery.State.DONE
    ).update(claimed_until=timezone.now() + lease())


@handler("embedding")
def _embedding_store(outbox: Outbox) -> None:
    ids = outbox_memory_ids(outbox)
    # Purged memories lose their vector and passages (the service already cleared them; this repairs any
    # racing write).
    drop_purged_vectors(ids)
    if outbox.topic == "memory.forgotten":
        # The turn after a forgotten one was embedded with it as context (turn_context): embed it again,
        # now with the turn before that (its stored text and keyword terms never held the forgotten one).
        after = turns_after(ids)
        Memory.objects.filter(pk__in=after).exclude(embedding_hash="").update(embedding_hash="")
        ids += [pk for pk in after if pk not in ids]
    # Fill the batch with other rows waiting for a vector (their own deliveries then find nothing to do).
    ids += waiting_rows(exclude=ids, limit=settings.EMBEDDING_BATCH_SIZE - len(ids))
    embed_memories(ids, heartbeat=lambda: renew_lease(outbox.pk, "embedding"))
    run_after_embedding(ids)


@handler("keyword")
def _keyword_store(outbox: Outbox) -> None:
    Memory.objects.filter(pk__in=outbox_memory_ids(outbox), purged_at__isnull=False).exclude(
        lexical=""
    ).update(lexical="")


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

    scope_ids = set(
        Memory.objects.filter(pk__in=outbox_memory_ids(outbox)).values_list("scope_id", flat=True)
    )
    if outbox.payload.get("scope_id"):
        scope_ids.add(outbox.payload["scope_id"])
    workspace_ids = set(Scope.objects.filter(pk__in=scope_ids).values_list("workspace_id", flat=True))
    for workspace_id in workspace_ids:
        bump_cache_generation(workspace_id)
    if outbox.topic in ("memory.forgotten", "memory.status", "memory.archived"):
        from governance.models import RECALLABLE

        gone = list(
            Memory.objects.filter(pk__in=outbox_memory_ids(outbox))
            .exclude(status__in=RECALLABLE)
            .values_list("pk", flat=True)
        )
        gone += list(
            Memory.objects.filter(
                pk__in=outbox_memory_ids(outbox), meta__archived_at__isnull=False
            ).values_list("pk", flat=True)
        )
        hot_set_remove(gone)
    if outbox.topic == "memory.forgotten" and outbox.payload.get("mode") == "hard":
        # A bumped generation makes old entries unreachable, but they would still hold the text until
        # they expire: a hard forget deletes the workspace's cached recalls and packets outright.
        for workspace_id in workspace_ids:
            cache_purge_workspace(workspace_id)


# --- The Redis hot set and cached packets ---------------------------------------------------------------
# Key layout (inside the Django cache's prefix): `hot:<scope_id>` is a sorted set of memory ids (the hot
# index of a scope); `ws:<workspace_id>:g<generation>:<kind>:<digest>` holds a cached recall or packet.
# Recall code builds keys with these helpers so governance can find and drop them.


def hot_set_key(scope_id: int) -> str:
    return f"hot:{scope_id}"


def workspace_cache_key(workspace_id: int, kind: str, digest: str) -> str:
    generation = cache.get(cache_generation_key(workspace_id)) or 0
    return f"ws:{workspace_id}:g{generation}:{kind}:{digest}"


def redis_client():
    return cache._cache.get_client(write=True)


def scan_keys(pattern: str):
    return redis_client().scan_iter(match=cache.make_key(pattern), count=500)


def hot_set_remove(memory_ids: list[int]) -> int:
    """Take memories out of every hot set (sets are per scope, but a memory may be hot in several)."""
    if not memory_ids:
        return 0
    client = redis_client()
    removed = 0
    for key in scan_keys("hot:*"):
        if client.type(key) == b"zset":
            removed += client.zrem(key, *[str(i) for i in memory_ids])
    return removed


def cache_purge_workspace(workspace_id: int) -> int:
    client = redis_client()
    keys = list(scan_keys(f"ws:{workspace_id}:*"))
    for start in range(0, len(keys), 500):
        client.delete(*keys[start : start + 500])
    return len(keys)


# --- Stored turns (the redaction itself lives in propagation/turns.py) ---------------------------------
# and the stored answers of keyed API writes (services/idempotency.py), which may quote a memory too.
@handler("turns")
def _turns_store(outbox: Outbox) -> None:
    if outbox.topic == "memory.forgotten" and outbox.payload.get("mode") == "hard":
        redact_turns(outbox_memory_ids(outbox))
        answers_withdraw(outbox_memory_ids(outbox))


def answers_withdraw(memory_ids: list[int]) -> int:
    """A hard forget empties every stored answer of a keyed write that held the forgotten text (a repeat
    then answers 410: governance/services/idempotency.py)."""
    from governance.models import IdempotentRequest

    if not memory_ids:
        return 0
    return IdempotentRequest.objects.filter(memory_ids__overlap=list(memory_ids), withdrawn_at=None).update(
        body=b"", withdrawn_at=timezone.now()
    )


def claim(delivery_id: int) -> bool:
    """Take a delivery for one lease: a conditional UPDATE whose row count says whether we got it."""
    now = timezone.now()
    return bool(
        OutboxDelivery.objects.filter(pk=delivery_id)
        .exclude(state=OutboxDelivery.State.DONE)
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        # Its message is taken: from here the lease, not `queued_at`, keeps the reconciler off it.
        .update(claimed_until=now + lease(), attempts=F("attempts") + 1, queued_at=None)
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
    if (
        not OutboxDelivery.objects.filter(outbox_id=outbox_id)
        .exclude(state=OutboxDelivery.State.DONE)
        .exists()
    ):
        Outbox.objects.filter(pk=outbox_id, state=Outbox.State.PENDING).update(
            state=Outbox.State.DONE, done_at=timezone.now()
        )
