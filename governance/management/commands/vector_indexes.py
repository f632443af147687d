"""`manage.py vector_indexes`: which scopes have an HNSW index of their own, and (with --build) bring
that in line with the settings now instead of waiting for beat (governance/recall/vector_index.py).

    vector_indexes                 list scopes at or above the threshold and their index state
    vector_indexes --build         build what is missing, drop what is invalid or no longer wanted
    vector_indexes --build --dry-run   say what --build would do
    --min-rows N / --max N         override RECALL_VECTOR_INDEX_MIN_ROWS / RECALL_VECTOR_INDEX_MAX
"""

from __future__ import annotations

import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from governance.models import Scope
from governance.recall import vector_index


class Command(BaseCommand):
    help = "List the per-scope vector indexes; --build creates the missing ones and drops stale ones."

    def add_arguments(self, parser):
        parser.add_argument(
            "--build", action="store_true", help="build/drop now (CONCURRENTLY: writes go on)"
        )
        parser.add_argument("--dry-run", action="store_true", help="with --build: only say what would change")
        parser.add_argument("--min-rows", type=int, default=None)
        parser.add_argument("--max", type=int, default=None, dest="max_indexes")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        min_rows = settings.RECALL_VECTOR_INDEX_MIN_ROWS if o["min_rows"] is None else o["min_rows"]
        max_indexes = settings.RECALL_VECTOR_INDEX_MAX if o["max_indexes"] is None else o["max_indexes"]
        if min_rows < 1 or max_indexes < 0:
            raise CommandError("--min-rows is at least 1 and --max at least 0.")
        report = None
        if o["build"]:
            report = vector_index.maintain(min_rows=min_rows, max_indexes=max_indexes, dry_run=o["dry_run"])
            if report["skipped"]:
                raise CommandError(f"not built: {report['skipped']}")
        have = vector_index.existing()
        sizes = vector_index.scope_sizes(1)
        shown = sorted(
            set(have) | {s for s, n in sizes.items() if n >= min_rows}, key=lambda s: -sizes.get(s, 0)
        )
        paths = dict(Scope.objects.filter(pk__in=shown).values_list("pk", "path"))
        rows = [
            {
                "scope": paths.get(s, f"#{s} (deleted)"),
                "scope_id": s,
                "memories": sizes.get(s, 0),
                "index": have[s].name if s in have else None,
                "state": ("ready" if have[s].valid else "invalid") if s in have else "missing",
                "index_mb": round(have[s].bytes / 2**20, 1) if s in have else 0.0,
            }
            for s in shown
        ]
        if o["json"]:
            self.stdout.write(
                json.dumps(
                    {"min_rows": min_rows, "max": max_indexes, "scopes": rows, "report": report},
                    indent=1,
                    default=str,
                )
            )
            return
        if report is not None:
            verb = "would build" if o["dry_run"] else "built"
            self.stdout.write(
                f"{verb} {len(report['built'])}, dropped {len(report['dropped'])} no longer wanted "
                f"and {len(report['dropped_invalid'])} invalid"
            )
        self.stdout.write(
            f"threshold {min_rows} memories, at most {max_indexes} indexes; "
            f"{sum(1 for r in rows if r['state'] == 'ready')} ready"
        )
        for r in rows:
            self.stdout.write(
                f"  {r['scope']:40} {r['memories']:>9,}  {r['state']:8} {r['index_mb']:>8.1f} MB"
            )
