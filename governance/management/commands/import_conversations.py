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
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_datetime

from governance.evaluation.conversations import FORMATS, detect_format, load
from governance.runtime.progress import format_eta  # noqa: F401  (kept importable here)
from governance.services.conversation_import import conversation_ingest, ingest_claimed, progress_line  # noqa: F401
from governance.services.events import ROLES

BATCH_TURNS = 200  # lines per written chunk (read at each call: tests lower it)


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
    help = "Import conversation turns from a JSONL, LoCoMo or LongMemEval file (idempotent, each text embedded once, here)."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument(
            "--no-embed",
            action="store_true",
            help="only write: the embedding workers embed the turns (searchable by keyword at once)",
        )
        parser.add_argument(
            "--format",
            dest="fmt",
            choices=FORMATS,
            default=None,
            help="jsonl, locomo or longmemeval (detected from the file when not given)",
        )
        parser.add_argument(
            "--scope-prefix",
            default=None,
            help="scope under which a LoCoMo sample or LongMemEval question gets its own scope "
            "(default: the format's name)",
        )

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
                loaded = load(Path(file), fmt, prefix=scope_prefix or fmt)
                lines, errors = loaded.turns, list(loaded.left_out)  # the rest imports; the command fails
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
        total, turns_new, created, elapsed = conversation_ingest(
            lines, errors, no_embed=no_embed, out=self.stdout, batch_turns=BATCH_TURNS
        )
        self.stdout.write(
            f"read {total} turns: {turns_new} new ({created} memories created with their "
            f"candidates), {total - turns_new} already present; {len(errors)} bad lines; "
            f"{elapsed:.1f} s"
        )
        if errors:
            raise CommandError(f"{len(errors)} lines could not be imported (first: {errors[0]})")
