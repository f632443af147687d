"""Carrying a change to every derived store. One handler per store; each is idempotent, so running a
delivery twice (a retry, the reconciler, two workers) is harmless."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Length
from django.utils import timezone

from governance.embedding import get_embedder
from governance.lexical import searchable_text
from governance.models import Memory, Outbox, OutboxDelivery, Status

logger = logging.getLogger(__name__)

LEASE = timedelta(seconds=120)  # default; settings.OUTBOX_LEASE_SECONDS overrides (tests use a short one)


def lease() -> timedelta:
    from django.conf import settings

    seconds = getattr(settings, "OUTBOX_LEASE_SECONDS", None)
    return timedelta(seconds=seconds) if seconds else LEASE


def claim_lease() -> timedelta:
    """How long a claim on rows to embed lasts. Longer than a delivery's lease: it is renewed only between
    batches, and one batch of long texts on a busy CPU can take minutes; a dead claimer's rows wait that
    long for the reconciler, a live one's are never taken from it mid-batch."""
    from django.conf import settings

    return timedelta(seconds=settings.EMBEDDING_CLAIM_SECONDS)


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


def _embedding_input(row: dict) -> str:
    """The text the embedder gets for one memory row (of EMBED_FIELDS): who said it and what, by the same
    rule as the keyword column (lexical.searchable_text), so a question naming a person finds that
    person's turns."""
    return searchable_text(row["text"], row["speaker"])


EMBED_FIELDS = ("pk", "text", "content_hash", "speaker")


def _needs_vector(model_name: str) -> Q:
    return Q(embedding__isnull=True) | ~Q(embedding_hash=F("content_hash")) | ~Q(embedding_model=model_name)


def _unclaimed(now) -> Q:
    return Q(embedding_claimed_until__isnull=True) | Q(embedding_claimed_until__lt=now)


def claim_rows(memory_ids: list[int], *, model_name: str) -> list[int]:
    """Take the embedding of these rows for one lease: lock the ones that still need a vector and that no
    one else holds (SKIP LOCKED: a concurrent claimer's rows are simply not ours), then mark them. The
    ids returned are this caller's to embed; every other caller gets none of them until the lease ends."""
    if not memory_ids:
        return []
    now = timezone.now()
    with transaction.atomic():
        ids = list(
            Memory.objects.filter(pk__in=memory_ids, purged_at__isnull=True, status__in=EMBED_STATUSES)
            .filter(_needs_vector(model_name)).filter(_unclaimed(now))
            .select_for_update(skip_locked=True).order_by("pk").values_list("pk", flat=True)
        )
        if ids:
            Memory.objects.filter(pk__in=ids).update(embedding_claimed_until=now + claim_lease())
    return ids


def _write_vectors(rows: list[dict], vectors, model_name: str) -> int:
    """Store a batch's vectors in one statement (not one UPDATE per row: a round trip each), each only if
    the row still has the text that was embedded and is not purged; the row's claim ends with it."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE governance_memory AS m SET embedding = v.vec::vector, embedding_hash = v.digest,"
            " embedding_model = %s, embedding_claimed_until = NULL"
            " FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, digest, vec)"
            " WHERE m.id = v.id AND m.content_hash = v.digest AND m.purged_at IS NULL",
            [model_name, [row["pk"] for row in rows], [row["content_hash"] for row in rows],
             ["[" + ",".join(map(str, vector.tolist())) + "]" for vector in vectors]],
        )
        return cursor.rowcount


def hold_rows(memory_ids: list[int]) -> None:
    """Claim the embedding of rows the caller's own open transaction has just written (no one else can
    see them yet, so no condition is needed); the caller then embeds them with `claimed=True`."""
    Memory.objects.filter(pk__in=memory_ids).update(embedding_claimed_until=timezone.now() + claim_lease())


def embedding_batches(rows: list[tuple[int, int]], size: int, max_chars: int) -> list[list[int]]:
    """Split (id, text length) rows into the embedder's batches: at most `size` texts and, past the first
    text, at most `max_chars` characters. The engine's throughput falls steeply with small batches (8
    short texts: a third of 64's) and a batch of long texts must stay short enough to renew claims."""
    batches: list[list[int]] = []
    current: list[int] = []
    chars = 0
    for pk, length in rows:
        if current and (len(current) >= size or chars + length > max_chars):
            batches.append(current)
            current, chars = [], 0
        current.append(pk)
        chars += length or 0
    if current:
        batches.append(current)
    return batches


