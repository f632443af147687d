"""Import conversations into the same memories the events API makes, from
- JSON lines {scope, session, at, role, speaker?, content, ref?} (`--format jsonl`),
- a LoCoMo or a LongMemEval file as published (`--format locomo|longmemeval`; governance/evaluation/
  conversations.py says how they map: one scope per sample or question under `--scope-prefix`).
The format is detected when not given. Idempotent: a turn is identified by scope, session and ref (a line
without a ref gets one derived from its time, role and content), so importing a file twice adds nothing.

Each chunk of turns is written in one transaction that also claims the rows' embedding for this process;
the command embeds them once they fill a batch (EMBEDDING_BATCH_SIZE texts or EMBEDDING_BATCH_CHARS
characters, across sessions: small batches are slow), on a thread of its own while the next chunk is
written, so the import runs at the embedder's own speed; the embedding worker, receiving the
same rows' outbox delivery, finds them taken: every text goes through the embedder once. Rows are
searchable by keyword from the commit on, by vector when their embedding lands. With --no-embed the
command only writes and the `embedding` queue does the work."""


from __future__ import annotations

import hashlib
import json
import sys
import time
from itertools import groupby
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.dateparse import parse_datetime

from governance.errors import DomainError
from governance.evaluation.conversations import FORMATS, detect_format, load
from governance.management.progress import format_eta  # noqa: F401  (kept importable here)
from governance.management.progress import progress_line as shared_progress_line
from governance.propagation import EmbedAhead, claim_lease, embedding_batches, give_back, hold_rows
from governance.services.events import ROLES, event_ingest
from governance.services.scope import scope_ensure

BATCH_TURNS = 200


def derived_ref(line: dict) -> str:
    digest = hashlib.sha256(f"{line.get('at')}|{line['role']}|{line['content']}".encode()).hexdigest()
    return f"line:{digest[:20]}"


def parse_line(number: int, raw: str) -> dict:
    try:
        line = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"line {number}: not JSON ({exc.msg})") from exc
    if not isinstance(line, dict):
        raise ValueError(f"line {number}: expected a JSON object")
    for name in ("scope", "session", "role", "content"):
        if not isinstance(line.get(name), str) or not line[name].strip():
            raise ValueError(f"line {number}: `{name}` is required and must be a non-empty string")
    if line["role"] not in ROLES:
        raise ValueError(f"line {number}: role must be one of {', '.join(ROLES)}")
    at = parse_datetime(line["at"]) if isinstance(line.get("at"), str) else None
    if at is None or at.tzinfo is None:
        raise ValueError(f"line {number}: `at` must be an ISO date-time with a time zone")
    line["at"] = at
    line["ref"] = line.get("ref") or derived_ref({**line, "at": at.isoformat()})
    return line


def progress_line(done: int, total: int, created: int, elapsed: float) -> str:
    """One progress line: turns done of total, memories created, the rate so far and the time left at it
    (the shared display of governance.management.progress)."""
    return shared_progress_line(done, total, elapsed, unit="turns", extra=f"{created} memories created")


def ingest_claimed(*, scope, session: str, turns: list[dict], embed: bool) -> list:
    """Write one chunk of turns; when this process embeds them, claim their embedding in the same
    transaction, so the embedding worker that receives the chunk's outbox delivery finds every row
    taken and never runs the embedder on them (each text is embedded exactly once)."""
    with transaction.atomic():
        memories = event_ingest(scope=scope, session=session, at=turns[0]["at"], turns=turns, actor=None)
        if memories and embed:
            hold_rows([m.pk for m in memories])
    return memories


