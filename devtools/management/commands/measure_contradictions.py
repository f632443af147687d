"""`manage.py measure_contradictions [--file F]`: precision and recall of the one contradiction test
(governance.services.conflict.opposes: the opposite, or another value for the same subject) on a labelled set
of statement pairs, per language and per sort, with every miss and false alarm listed.

The default set (tests/data/contradictions/pairs.jsonl) is ours: 47 pairs in English and Chinese written from
real-looking project facts (stores, places, owners, tools, formats, days, a currency, negations) and their
near misses (the same wording about another subject, an addition, the same value restated, a time against a
thing). It is a regression check of the rule on wording it was not written for, not a figure on real data.
Each line: {"lang", "sort", "older", "newer", "contradicts"}."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from governance.services.conflict import opposes

DEFAULT = Path(settings.BASE_DIR) / "tests" / "data" / "contradictions" / "pairs.jsonl"


def measure(path: Path) -> dict:
    """{"all"|lang: {"tp", "fp", "fn", "tn"}} and the wrong pairs."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0, "tn": 0})
    wrong = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        pair = json.loads(line)
        got = opposes(pair["older"], pair["newer"]) is not None
        cell = ("tp" if got else "fn") if pair["contradicts"] else ("fp" if got else "tn")
        for group in ("all", pair["lang"]):
            counts[group][cell] += 1
        if cell in ("fp", "fn"):
            wrong.append((cell, pair))
    return {"counts": dict(counts), "wrong": wrong}


def rates(c: dict[str, int]) -> tuple[float, float]:
    precision = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
    recall = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
    return precision, recall


class Command(BaseCommand):
    help = "Precision and recall of the contradiction test on a labelled set of statement pairs."

    def add_arguments(self, parser):
        parser.add_argument("--file", type=Path, default=DEFAULT)

    def handle(self, *args, file: Path, **options):
        found = measure(file)
        for group in sorted(found["counts"], key=lambda g: (g != "all", g)):
            c = found["counts"][group]
            precision, recall = rates(c)
            self.stdout.write(
                f"{group:<4} pairs {sum(c.values()):>3}  precision {precision:.3f}  recall {recall:.3f}  "
                f"(tp {c['tp']} fp {c['fp']} fn {c['fn']} tn {c['tn']})"
            )
        for cell, pair in found["wrong"]:
            label = "missed" if cell == "fn" else "false alarm"
            self.stdout.write(f"{label} [{pair['lang']} {pair['sort']}]: {pair['older']} | {pair['newer']}")
