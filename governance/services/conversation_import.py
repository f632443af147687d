"""Importing conversation turns (a JSONL, LoCoMo or LongMemEval file, already parsed into lines): each
scope and session's consecutive lines become one event, written in chunks, each text embedded exactly once
by this process while the next chunk is written. Used by `manage.py import_conversations` and by the
evaluation of an uploaded file (governance.evaluation.runs)."""

from __future__ import annotations

import time
from itertools import groupby
from typing import TextIO

from django.conf import settings
from django.db import transaction

from governance.errors import DomainError
from governance.propagation import (
    EmbedAhead,
    claim_lease,
    embedding_batches,
    give_back,
    hold_rows,
    run_after_embedding,
)
from governance.runtime.progress import progress_line as shared_progress_line
from governance.services.events import event_ingest, turn_too_long
from governance.services.scope import scope_ensure

BATCH_TURNS = 200
# While the last written turns wait for the embedder, a line every this many seconds.
EMBEDDING_PROGRESS_SECONDS = 5.0


def progress_line(done: int, total: int, created: int, elapsed: float, embedded: int | None = None) -> str:
    """One progress line: turns written of total, memories created (and, when this process embeds, how
    many hold their vector), the rate so far and the time left at it (governance.runtime.progress)."""
    extra = f"{created} memories created" + ("" if embedded is None else f", {embedded} embedded")
    return shared_progress_line(done, total, elapsed, unit="turns", extra=extra)


def embedding_line(embedded: int, handed: int, elapsed: float) -> str:
    """While the last written turns wait for the embedder (the writes run a few batches ahead of it): how
    many of the memories handed over hold their vector (small talk is never embedded, so the count may
    stop short of the total)."""
    return shared_progress_line(embedded, handed, elapsed, unit="memories", extra="embedded of those written")


def ingest_claimed(*, scope, session: str, turns: list[dict], embed: bool) -> list:
    """Write one chunk of turns; when this process embeds them, claim their embedding in the same
    transaction, so the embedding worker that receives the chunk's outbox delivery finds every row
    taken and never runs the embedder on them (each text is embedded exactly once)."""
    with transaction.atomic():
        memories = event_ingest(scope=scope, session=session, at=turns[0]["at"], turns=turns, actor=None)
        if memories and embed:
            hold_rows([m.pk for m in memories])
    return memories


def conversation_ingest(
    lines: list[dict], errors: list[str], *, no_embed: bool, out: TextIO, batch_turns: int = BATCH_TURNS
) -> tuple[int, int, int, float]:
    """Write (and unless `no_embed`, embed) the lines; a scope that cannot be opened, or a turn too long
    to be a memory (left out, the rest imported), adds to `errors`. Progress lines go to `out`. Returns
    (lines read, new turns, memories created, seconds)."""
    total, created, turns_new, started = len(lines), 0, 0, time.monotonic()
    done = 0
    importable = []
    for line in lines:
        if problem := turn_too_long(line["content"]):
            errors.append(
                f"scope {line['scope']!r}, session {line['session']!r}, turn {line.get('ref')!r}: {problem}"
            )
            done += 1
        else:
            importable.append(line)
    lines = importable
    # Written but not yet embedded (claimed by this process): handed to the embedder once they fill a
    # batch, so a conversation of many short sessions still reaches the embedder in full batches.
    waiting: list[tuple[int, int]] = []
    embedded: list[int] = []  # handed to the embedder by this process
    renewed = time.monotonic()
    # The embedder works on its own thread while the next chunk is written (EmbedAhead).
    ahead = None if no_embed else EmbedAhead()
    scopes: dict[str, object] = {}
    try:
        # Consecutive lines of one scope and session form one event (in chunks), in file order.
        for (scope_path, session), group in groupby(lines, key=lambda x: (x["scope"], x["session"])):
            group = list(group)
            try:
                scope = scopes.get(scope_path) or scope_ensure(path=scope_path, actor=None)
            except DomainError as exc:
                errors.append(f"scope {scope_path!r}: {exc.message}")
                done += len(group)
                continue
            scopes[scope_path] = scope
            for start in range(0, len(group), batch_turns):
                chunk = group[start : start + batch_turns]
                turns = [
                    {k: t.get(k) for k in ("role", "speaker", "content", "ref", "call_id", "at")}
                    for t in chunk
                ]
                memories = ingest_claimed(scope=scope, session=session, turns=turns, embed=ahead is not None)
                created += len(memories)
                turns_new += sum(1 for m in memories if m.kind == "episodic")
                if ahead is not None:
                    waiting += [(m.pk, len(m.text)) for m in memories]
                    full = embedding_batches(
                        waiting, settings.EMBEDDING_BATCH_SIZE, settings.EMBEDDING_BATCH_CHARS
                    )
                    ready = [pk for batch in full[:-1] for pk in batch]  # the last batch may still grow
                    if full and len(full[-1]) >= settings.EMBEDDING_BATCH_SIZE:
                        ready += full[-1]
                    if ready:
                        taken = set(ready)
                        waiting = [row for row in waiting if row[0] not in taken]
                        ahead.submit(ready)
                        embedded += ready
                    if waiting and time.monotonic() - renewed > claim_lease().total_seconds() / 3:
                        hold_rows([pk for pk, _ in waiting])  # still ours while they wait for a batch
                        renewed = time.monotonic()
                done += len(chunk)
                embedded_now = None if ahead is None else ahead.done
                out.write(progress_line(done, total, created, time.monotonic() - started, embedded_now))
                out.flush()
        if ahead is not None and waiting:
            ahead.submit([pk for pk, _ in waiting])
            embedded += [pk for pk, _ in waiting]
            waiting = []
    except BaseException:
        if waiting:  # written, never handed over: the embedding queue may take them at once
            give_back([pk for pk, _ in waiting])
        raise
    finally:
        if ahead is not None:
            # On an error too: the rows handed over are embedded, and its error raised. The lines go on
            # meanwhile: the writes ran up to a few batches (minutes of long turns) ahead of the embedder.
            handed = len(embedded)

            def still_embedding(count: int) -> None:
                out.write(embedding_line(count, handed, time.monotonic() - started))
                out.flush()

            ahead.close(progress=still_embedding, every=EMBEDDING_PROGRESS_SECONDS)
    # What follows an embedding (the proposal of disputes among the imported turns and their neighbours)
    # runs here as after the embedding worker's delivery: one place (governance.propagation.stores). With
    # --no-embed the worker embeds them and runs it.
    if embedded:
        run_after_embedding(embedded)
    return total, turns_new, created, time.monotonic() - started