class Command(BaseCommand):
    help = "Import conversation turns from a JSONL, LoCoMo or LongMemEval file (idempotent, each text embedded once, here)."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--no-embed", action="store_true",
                            help="only write: the embedding workers embed the turns (searchable by keyword at once)")
        parser.add_argument("--format", dest="fmt", choices=FORMATS, default=None,
                            help="jsonl, locomo or longmemeval (detected from the file when not given)")
        parser.add_argument("--scope-prefix", default=None,
                            help="scope under which a LoCoMo sample or LongMemEval question gets its own scope "
                                 "(default: the format's name)")

    def handle(self, *args, file, no_embed, fmt=None, scope_prefix=None, **options):
        if fmt is None:
            try:
                fmt = "jsonl" if file == "-" else detect_format(Path(file))
            except OSError as exc:
                raise CommandError(f"cannot read {file}: {exc.strerror}") from exc
        if fmt == "jsonl":
            lines, errors = self.read_jsonl(file)
        else:
            try:
                lines, errors = load(Path(file), fmt, prefix=scope_prefix or fmt).turns, []
            except OSError as exc:
                raise CommandError(f"cannot read {file}: {exc.strerror}") from exc
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
        for error in errors[:20]:
            self.stderr.write(error)
        self.ingest(lines, errors, no_embed=no_embed)

    def read_jsonl(self, file: str) -> tuple[list[dict], list[str]]:
        try:
            handle = sys.stdin if file == "-" else open(file, encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}") from exc
        with handle:
            lines, errors = [], []
            for number, raw in enumerate(handle, start=1):
                if raw.strip():
                    try:
                        lines.append(parse_line(number, raw))
                    except ValueError as exc:
                        errors.append(str(exc))
        return lines, errors

    def ingest(self, lines: list[dict], errors: list[str], *, no_embed: bool) -> None:
        total, created, turns_new, started = len(lines), 0, 0, time.monotonic()
        done = 0
        # Written but not yet embedded (claimed by this process): handed to the embedder once they fill a
        # batch, so a conversation of many short sessions still reaches the embedder in full batches.
        waiting: list[tuple[int, int]] = []
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
                for start in range(0, len(group), BATCH_TURNS):
                    chunk = group[start : start + BATCH_TURNS]
                    turns = [{k: t.get(k) for k in ("role", "speaker", "content", "ref", "call_id", "at")}
                             for t in chunk]
                    memories = ingest_claimed(scope=scope, session=session, turns=turns, embed=ahead is not None)
                    created += len(memories)
                    turns_new += sum(1 for m in memories if m.kind == "episodic")
                    if ahead is not None:
                        waiting += [(m.pk, len(m.text)) for m in memories]
                        full = embedding_batches(waiting, settings.EMBEDDING_BATCH_SIZE,
                                                 settings.EMBEDDING_BATCH_CHARS)
                        ready = [pk for batch in full[:-1] for pk in batch]  # the last batch may still grow
                        if full and len(full[-1]) >= settings.EMBEDDING_BATCH_SIZE:
                            ready += full[-1]
                        if ready:
                            taken = set(ready)
                            waiting = [row for row in waiting if row[0] not in taken]
                            ahead.submit(ready)
                        if waiting and time.monotonic() - renewed > claim_lease().total_seconds() / 3:
                            hold_rows([pk for pk, _ in waiting])  # still ours while they wait for a batch
                            renewed = time.monotonic()
                    done += len(chunk)
                    self.stdout.write(progress_line(done, total, created, time.monotonic() - started))
                    self.stdout.flush()
            if ahead is not None and waiting:
                ahead.submit([pk for pk, _ in waiting])
                waiting = []
        except BaseException:
            if waiting:  # written, never handed over: the embedding queue may take them at once
                give_back([pk for pk, _ in waiting])
            raise
        finally:
            if ahead is not None:
                ahead.close()  # on an error too: the rows handed over are embedded, and its error raised
        elapsed = time.monotonic() - started
        self.stdout.write(f"read {total} turns: {turns_new} new ({created} memories created with their "
                          f"candidates), {total - turns_new} already present; {len(errors)} bad lines; "
                          f"{elapsed:.1f} s")
        if errors:
            raise CommandError(f"{len(errors)} lines could not be imported (first: {errors[0]})")
