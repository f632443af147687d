"""Recall memories for a query, as POST /api/v1/recall does."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from governance.management.commands._recall_args import add_common, parse_common, run
from governance.recall import recall_memories


class Command(BaseCommand):
    help = "Print the -k best memories for --query in --scope."

    def add_arguments(self, parser):
        add_common(parser)
        parser.add_argument("-k", type=int, default=10)

    def handle(self, *args, **options):
        results = run(recall_memories, k=options["k"], **parse_common(options))
        if options["json"]:
            self.stdout.write(json.dumps({"results": results}, ensure_ascii=False, indent=2, default=str))
            return
        for r in results:
            self.stdout.write(
                f"{r['score']:.3f}  #{r['memory_id']} [{r['kind']}/{r['status']}] {r['text'][:100]}"
            )
