"""`manage.py evaluate_retrieval QUESTIONS.jsonl`: recall@1/5/10 of annotated evidence turns, per
category and per strategy, on conversations imported with `import_conversations` (or given here with
--conversations, which imports them first; importing twice adds nothing)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from governance.evaluation.report import retrieval_table
from governance.evaluation.retrieval import evaluate_questions, parse_questions
from governance.evaluation.runner import resolve_strategies


class Command(BaseCommand):
    help = "Report recall@1/5/10 of the evidence refs of each question, per category and strategy."

    def add_arguments(self, parser):
        parser.add_argument("file", help="JSONL of {scope, question, evidence_refs: [...], category?}")
        parser.add_argument("--conversations", default=None,
                            help="a JSONL file in the import_conversations format to import first")
        parser.add_argument("--strategy", default="all", help="a strategy name, or all (default)")
        parser.add_argument("--json", dest="json_out", default=None, help="write the results to this file")

    def handle(self, *args, file, conversations, strategy, json_out, **options):
        try:
            strategies = resolve_strategies(strategy)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        try:
            lines = Path(file).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}") from exc
        questions, errors = parse_questions(lines)
        if errors:
            raise CommandError(f"{len(errors)} bad line(s) in {file}:\n" + "\n".join(errors[:20]))
        if not questions:
            raise CommandError(f"{file} holds no questions.")
        if conversations:
            call_command("import_conversations", conversations, stdout=self.stderr, stderr=self.stderr)
        results = evaluate_questions(questions, strategies)
        self.stdout.write(f"questions={len(questions)} file={file}\n")
        self.stdout.write(retrieval_table(results))
        latency = ", ".join(f"{s} {body['latency_ms_p50']}" for s, body in results["strategies"].items())
        self.stdout.write(f"\nrecall latency p50 (ms): {latency}")
        for name, body in results["strategies"].items():
            for error in body["errors"][:5]:
                self.stderr.write(f"[{name}] {error}")
        if json_out:
            Path(json_out).write_text(json.dumps(results, indent=2, ensure_ascii=False))
            self.stdout.write(f"wrote {json_out}")
