"""The embedding store: which memories need a vector (one definition), claiming rows so each text is
embedded once however many callers ask, and writing the vectors."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Length
from django.utils import timezone

from governance.embedding import get_embedder
from governance.models import Memory, Passage, SourceKind, Status
from governance.models.lexical import in_context, passage_texts


def claim_lease() -> timedelta:
    """How long a claim on rows to embed lasts. Longer than a delivery's lease: it is renewed only between
    batches, and one batch of long texts on a busy CPU can take minutes; a dead claimer's rows wait that
    long for the reconciler, a live one's are never taken from it mid-batch."""
    from django.conf import settings

    return timedelta(seconds=settings.EMBEDDING_CLAIM_SECONDS)


EMBED_STATUSES = (Status.ACTIVE, Status.CANDIDATE, Status.PROPOSED, Status.SUPERSEDED, Status.RETIRED)


def embedding_input(row: dict, context: dict[int, tuple[str, str]]) -> str:
    """The text the embedder gets for one memory row (of EMBED_FIELDS): who said it and what, by the same
    rule as the keyword column (lexical.searchable_text), so a question naming a person finds that
    person's turns; a conversation turn with the turn before it above (lexical.in_context)."""
    before, before_speaker = context.get(row["pk"], ("", ""))
    return in_context(row["text"], row["speaker"], before=before, before_speaker=before_speaker)


def turn_context(rows: list[dict]) -> dict[int, tuple[str, str]]:
    """For each conversation turn among `rows` (an episode of a session), the (text, speaker) of the turn
    before it in its scope and session, read in one statement (index memory_scope_session); "" when it is
    the session's first. Same scope, so no one who may see the turn's vector match may not see the turn
    before. A forgotten turn is never context: it is skipped, and forgetting one embeds the turn after it
    again (the embedding store's handler, stores.py). The context is read when the turn is embedded: a
    turn that arrives later with an earlier time does not change its successor's vector until that one
    is embedded again (`manage.py reembed --all`)."""
    turns = [row["pk"] for row in rows if row["kind"] == "episodic" and row["session"]]
    if not turns:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.id, coalesce(p.text, ''), coalesce(p.speaker, '') FROM governance_memory m"
            " LEFT JOIN LATERAL (SELECT b.text, b.speaker FROM governance_memory b"
            "  WHERE b.scope_id = m.scope_id AND b.session = m.session AND b.kind = 'episodic'"
            "   AND (b.occurred_at, b.id) < (m.occurred_at, m.id) AND b.purged_at IS NULL"
            "   AND b.status <> 'forgotten'"
            "  ORDER BY b.occurred_at DESC, b.id DESC LIMIT 1) p ON true"
            " WHERE m.id = ANY(%s) AND m.occurred_at IS NOT NULL",
            [turns],
        )
        return {int(pk): (text, speaker) for pk, text, speaker in cursor.fetchall()}


def turns_after(memory_ids: list[int]) -> list[int]:
    """The turn right after each of these conversation turns in its scope and session (forgotten ones
    skipped, as turn_context skips them): the one whose vector holds it as context. When a turn is
    forgotten, that one is embedded again."""
    if not memory_ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT n.id FROM governance_memory m CROSS JOIN LATERAL (SELECT a.id FROM governance_memory a"
            "  WHERE a.scope_id = m.scope_id AND a.session = m.session AND a.kind = 'episodic'"
            "   AND (a.occurred_at, a.id) > (m.occurred_at, m.id) AND a.purged_at IS NULL"
            "   AND a.status <> 'forgotten'"
            "  ORDER BY a.occurred_at, a.id LIMIT 1) n"
            " WHERE m.id = ANY(%s) AND m.kind = 'episodic' AND m.session <> '' AND m.occurred_at IS NOT NULL",
            [list(memory_ids)],
        )
        return sorted({int(pk) for (pk,) in cursor.fetchall()})


EMBED_FIELDS = ("pk", "text", "content_hash", "speaker", "kind", "session", "occurred_at", "source_kind")


def passage_inputs(row: dict) -> list[str]:
    """The sentences a memory is also embedded as (lexical.passage_texts): for what a person said only.
    An assistant's reply or a tool's output is usually long and general; its sentences would multiply
    the embedder's work (LongMemEval: 52 M characters of assistant turns against 7.4 M of user turns)
    for text the questions are rarely about."""
    if row.get("source_kind") != SourceKind.USER:
        return []
    return passage_texts(row["text"], row["speaker"])


