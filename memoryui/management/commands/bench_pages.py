"""Server-side time of each dashboard page with a big workspace (default 100k memories in `bench`).

    python manage.py bench_pages [--memories 100000] [--vectors 10000] [--repeat 20]

Each page is requested in-process through the whole Django stack (middleware, session, selectors,
template) as the bench owner (sees the whole workspace) and, for the list pages, as a reviewer of one
project; the first request is reported apart (cold caches), then p50/p95/max of the next ones.
The data is written once with COPY and reused by later runs. Run it on a database of its own, e.g.
DATABASE_URL=postgresql://…/memory_bench, so the 100k rows do not land in your development data."""

from __future__ import annotations

import statistics
import time
from datetime import timedelta
from urllib.parse import quote

from django.core.management.base import BaseCommand
from django.db import connection
from django.test import Client
from django.utils import timezone

from benchmarks.stats import percentile
from governance.models import AuditEvent, Memory, Turn
from governance.selectors.review import encode_cursor
from memoryui.management.bench_seed import WORKSPACE, ensure_bench

GOAL_MS = 300.0


class Command(BaseCommand):
    help = "Time every dashboard page (p50/p95, server-side) with a big bench workspace."

    def add_arguments(self, parser):
        parser.add_argument("--memories", type=int, default=100_000)
        parser.add_argument("--vectors", type=int, default=10_000,
                            help="how many of the memories get a (random) embedding; pages never read them")
        parser.add_argument("--repeat", type=int, default=20)
        parser.add_argument("--seed", type=int, default=7)

    def handle(self, *args, memories, vectors, repeat, seed, **options):
        started = time.perf_counter()
        info = ensure_bench(memories=memories, vectors=vectors, seed=seed, log=self.stdout.write)
        self.stdout.write(f"data ready in {time.perf_counter() - started:.1f} s "
                          f"({Memory.objects.filter(scope__workspace__slug=WORKSPACE).count()} memories in '{WORKSPACE}')")
        owner = self._client(info["owner"].user)
        reviewer = self._client(info["reviewer"].user)
        pages = self._pages()
        self.stdout.write(f"\n{'page':<34} {'who':<9} {'first':>8} {'p50':>8} {'p95':>8} {'max':>8} {'queries':>8}")
        worst = 0.0
        for label, url, who, method in pages:
            client = owner if who == "owner" else reviewer
            first, times, queries, status = self._time(client, url, method, repeat)
            worst = max(worst, percentile(times, 0.95))
            flag = "" if status < 400 else f"  (HTTP {status})"
            self.stdout.write(
                f"{label:<34} {who:<9} {first:8.1f} {statistics.median(times):8.1f} "
                f"{percentile(times, 0.95):8.1f} {max(times):8.1f} {queries:8d}{flag}"
            )
        verdict = "meets" if worst < GOAL_MS else "MISSES"
        self.stdout.write(f"\nworst p95: {worst:.1f} ms — {verdict} the {GOAL_MS:.0f} ms goal (times in ms, "
                          f"{repeat} requests per page after the first)")

    def _client(self, user) -> Client:
        client = Client(HTTP_HOST="localhost")
        client.force_login(user)
        client.cookies["tz"] = "Europe/Berlin"
        return client

    def _pages(self) -> list[tuple[str, str, str, str]]:
        ws = f"scope={WORKSPACE}"
        keyed = Memory.objects.filter(scope__workspace__slug=WORKSPACE, key__isnull=False, status="active").order_by("-pk").first()
        turn = Turn.objects.filter(scope__workspace__slug=WORKSPACE).order_by("-pk").first()
        today = timezone.localdate()
        week_ago = today - timedelta(days=7)
        # a keyset cursor halfway down the workspace's audit log: a deep page costs what the first does
        ids = AuditEvent.objects.filter(scope_path__startswith=WORKSPACE).order_by("pk").values_list("pk", flat=True)
        deep_audit = ids[ids.count() // 2] if ids.exists() else 1
        # The last item of the review queue's first page: its cursor opens page 2.
        page_end = Memory.objects.filter(scope__workspace__slug=WORKSPACE, status="proposed").order_by(
            "created_at", "pk")[59]
        pages = [
            ("overview", f"/?{ws}", "owner", "get"),
            ("overview: activation histogram", f"/charts/activation.json?{ws}", "owner", "get"),
            ("memories", f"/memories/?{ws}", "owner", "get"),
            ("memories: filtered", f"/memories/?{ws}&status=active&kind=semantic&tier=long", "owner", "get"),
            ("memories: text search", f"/memories/?{ws}&q=invoice+refund", "owner", "get"),
            ("memories: page 1000", f"/memories/?{ws}&page=1000", "owner", "get"),
            ("memories: cold only", f"/memories/?{ws}&cold=cold", "owner", "get"),
            ("memories", "/memories/", "reviewer", "get"),
            ("memory page", f"/memories/{keyed.pk}/", "owner", "get"),
            ("memory: activation curve", f"/memories/{keyed.pk}/activation.json", "owner", "get"),
            ("timeline", f"/timeline/?{ws}", "owner", "get"),
            ("timeline: data (30 days, top 12)", f"/timeline/data.json?{ws}&days=30&top=12", "owner", "get"),
            ("graph", f"/graph/?{ws}", "owner", "get"),
            ("graph: data (2000 newest edges)", f"/graph/data.json?{ws}", "owner", "get"),
            ("graph: data, one project", f"/graph/data.json?scope={WORKSPACE}/p0", "reviewer", "get"),
            ("turns", f"/turns/?{ws}", "owner", "get"),
            ("turn page", f"/turns/{turn.pk}/", "owner", "get"),
            ("review queue", f"/review/?scope={WORKSPACE}/p0", "reviewer", "get"),
            ("review queue, whole workspace", f"/review/?{ws}", "owner", "get"),
            ("governance: grants", f"/governance/grants/?{ws}", "owner", "get"),
            ("governance: audit", f"/governance/audit/?{ws}", "owner", "get"),
            ("governance: propagation", f"/governance/propagation/?{ws}", "owner", "get"),
            ("governance: audit filtered, a week", f"/governance/audit/?{ws}&action=memory.record&from={week_ago}&to={today}", "owner", "get"),
            ("governance: audit by actor, deep page", f"/governance/audit/?{ws}&actor=system&before={deep_audit}", "owner", "get"),
            ("review queue: newest, kind filter", f"/review/?{ws}&sort=newest&kind=semantic", "owner", "get"),
            ("review queue: page 2 (keyset)", f"/review/?{ws}&after={quote(encode_cursor(page_end))}", "owner", "get"),
            ("review: similar in force (JSON)", f"/review/{page_end.pk}/similar.json", "owner", "get"),
            ("governance: chain verification", "/governance/verify/", "owner", "get"),
            ("evaluation", "/evaluation/", "owner", "get"),
        ]
        return pages

    def _time(self, client: Client, url: str, method: str, repeat: int):
        def once():
            start = time.perf_counter()
            response = getattr(client, method)(url)
            return (time.perf_counter() - start) * 1000, response.status_code

        first, status = once()
        times = []
        count = [0]

        def counter(execute, sql, params, many, context):
            count[0] += 1
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counter):
            ms, status = once()
        times.append(ms)
        for _ in range(repeat - 1):
            ms, status = once()
            times.append(ms)
        return first, times, count[0], status
