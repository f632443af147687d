"""Import conversations into the same memories the events API makes, from
- JSON lines {scope, session, at, role, speaker?, content, ref?} (`--format jsonl`),
- a LoCoMo or a LongMemEval file as published (`--format locomo|longmemeval`; governance/evaluation/
  conversations.py says how they map: one scope per sample or question under `--scope-prefix`).
The format is detected when not given. Idempotent: a turn is identified by scope, session and ref (a line
without a ref gets one derived from its time, role and content), so importing a file twice adds nothing."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from itertools import groupby
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_datetime

from governance.errors import DomainError
from governance.evaluation.conversations import FORMATS, detect_format, load
from governance.propagation import embed_memories
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


class Command(BaseCommand):
    help = "Import conversation turns from a JSONL file (idempotent, with batch embedding)."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--no-embed", action="store_true", help="leave embedding to the workers")
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
        scopes: dict[str, object] = {}
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
                turns = [{k: t.get(k) for k in ("role", "speaker", "content", "ref", "call_id", "at")} for t in chunk]
                memories = event_ingest(scope=scope, session=session, at=chunk[0]["at"], turns=turns, actor=None)
                created += len(memories)
                turns_new += sum(1 for m in memories if m.kind == "episodic")
                if memories and not no_embed:
                    embed_memories([m.pk for m in memories])
                done += len(chunk)
                rate = done / max(time.monotonic() - started, 1e-6)
                self.stdout.write(f"  {done}/{total} turns, {created} memories created, {rate:.0f} turns/s")
        self.stdout.write(f"read {total} turns: {turns_new} new ({created} memories created with their "
                          f"candidates), {total - turns_new} already present; {len(errors)} bad lines")
        if errors:
            raise CommandError(f"{len(errors)} lines could not be imported (first: {errors[0]})")