def embed_batch(embedder, rows: list[dict], context: dict[int, tuple[str, str]]):
    """The vectors of a batch's rows (one per row, in order), and each row's passages as row["passages"]
    (a list of vectors, empty for most rows): two calls of the embedder, so the short sentences are not
    batched with long turns (the engine pads a batch to its longest text)."""
    if not rows:
        return []
    vectors = embedder.embed_memories([embedding_input(row, context) for row in rows])
    pieces = [(row, text) for row in rows for text in passage_inputs(row)]
    for row in rows:
        row["passages"] = []
    if pieces:
        for (row, _), vector in zip(
            pieces, embedder.embed_memories([text for _, text in pieces]), strict=True
        ):
            row["passages"].append(vector)
    return vectors


def embeddable() -> QuerySet[Memory]:
    """Memories that should hold a vector: not purged, in a status recall can still use or show, not small
    talk (a turn with nothing to remember, governance/services/small_talk.py)."""
    return _not_small_talk(Memory.objects.filter(purged_at__isnull=True, status__in=EMBED_STATUSES))


def _not_small_talk(queryset: QuerySet[Memory]) -> QuerySet[Memory]:
    return queryset.exclude(meta__contains={"small_talk": True})


def needs_vector(model_name: str | None) -> Q:
    """The one definition of "needs embedding", as a filter: no vector, a vector of an older text, or
    (given `model_name`) a vector from another model. Without a model name, a vector from any model counts
    as current: that is the reconciler's view, which repairs drift of text and leaves a model switch to
    `manage.py reembed`."""
    condition = Q(embedding__isnull=True) | ~Q(embedding_hash=F("content_hash"))
    if model_name is not None:
        condition |= ~Q(embedding_model=model_name)
    return condition


def needs_embedding(model_name: str | None, queryset: QuerySet[Memory] | None = None) -> QuerySet[Memory]:
    """Embeddable memories (of `queryset`, default all) that need a vector (needs_vector)."""
    base = (
        embeddable()
        if queryset is None
        else _not_small_talk(queryset.filter(purged_at__isnull=True, status__in=EMBED_STATUSES))
    )
    return base.filter(needs_vector(model_name))


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
            needs_embedding(model_name)
            .filter(pk__in=memory_ids)
            .filter(_unclaimed(now))
            .select_for_update(skip_locked=True)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        if ids:
            Memory.objects.filter(pk__in=ids).update(embedding_claimed_until=now + claim_lease())
    return ids


def _literal(vector) -> str:
    return "[" + ",".join(map(str, vector.tolist())) + "]"


def _write_vectors(rows: list[dict], vectors, model_name: str) -> int:
    """Store a batch's vectors in one statement (not one UPDATE per row: a round trip each), each only if
    the row still has the text that was embedded and is not purged; the row's claim ends with it. The
    passages of the rows written replace their old ones (row["passages"], embed_batch), in the same
    transaction: a row never has its new vector with another text's passages, nor loses its passages
    without its new ones."""
    passages = [
        (row["pk"], row["content_hash"], vector) for row in rows for vector in row.get("passages") or ()
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE governance_memory AS m SET embedding = v.vec::vector, embedding_hash = v.digest,"
            " embedding_model = %s, embedding_claimed_until = NULL"
            " FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, digest, vec)"
            " WHERE m.id = v.id AND m.content_hash = v.digest AND m.purged_at IS NULL"
            " RETURNING m.id",
            [
                model_name,
                [row["pk"] for row in rows],
                [row["content_hash"] for row in rows],
                [_literal(vector) for vector in vectors],
            ],
        )
        written = [pk for (pk,) in cursor.fetchall()]
        if written:
            cursor.execute("DELETE FROM governance_passage WHERE memory_id = ANY(%s)", [written])
            current = set(written)
            kept = [p for p in passages if p[0] in current]
            if kept:
                cursor.execute(
                    "INSERT INTO governance_passage (memory_id, content_hash, embedding)"
                    " SELECT v.id, v.digest, v.vec::vector FROM unnest(%s::bigint[], %s::text[], %s::text[])"
                    " AS v(id, digest, vec)",
                    [[p[0] for p in kept], [p[1] for p in kept], [_literal(p[2]) for p in kept]],
                )
        return len(written)