def embed_memories(
    memory_ids: list[int], *, batch_size: int | None = None, heartbeat: Callable[[], None] | None = None,
    claimed: bool = False,
) -> int:
    """Embed the memories whose stored embedding is missing or was made from another text or model, each
    exactly once however many callers ask at the same time: a batch is claimed (claim_rows) before the
    embedder sees it, and rows someone else holds are skipped. `claimed=True` says the caller already
    holds the claim on these rows (the importer takes it in the transaction that writes them). Each row
    is written only if its text is still the one embedded (a purge in between wins). `heartbeat` is
    called after each batch, so a long run can keep its claim on its outbox delivery."""
    from django.conf import settings

    batch_size = batch_size or settings.EMBEDDING_BATCH_SIZE
    embedder = get_embedder()
    todo = list(
        Memory.objects.filter(pk__in=memory_ids, purged_at__isnull=True, status__in=EMBED_STATUSES)
        .filter(_needs_vector(embedder.name)).order_by("pk").values_list("pk", Length("text"))
    )
    done = 0
    for chunk_ids in embedding_batches(todo, batch_size, settings.EMBEDDING_BATCH_CHARS):
        if claimed:  # ours already; renew the lease so a long import keeps every row it has not reached
            Memory.objects.filter(pk__in=[pk for pk, _ in todo], embedding_claimed_until__isnull=False).update(
                embedding_claimed_until=timezone.now() + claim_lease())
        else:
            chunk_ids = claim_rows(chunk_ids, model_name=embedder.name)
        rows = list(Memory.objects.filter(pk__in=chunk_ids, purged_at__isnull=True).order_by("pk")
                    .values(*EMBED_FIELDS))
        if rows:
            vectors = embedder.embed_memories([_embedding_input(row) for row in rows])
            done += _write_vectors(rows, vectors, embedder.name)
        # Rows not written (purged or changed meanwhile) give their claim back.
        Memory.objects.filter(pk__in=chunk_ids, embedding_claimed_until__isnull=False).update(
            embedding_claimed_until=None)
        if heartbeat is not None:
            heartbeat()
    return done


def renew_lease(outbox_id: int, store: str) -> None:
    """Extend a delivery's claim while its work goes on. A batch of 1,000 embeddings outlasts the lease on
    a busy machine; without renewal the reconciler would hand the same delivery to a second worker and
    both would embed the same rows."""
    OutboxDelivery.objects.filter(outbox_id=outbox_id, store=store).exclude(
        state=OutboxDelivery.State.DONE
    ).update(claimed_until=timezone.now() + lease())


@handler("embedding")
def _embedding_store(outbox: Outbox) -> None:
    ids = _ids(outbox)
    # Purged memories lose their vector (the service already cleared it; this repairs any racing write).
    Memory.objects.filter(pk__in=ids, purged_at__isnull=False).exclude(embedding=None).update(
        embedding=None, embedding_hash=""
    )
    embed_memories(ids, heartbeat=lambda: renew_lease(outbox.pk, "embedding"))


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
    workspace_ids = set(Scope.objects.filter(pk__in=scope_ids).values_list("workspace_id", flat=True))
    for workspace_id in workspace_ids:
        bump_cache_generation(workspace_id)
    if outbox.topic in ("memory.forgotten", "memory.status", "memory.archived"):
        from governance.models import RECALLABLE

        gone = list(Memory.objects.filter(pk__in=_ids(outbox)).exclude(status__in=RECALLABLE).values_list("pk", flat=True))
        gone += list(
            Memory.objects.filter(pk__in=_ids(outbox), meta__archived_at__isnull=False).values_list("pk", flat=True)
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


def _redis():
    return cache._cache.get_client(write=True)


def _scan(pattern: str):
    return _redis().scan_iter(match=cache.make_key(pattern), count=500)


def hot_set_remove(memory_ids: list[int]) -> int:
    """Take memories out of every hot set (sets are per scope, but a memory may be hot in several)."""
    if not memory_ids:
        return 0
    client = _redis()
    removed = 0
    for key in _scan("hot:*"):
        if client.type(key) == b"zset":
            removed += client.zrem(key, *[str(i) for i in memory_ids])
    return removed


def cache_purge_workspace(workspace_id: int) -> int:
    client = _redis()
    keys = list(_scan(f"ws:{workspace_id}:*"))
    for start in range(0, len(keys), 500):
        client.delete(*keys[start : start + 500])
    return len(keys)


@handler("summaries")
def _summaries_store(outbox: Outbox) -> None:
    from governance.services.summary import summaries_mark_stale, summaries_redact

    ids = _ids(outbox)
    if not ids:
        return
    if outbox.topic == "memory.forgotten":
        # Rebuilt now, not marked stale: a forgotten source must not wait for a reader. A summary that did
        # not cite it cannot contain it, and its other lines are unchanged.
        summaries_redact(memory_ids=ids)
        return
    summaries_mark_stale(memory_ids=ids, reason=outbox.topic)


# --- Stored turns (the redaction itself lives in propagation_turns) ----------------------------------
from governance.propagation_turns import (  # noqa: E402  (re-exported: tasks and tests use them from here)
    REDACTED as REDACTED,
)
from governance.propagation_turns import Redactor as Redactor  # noqa: E402
from governance.propagation_turns import redact_json as redact_json  # noqa: E402
from governance.propagation_turns import redact_turns  # noqa: E402
from governance.propagation_turns import turns_still_holding_purged as turns_still_holding_purged  # noqa: E402


@handler("turns")
def _turns_store(outbox: Outbox) -> None:
    if outbox.topic == "memory.forgotten" and outbox.payload.get("mode") == "hard":
        redact_turns(_ids(outbox))


def claim(delivery_id: int) -> bool:
    """Take a delivery for one lease: a conditional UPDATE whose row count says whether we got it."""
    now = timezone.now()
    return bool(
        OutboxDelivery.objects.filter(pk=delivery_id)
        .exclude(state=OutboxDelivery.State.DONE)
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .update(claimed_until=now + lease(), attempts=F("attempts") + 1)
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
