"""`manage.py evaluate_retrieval QUESTIONS.jsonl`: recall@1/5/10 of annotated evidence turns, per
category and per strategy, on conversations imported with `import_conversations` (or given here with
--conversations, which imports them first; importing twice adds nothing).

`manage.py evaluate_retrieval --file F --format locomo|longmemeval`: a published benchmark file as it is
(its conversations are imported first, idempotently): recall@1/5/10 per category and overall for `full`,
each single search path (vector only, keyword only) and a plain BM25 baseline over the same turns; on
knowledge-update questions, how often the newer session's evidence ranks above the older one; and the
recall latency p50/p95 of each (the query embedding included)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from governance.evaluation.conversations import detect_format, load
from governance.evaluation.report import missed, misses_table, retrieval_table, spread_table
from governance.evaluation.retrieval import (
    evaluate_loaded,
    evaluate_questions,
    first_per_category,
    parse_questions,
    resolve_strategies,
)

NO_INPUT = "Give a questions JSONL file, or --file F --format locomo|longmemeval."


# The path whose misses `--misses` lists.
MISSES_PATH = "full"


def latency_table(results: dict) -> str:
    """Per path: the recall's p50/p95 (ms, the query embedding included), the embedding's own, and each
    stage's, with `after_embedding` (the stages that run once the vector is there) summed per question."""
    names = [n for n, body in results["strategies"].items() if body.get("stages_ms")]
    stages = list(dict.fromkeys(s for n in names for s in results["strategies"][n]["stages_ms"]))
    lines = [
        " | ".join(["path", "recall p50/p95", *(f"{s} p50/p95" for s in stages)]),
        " | ".join(["---"] * (2 + len(stages))),
    ]
    for name, body in results["strategies"].items():
        split = body.get("stages_ms") or {}
        cells = [name, f"{body['latency_ms_p50']}/{body['latency_ms_p95']}"]
        cells += [f"{split[s]['p50']}/{split[s]['p95']}" if s in split else "-" for s in stages]
        lines.append(" | ".join(cells))
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Report recall@1/5/10 of the evidence refs of each question, per category and strategy."

    def add_arguments(self, parser):
        parser.add_argument(
            "file",
            nargs="?",
            default=None,
            help="JSONL of {scope, question, evidence_refs: [...], category?}",
        )
        parser.add_argument(
            "--file",
            dest="bench_file",
            default=None,
            help="a LoCoMo or LongMemEval file as published (see --format)",
        )
        parser.add_argument(
            "--format",
            dest="fmt",
            choices=("locomo", "longmemeval"),
            default=None,
            help="the format of --file (detected when not given)",
        )
        parser.add_argument("--scope-prefix", default=None, help="scope the --file's conversations go under")
        parser.add_argument("--limit", type=int, default=None, help="only the first N questions of --file")
        parser.add_argument(
            "--per-category",
            type=int,
            default=None,
            help="only the first N questions of each category of --file (imported round-robin across "
            "categories; with --limit, the first of those)",
        )
        parser.add_argument(
            "--category",
            dest="categories",
            action="append",
            default=None,
            help="only the questions of this category of --file, as the table names it (repeat for more): "
            "a whole category imported and measured without the rest of a file too long to import whole",
        )
        parser.add_argument(
            "--imported-only",
            action="store_true",
            help="import nothing: ask only the chosen questions whose conversation is already imported in "
            "full (every turn of the file present and embedded); the others are counted on stderr",
        )
        parser.add_argument("--no-baseline", action="store_true", help="skip the BM25 baseline")
        parser.add_argument(
            "--conversations",
            default=None,
            help="a JSONL file in the import_conversations format to import first",
        )
        parser.add_argument("--strategy", default="all", help="a strategy name, or all (default)")
        parser.add_argument("--json", dest="json_out", default=None, help="write the results to this file")
        parser.add_argument(
            "--misses",
            action="store_true",
            help="with --file: also list the questions `full` missed (evidence outside its top 10, or a "
            "knowledge update's older evidence first), with the refs it left out; --json then holds every "
            "question's ranked refs (`tasks`)",
        )
        parser.add_argument(
            "--http",
            action="store_true",
            help="with --file: also ask every question of `full` through /api/v1/recall over HTTP (a web "
            "process started for it, one kept-alive connection) and print the split from Server-Timing",
        )

    def handle(self, *args, file, conversations, strategy, json_out, **options):
        if options.get("bench_file"):
            return self.handle_benchmark(
                options["bench_file"],
                options.get("fmt"),
                options.get("scope_prefix"),
                options.get("limit"),
                not options.get("no_baseline"),
                json_out,
                per_category=options.get("per_category"),
                categories=options.get("categories"),
                imported_only=options.get("imported_only", False),
                http=options.get("http", False),
                misses=options.get("misses", False),
            )
        if not file:
            raise CommandError(NO_INPUT)
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

    def handle_benchmark(
        self,
        path: str,
        fmt: str | None,
        prefix: str | None,
        limit: int | None,
        baseline: bool,
        json_out: str | None,
        *,
        per_category: int | None = None,
        categories: list[str] | None = None,
        imported_only: bool = False,
        http: bool = False,
        misses: bool = False,
    ) -> None:
        file = Path(path)
        try:
            fmt = fmt or detect_format(file)
            if fmt not in ("locomo", "longmemeval"):
                raise CommandError(f"{path} is not a LoCoMo or LongMemEval file (give --format).")
            loaded = load(file, fmt, prefix=prefix or fmt)
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if per_category is not None and per_category < 1:
            raise CommandError("--per-category must be 1 or more.")
        questions = loaded.questions
        if categories:
            unknown = sorted(set(categories) - {q.category for q in questions})
            if unknown:
                known = ", ".join(sorted({q.category for q in questions}))
                raise CommandError(f"{path} has no category {unknown[0]!r} (it has: {known}).")
            questions = [q for q in questions if q.category in categories]
        questions = first_per_category(questions, per_category) if per_category else questions
        questions = questions[:limit] if limit else questions
        if not questions:
            raise CommandError(f"{path} holds no question with evidence turns.")
        if imported_only:
            questions = self.fully_imported(loaded, questions)
            if not questions:
                raise CommandError("None of these questions' conversations is imported in full.")
        else:
            self.import_turns(loaded, questions)
        scopes = {q.scope for q in questions}
        results = evaluate_loaded(questions, baseline=baseline, detail_path=MISSES_PATH if misses else None)
        results.update(file=str(path), format=fmt, skipped=loaded.skipped)
        self.stdout.write(
            f"questions={len(questions)} file={path} format={fmt} "
            f"turns={sum(1 for t in loaded.turns if t['scope'] in scopes)}\n"
        )
        self.stdout.write(retrieval_table(results))
        spread = spread_table(results)
        if spread:
            self.stdout.write(f"\nper conversation (a change is kept when it costs none of them):\n{spread}")
        self.stdout.write(
            "\n\npath | newer evidence first (knowledge updates) | recall p50 ms | recall p95 ms"
        )
        for name, body in results["strategies"].items():
            nf = body["newer_first"]
            rate = f"{nf['rate']:.3f} of {nf['questions']}" if nf["rate"] is not None else "-"
            self.stdout.write(f"{name} | {rate} | {body['latency_ms_p50']} | {body['latency_ms_p95']}")
            for error in body["errors"][:5]:
                self.stderr.write(f"[{name}] {error}")
        if misses:
            self.stdout.write(
                f"\nwhat `{MISSES_PATH}` missed ({len(missed(results))} of {len(questions)} questions):\n"
                f"{misses_table(results) or 'nothing'}"
            )
        self.stdout.write("\nlatency split (ms; the query embedding's cache cleared before every question):")
        self.stdout.write(latency_table(results))
        if http:
            results["http"] = self.over_http(questions, prefix or fmt, results)
        if loaded.skipped:
            self.stderr.write(f"{len(loaded.skipped)} question(s) left out (first: {loaded.skipped[0]})")
        if loaded.left_out:
            results["left_out"] = loaded.left_out
            self.stderr.write(f"{len(loaded.left_out)} turn(s) not imported (first: {loaded.left_out[0]})")
        if json_out:
            Path(json_out).write_text(json.dumps(results, indent=2, ensure_ascii=False))
            self.stdout.write(f"wrote {json_out}")

    def fully_imported(self, loaded, questions: list) -> list:
        """The questions whose scope holds every turn of the file (by ref), each with its vector (none still
        waiting for the embedder); the others are counted."""
        from governance.models import Memory

        wanted: dict[str, set[str]] = {}
        for turn in loaded.turns:
            wanted.setdefault(turn["scope"], set()).add(turn["ref"])
        scopes = {q.scope for q in questions}
        present: dict[str, set[str]] = {}
        rows = Memory.objects.filter(scope__path__in=scopes, kind="episodic").values_list(
            "scope__path", "source_ref"
        )
        for scope, ref in rows:
            present.setdefault(scope, set()).add(ref)
        from governance.propagation.embedding import needs_embedding

        waiting = set(
            needs_embedding(None, Memory.objects.filter(scope__path__in=scopes)).values_list(
                "scope__path", flat=True
            )
        )
        kept = [
            q
            for q in questions
            if q.scope not in waiting and wanted.get(q.scope, set()) <= present.get(q.scope, set())
        ]
        if len(kept) < len(questions):
            self.stderr.write(f"{len(questions) - len(kept)} question(s) left out: not imported in full")
        return kept

    def import_turns(self, loaded, questions: list) -> None:
        """Import (idempotently, as import_conversations does) the conversations the questions ask about,
        in the questions' order (a stratified --per-category subset stopped part-way covers every
        category). The imported scopes stay: a second run over them imports nothing and only asks."""
        scopes = {q.scope for q in questions}
        from governance.management.commands.import_conversations import Command as Import

        importer = Import(stdout=self.stderr, stderr=self.stderr)
        order = {scope: i for i, scope in enumerate(dict.fromkeys(q.scope for q in questions))}
        turns = sorted((t for t in loaded.turns if t["scope"] in scopes), key=lambda t: order[t["scope"]])
        importer.ingest(turns, [], no_embed=False)

    def over_http(self, questions: list, root: str, results: dict) -> dict:
        """`full` through /api/v1/recall over HTTP (governance.evaluation.over_http), each distinct question
        once: p50/p95 of what the client waited and of each part the response's Server-Timing names."""
        from governance.evaluation.over_http import agent_token, ask_all, web_server
        from governance.evaluation.retrieval import p50_p95, recall_of
        from governance.services.principal import token_revoke

        distinct = list({(q.scope, q.question): q for q in questions}.values())
        token, token_id = agent_token(root)
        try:
            with web_server() as url:
                timings, ranked, connections = ask_all(url, token, distinct)
        finally:
            token_revoke(token_id=token_id, actor=None, reason="evaluate_retrieval --http finished")
        names = list(dict.fromkeys(n for t in timings for n in t))
        split = {n: p50_p95([t[n] for t in timings if n in t]) for n in names}
        recall = recall_of(distinct, ranked)
        self.stdout.write(
            f"\n/api/v1/recall over HTTP (full, k=10; {len(distinct)} distinct questions, one kept-alive "
            f"connection: {connections} opened; a gunicorn gthread worker, DEBUG off), p50/p95 ms:"
        )
        order = ["http", "app", "access", "service", "embed", "embed_wait", "after_embedding"]
        derived = ["web_server_and_socket", "middleware_auth_rendering", "http_minus_embed"]
        stages = [n for n in names if n not in order + derived]
        for n in [*order, *stages, *derived]:
            if n in split:
                self.stdout.write(f"  {n:26} {split[n]['p50']}/{split[n]['p95']}")
        embed, total = split.get("embed", {}).get("p50"), split["http"]["p50"]
        if embed is not None:
            verdict = "met" if total <= embed + 10 else "not met"
            self.stdout.write(
                f"  goal http p50 <= embed p50 + 10 ms: {total} vs {round(embed + 10, 1)} ({verdict})"
            )
        in_process = results["strategies"].get("full", {}).get("all", {}).get("recall@10")
        self.stdout.write(
            f"  recall@10 over HTTP {recall['recall@10']} (in process, all questions: {in_process})"
        )
        return {"questions": len(distinct), "connections": connections, "split_ms": split, "all": recall}
