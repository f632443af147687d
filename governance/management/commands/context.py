"""Assemble the context packet for a turn, as POST /api/v1/context does (and store the turn)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from governance.management.commands._recall_args import add_common, parse_common, run
from governance.recall import assemble_context


class Command(BaseCommand):
    help = "Print the context packet for --query in --scope within --budget tokens."

    def add_arguments(self, parser):
        add_common(parser)
        parser.add_argument("--budget", type=int, required=True)
        parser.add_argument("--session", default="")
        parser.add_argument("--goal", default=None, help="the current task's goal")

    def handle(self, *args, **options):
        kwargs = parse_common(options)
        task = {"goal": options["goal"]} if options["goal"] else None
        result = run(
            assemble_context, budget_tokens=options["budget"], session=options["session"], task=task, **kwargs
        )
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False, indent=2, default=str))
            return
        self.stdout.write(result["text"])
        budget = result["budget"]
        self.stdout.write(
            f"\n-- turn {result['turn_id']}: {budget['used']}/{budget['limit']} tokens "
            f"({budget['counter']}); skipped {len(result['packet']['skipped'])}"
        )
        self.stdout.write(
            "-- " + ", ".join(f"{s['name']} {s['ms']:.1f} ms" for s in result["trace"]["stages"])
        )