def drop_purged_vectors(memory_ids: list[int] | None = None) -> int:
    """Purged memories (of `memory_ids`, default all) lose their vector and their passages. The service
    that purges clears both in its own transaction (memory_forget); the embedding store's handler calls
    this for the memories of its event and the reconciler for all, to repair a write that raced the purge.
    Returns how many memories still had a vector."""
    purged = Memory.objects.filter(purged_at__isnull=False)
    if memory_ids is not None:
        purged = purged.filter(pk__in=memory_ids)
    count = purged.exclude(embedding=None).update(embedding=None, embedding_hash="")
    Passage.objects.filter(memory__in=purged).delete()
    return count


def waiting_rows(*, exclude: list[int], limit: int) -> list[int]:
    """Other memories still without a vector, oldest first, that no one holds: an embedding delivery takes
    them along to fill its batch. Under a burst of single writes every delivery would otherwise embed one
    text, and the embedder is several times slower per text on batches of one (docs/scaling.md). Walks the
    `memory_embedding_backlog` partial index, so it costs the same at 1M memories."""
    if limit <= 0:
        return []
    return list(
        embeddable()
        .filter(embedding__isnull=True)
        .filter(_unclaimed(timezone.now()))
        .exclude(pk__in=exclude)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )


def give_back(memory_ids: list[int]) -> None:
    """A batch that failed (the embedder raised, the database dropped the connection), or rows an import
    wrote and will not embed after all, give their claim back at once: otherwise the task's own retry would skip the rows as someone else's, mark the delivery
    done, and leave them without a vector until the lease ran out (EMBEDDING_CLAIM_SECONDS, 10 minutes)."""
    try:
        if not connection.in_atomic_block:
            connection.close()  # the failure may have been this very connection: use a fresh one
        Memory.objects.filter(pk__in=memory_ids, embedding_claimed_until__isnull=False).update(
            embedding_claimed_until=None
        )
    except DatabaseError:
        pass  # the database is still away: the lease runs out and the reconciler takes the rows then


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
    memory_ids: list[int],
    *,
    batch_size: int | None = None,
    heartbeat: Callable[[], None] | None = None,
    claimed: bool = False,
    store: Callable[[list[int], list[dict], object], None] | None = None,
) -> int:
    """Embed the memories whose stored embedding is missing or was made from another text or model, each
    exactly once however many callers ask at the same time: a batch is claimed (claim_rows) before the
    embedder sees it, and rows someone else holds are skipped. `claimed=True` says the caller already
    holds the claim on these rows (the importer takes it in the transaction that writes them, and renews
    what waits every third of a lease), so it is renewed here only once a third of a lease has passed
    during this call. Each row is written only if its text is still the one embedded (a purge in between
    wins). `heartbeat` is called after each batch, so a long run can keep its claim on its outbox
    delivery. `store(chunk_ids, rows, vectors)`, when given, takes over writing each batch (store_batch)
    so the caller can do it on another thread while the next batch is embedded; the count returned is
    then of the rows embedded, not yet written."""
    from django.conf import settings

    batch_size = batch_size or settings.EMBEDDING_BATCH_SIZE
    embedder = get_embedder()
    todo = list(
        needs_embedding(embedder.name)
        .filter(pk__in=memory_ids)
        .order_by("pk")
        .values_list("pk", Length("text"))
    )
    done = 0
    renewed = time.monotonic()
    for chunk_ids in embedding_batches(todo, batch_size, settings.EMBEDDING_BATCH_CHARS):
        if claimed:  # ours already; renew the lease so a long run keeps every row it has not reached
            if time.monotonic() - renewed > claim_lease().total_seconds() / 3:
                Memory.objects.filter(
                    pk__in=[pk for pk, _ in todo], embedding_claimed_until__isnull=False
                ).update(embedding_claimed_until=timezone.now() + claim_lease())
                renewed = time.monotonic()
        else:
            chunk_ids = claim_rows(chunk_ids, model_name=embedder.name)
        try:
            rows = list(
                Memory.objects.filter(pk__in=chunk_ids, purged_at__isnull=True)
                .order_by("pk")
                .values(*EMBED_FIELDS)
            )
            vectors = embed_batch(embedder, rows, turn_context(rows))
        except Exception:
            if not claimed:
                give_back(chunk_ids)
            raise
        if store is not None:
            store(chunk_ids, rows, vectors)
            done += len(rows)
        else:
            done += store_batch(chunk_ids, rows, vectors, embedder.name, give_back_on_error=not claimed)
        if heartbeat is not None:
            heartbeat()
    return done


