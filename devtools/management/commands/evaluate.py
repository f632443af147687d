"""`manage.py evaluate`: run the synthetic replay suite over the strategies, print the ablation table,
store the run (the dashboard's evaluation page shows the latest) and optionally write it as JSON."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from devtools.evaluation.generator import SUITES
from devtools.evaluation.report import ablation_table
from devtools.evaluation.runner import evaluate


class Command(BaseCommand):
    help = "Run the replay suite (every strategy by default) and print the ablation table."

    def add_arguments(self, parser):
        parser.add_argument(
            "--suite", default="standard", help=f"one of: {', '.join(SUITES)} (default standard)"
        )
        parser.add_argument("--strategy", default="all", help="a strategy name, or all (default)")
        parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
        parser.add_argument(
            "--per-cell",
            type=int,
            default=None,
            help="tasks per category and language (overrides the suite's size)",
        )
        parser.add_argument("--categories", default="", help="comma-separated categories (default: all)")
        parser.add_argument("--json", dest="json_out", default=None, help="write the results to this file")
        parser.add_argument(
            "--keep",
            action="store_true",
            help="commit the tasks' memories and turns (to inspect them in the dashboard)",
        )
        parser.add_argument("--show-failures", type=int, default=10, help="print up to N failed checks")

    def handle(
        self, *args, suite, strategy, seed, per_cell, categories, json_out, keep, show_failures, **options
    ):
        if suite not in SUITES:
            raise CommandError(f"Unknown suite {suite!r}; choose one of: {', '.join(SUITES)}.")
        if per_cell is not None and per_cell < 1:
            raise CommandError("--per-cell is a whole number of at least 1.")
        verbosity = options.get("verbosity", 1)

        def progress(done: int, total: int, task_id: str) -> None:
            if verbosity >= 1 and (done == total or done % 10 == 0):
                self.stderr.write(f"  {done}/{total} tasks ({task_id})")

        try:
            chosen = tuple(c.strip() for c in categories.split(",") if c.strip()) or None
            run = evaluate(
                suite=suite,
                seed=seed,
                strategy=strategy,
                keep=keep,
                per_cell=per_cell,
                categories=chosen,
                progress=progress,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        results = run.results
        env = run.environment
        self.stdout.write(
            f"suite={suite} seed={seed} tasks={run.task_count} fingerprint={results['fingerprint'][:12]} "
            f"time={run.duration_s:.1f}s cpus={env.get('cpus')} embedder={env.get('embedder')} run=#{run.pk}\n"
        )
        self.stdout.write(ablation_table(results))
        if show_failures and results.get("failures"):
            self.stdout.write(
                f"\nfailed checks ({results['failure_count']} task×strategy; first {show_failures}):"
            )
            for f in results["failures"][:show_failures]:
                self.stdout.write(f"  [{f['strategy']}] {f['task']}: {'; '.join(f['failures'])}")
        if json_out:
            Path(json_out).write_text(
                json.dumps({**results, "run": run.pk, "environment": env}, indent=2, ensure_ascii=False)
            )
            self.stdout.write(f"\nwrote {json_out}")
