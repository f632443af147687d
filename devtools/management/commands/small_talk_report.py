"""`manage.py small_talk_report --file F --format locomo|longmemeval`: what the write-time small-talk filter
(governance/services/small_talk.py) would mark in a published benchmark file, read as it is: how many
turns, how many are small talk, and how many of the questions' evidence turns it would mark (must be 0:
a filter that drops evidence is wrong). Lists the marked turns with --show."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from governance.evaluation.conversations import detect_format, load
from governance.services.small_talk import small_talk_turn


class Command(BaseCommand):
    help = "Count the turns of a LoCoMo/LongMemEval file the small-talk filter marks, and the evidence among them."

    def add_arguments(self, parser):
        parser.add_argument("--file", required=True)
        parser.add_argument("--format", dest="fmt", choices=("locomo", "longmemeval"), default=None)
        parser.add_argument("--show", type=int, default=0, help="list up to N marked turns")

    def handle(self, *args, file, fmt, show, **options):
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"no file {file}")
        fmt = fmt or detect_format(path)
        loaded = load(path, fmt, prefix=fmt)
        evidence = {(q.scope, ref) for q in loaded.questions for ref in q.evidence_refs}
        marked = [t for t in loaded.turns if small_talk_turn(t["content"], t["role"])]
        lost = [t for t in marked if (t["scope"], t.get("ref")) in evidence]
        self.stdout.write(
            f"{path.name} ({fmt}): {len(loaded.turns)} turns, {len(marked)} small talk "
            f"({len(marked) / max(1, len(loaded.turns)):.2%}); {len(evidence)} evidence turns of "
            f"{len(loaded.questions)} questions, {len(lost)} of them marked"
        )
        for turn in (lost + [t for t in marked if t not in lost])[:show]:
            flag = "EVIDENCE " if turn in lost else ""
            self.stdout.write(f"  {flag}{turn['scope']} {turn.get('ref')}: {turn['content'][:80]!r}")