def store_batch(
    chunk_ids: list[int], rows: list[dict], vectors, model_name: str, *, give_back_on_error: bool = True
) -> int:
    """Write one embedded batch (_write_vectors) and end the claims of its rows not written (purged or
    changed meanwhile). Returns how many rows got their vector."""
    try:
        written = _write_vectors(rows, vectors, model_name) if rows else 0
    except Exception:
        if give_back_on_error:
            give_back(chunk_ids)
        raise
    Memory.objects.filter(pk__in=chunk_ids, embedding_claimed_until__isnull=False).update(
        embedding_claimed_until=None
    )
    return written


class EmbedAhead:
    """Embeds claimed rows on a thread of its own while the caller writes the next ones, so a bulk import
    is limited by the embedder alone: the engine releases the GIL and the write is mostly the database
    server's work, so the two overlap on separate cores. A second thread writes each embedded batch
    (store_batch) while the embedder starts on the next one, so the embedder never waits for the
    database between batches. `submit` hands over ids the caller holds (hold_rows in the transaction
    that wrote them) and blocks only while `depth` batches are already waiting; `close` embeds and
    writes what is left and re-raises the first error of either thread.

    The threads have their own database connections and so see committed rows only: inside an outer
    transaction (a test's, or a caller's atomic block) the rows are invisible to them, and it embeds
    inline instead, on the caller's connection."""

    def __init__(self, *, depth: int = 2) -> None:
        import queue
        import threading

        inline = connection.in_atomic_block
        self.done = 0
        self._error: BaseException | None = None
        self._queue: queue.Queue[list[int] | None] = queue.Queue(maxsize=depth)
        self._embedded: queue.Queue[tuple | None] = queue.Queue(maxsize=depth)
        self._threads = (
            []
            if inline
            else [
                threading.Thread(target=self._embed_loop, name="embed-ahead", daemon=True),
                threading.Thread(target=self._store_loop, name="embed-store", daemon=True),
            ]
        )
        for thread in self._threads:
            thread.start()

    def _embed_loop(self) -> None:
        from django.db import connections

        try:
            while (ids := self._queue.get()) is not None:
                if self._error is None:
                    try:
                        embed_memories(ids, claimed=True, store=self._hand_over)
                        continue
                    except BaseException as exc:  # noqa: BLE001 - handed to the caller in close()
                        self._error = exc
                # After a failure: drain without embedding (submit never blocks), and give the rows'
                # claims back so the embedding queue's reconciler takes them at once, not after the lease.
                give_back(ids)
        finally:
            self._embedded.put(None)
            connections.close_all()  # this thread's own connection

    def _hand_over(self, chunk_ids: list[int], rows: list[dict], vectors) -> None:
        self._embedded.put((chunk_ids, rows, vectors))

    def _store_loop(self) -> None:
        from django.db import connections

        model_name = get_embedder().name
        try:
            while (item := self._embedded.get()) is not None:
                chunk_ids, rows, vectors = item
                if self._error is None:
                    try:
                        self.done += store_batch(
                            chunk_ids, rows, vectors, model_name, give_back_on_error=False
                        )
                        continue
                    except BaseException as exc:  # noqa: BLE001 - handed to the caller in close()
                        self._error = exc
                give_back(chunk_ids)
        finally:
            connections.close_all()

    def submit(self, memory_ids: list[int]) -> None:
        if not memory_ids:
            return
        self._raise()
        if not self._threads:
            self.done += embed_memories(memory_ids, claimed=True)
        else:
            self._queue.put(list(memory_ids))

    def close(self, *, progress: Callable[[int], None] | None = None, every: float = 5.0) -> int:
        """Embed and write what is left, then re-raise either thread's first error. The caller's writes
        run up to `depth` batches ahead of the embedder, so this can take minutes: `progress(done)` is
        called every `every` seconds meanwhile (the import's progress lines go on while it waits)."""
        if self._threads:
            self._queue.put(None)
            for thread in self._threads:
                while thread.is_alive():
                    thread.join(timeout=every if progress is not None else None)
                    if progress is not None and thread.is_alive():
                        progress(self.done)
        self._raise()
        return self.done

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error
