"""Export a scope subtree as JSON lines (docs/portability.md): to standard output, or to a file with -o.
Runs as the system (the operator at the shell); the export is recorded in the audit log. Progress goes to
standard error, so standard output stays the file."""

from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from governance.permissions import scope_by_path
from governance.runtime.progress import Progress
from governance.services.portability import scope_export


class Command(BaseCommand):
    help = "Export a scope subtree (memories, tombstones, relations, grants, audit events) as JSON lines."

    def add_arguments(self, parser):
        parser.add_argument("path", help="the scope to export, with everything below it (e.g. demo/slides)")
        parser.add_argument(
            "-o", "--output", default=None, help="write to this file instead of standard output"
        )
        parser.add_argument("--quiet", action="store_true", help="no progress lines")

    def handle(self, *args, path, output=None, quiet=False, **options):
        root = scope_by_path(None, path, missing=CommandError(f"no scope {path!r}"))
        try:
            out = sys.stdout if output in (None, "-") else open(output, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise CommandError(f"cannot write {output}: {exc.strerror}") from exc
        lines = scope_export(root=root, actor=None)
        header = next(lines)
        total = sum(json.loads(header)["counts"].values())
        progress = Progress(lambda text: quiet or self.stderr.write(text), total, unit="records")
        done = 0
        with out if out is not sys.stdout else _NoClose(out):
            out.write(header)
            for line in lines:
                out.write(line)
                done += 1
                if done % 1000 == 0:
                    progress.update(min(done, total))
        progress.update(total, force=True)
        if not quiet:
            self.stderr.write(
                f"exported {root.path}: {done - 1} records in {progress.elapsed:.1f} s"
                + (f" to {output}" if output not in (None, "-") else "")
            )


class _NoClose:
    def __init__(self, handle) -> None:
        self.handle = handle

    def __enter__(self):
        return self.handle

    def __exit__(self, *exc) -> None:
        self.handle.flush()
