"""`manage.py bench_keyword --scope-prefix longmemeval/ [--copies 5] [--file longmemeval_s.json --format
longmemeval] [--queries 20] [--repeat 3]`: recall's keyword search (governance.recall.search) in one
large scope of real conversation turns.

The turns imported under the prefix (`evaluate_retrieval --file …` imports them) are copied `--copies`
times into one scratch scope, inside a transaction rolled back at the end: nothing stays. There the keyword
search is timed for each question (the file's, or a built-in list of everyday questions), as shipped
(`pruned`: the first search leaves out memories holding one common word alone, search.PRUNE_MAX_COMMON)
and scoring every match (`every match`), back to back, with the term counts apart; and the two lists are
compared, which must be the same. The generated data of bench_context cannot show this: its texts are
rare made-up words, where no word is common."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from unittest.mock import patch

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.utils import timezone

from devtools.benchmarks.stats import percentile
from governance.models import Scope
from governance.recall import search
from governance.recall.eligible import WITH_SUPERSEDED, Eligibility
from governance.services.scope import scope_ensure

QUESTIONS = (
    "What do the kids like?",
    "What did I say about my new car?",
    "How many weddings did I attend this year?",
    "Where did we go hiking last summer?",
    "What is my favorite recipe for dinner?",
    "Which book did you recommend to me?",
    "What time do I usually go to the gym?",
    "What did my sister give me for my birthday?",
)
SCRATCH = "bench-keyword/scope"
LIMIT = 50  # recall's keyword list depth (recall.KEYWORD_CANDIDATES)


class _RolledBack(Exception):
    pass


class Command(BaseCommand):
    help = "Time the keyword search in one large scope of copied real turns (rolled back)."

    def add_arguments(self, parser):
        parser.add_argument("--scope-prefix", required=True, help="copy the turns of the scopes under it")
        parser.add_argument("--copies", type=int, default=5)
        parser.add_argument("--file", help="a conversation file whose questions are asked")
        parser.add_argument("--format", default="longmemeval", choices=("locomo", "longmemeval"))
        parser.add_argument("--queries", type=int, default=20)
        parser.add_argument("--repeat", type=int, default=3)

    def handle(self, *args, **opts):
        questions = self._questions(opts)
        try:
            with transaction.atomic():
                rows = self._copy(opts["scope_prefix"], opts["copies"])
                self._measure(rows, questions, opts["repeat"])
                raise _RolledBack
        except _RolledBack:
            pass
        self.stdout.write("(the scratch scope and its copies were rolled back)")

    def _questions(self, opts) -> list[str]:
        if not opts["file"]:
            return list(QUESTIONS)
        from governance.evaluation.conversations import load

        loaded = load(Path(opts["file"]), opts["format"], prefix=opts["format"])
        seen: list[str] = []
        for q in loaded.questions:
            if q.question and q.question not in seen:
                seen.append(q.question)
        return seen[: opts["queries"]]

    def _copy(self, prefix: str, copies: int) -> int:
        sources = list(Scope.objects.filter(path__startswith=prefix).values_list("id", flat=True))
        if not sources:
            raise CommandError(f"no scope under {prefix!r}: import a conversation file first")
        scope = scope_ensure(path=SCRATCH, actor=None)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'governance_memory'"
                " AND is_generated = 'NEVER' AND identity_generation IS NULL"
                " AND column_name NOT IN ('id', 'scope_id', 'source_ref')"
            )
            columns = ", ".join(c for (c,) in cursor.fetchall())
            started = time.perf_counter()
            for _ in range(copies):
                # source_ref emptied: a turn's ref is unique per session within a scope
                cursor.execute(
                    f"INSERT INTO governance_memory (scope_id, source_ref, {columns})"
                    f" SELECT %s, '', {columns} FROM governance_memory WHERE scope_id = ANY(%s)",
                    [scope.id, sources],
                )
            cursor.execute("ANALYZE governance_memory")
            cursor.execute("SELECT count(*) FROM governance_memory WHERE scope_id = %s", [scope.id])
            rows = int(cursor.fetchone()[0])
        self.stdout.write(
            f"scratch scope: {rows:,} memories ({copies} copies of {len(sources)} scopes under {prefix!r},"
            f" {time.perf_counter() - started:.0f} s)"
        )
        return rows

    def _measure(self, rows: int, questions: list[str], repeat: int) -> None:
        scope_ids = tuple(
            Scope.objects.filter(path__in=["bench-keyword", SCRATCH]).values_list("id", flat=True)
        )
        eligibility = Eligibility(scope_ids=scope_ids, statuses=WITH_SUPERSEDED, at=timezone.now())
        counted: list[float] = []
        real_counts = search.term_counts

        def timed_counts(*args, **kwargs):
            start = time.perf_counter()
            try:
                return real_counts(*args, **kwargs)
            finally:
                counted.append((time.perf_counter() - start) * 1000)

        times: dict[str, list[float]] = {"pruned": [], "every match": []}
        lists: dict[str, dict[str, list]] = {"pruned": {}, "every match": {}}
        with patch.object(search, "term_counts", timed_counts):
            for _ in range(repeat):
                for question in questions:
                    for mode in times:  # back to back, one question at a time
                        prune = search.PRUNE_MAX_COMMON if mode == "pruned" else 0
                        with patch.object(search, "PRUNE_MAX_COMMON", prune):
                            start = time.perf_counter()
                            found = search.keyword_search(eligibility, question, LIMIT)
                            times[mode].append((time.perf_counter() - start) * 1000)
                        lists[mode][question] = found
        self.stdout.write(
            f"{len(questions)} questions x {repeat}, keyword_search, the {LIMIT} best, p50/p95 ms:"
        )
        for mode, values in times.items():
            self.stdout.write(f"  {mode:12s} {percentile(values, 0.5):8.1f} {percentile(values, 0.95):8.1f}")
        self.stdout.write(f"  term counts  {statistics.median(counted):8.1f} (p50, within both)")
        same = lists["pruned"] == lists["every match"]
        self.stdout.write(f"the same lists: {'yes' if same else 'NO'}")
        if not same:
            raise CommandError(
                "the pruned search gave another list: search._without_lone_common_terms is wrong"
            )
