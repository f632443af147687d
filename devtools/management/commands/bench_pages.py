"""Server-side time of each dashboard page with a big workspace (default 100k memories and 10k stored
turns in `bench`).

    python manage.py bench_pages [--memories 100000] [--vectors 10000] [--turns 10000] [--repeat 20]
                                 [--reuse] [--only memories]

Each page is requested in-process through the whole Django stack (middleware, session, selectors,
template) as the bench owner (sees the whole workspace) and, for the list pages, as a reviewer of one
project; the first request is reported apart (cold caches), then p50/p95/max of the next ones.
The data is written once with COPY and reused by later runs (--reuse: use the workspace as it is, never
add to it). The embeddings are deterministic random unit vectors of the model's dimension written
directly, not the embedder's: the benchmark measures the pages' queries, not the embedder (the search by
meaning still embeds its query with the configured embedder). Run it on a database of its own, e.g.
DATABASE_URL=postgresql://…/memory_bench, so the 100k rows do not land in your development data.

    python manage.py bench_pages --browser [--url http://127.0.0.1:8000] [--latency 60] [--mbit 9]

measures instead what a browser fetches to open each main page, cold and warm, and the time to its first
chart under a throttled link (devtools/benchmarks/page_weight.py), on the demo workspace, signed in as
demo. Without --url it serves the dashboard as `make run` does: collectstatic, then gunicorn with
runstack's command line, on a free port, stopped at the end."""

from __future__ import annotations

import statistics
import time
from contextlib import contextmanager
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.test import Client
from django.utils import timezone

from devtools.benchmarks import page_weight
from devtools.benchmarks.stats import percentile
from devtools.management.bench_seed import WORKSPACE, ensure_bench
from governance.models import AuditEvent, Memory, Turn

GOAL_MS = 300.0


class Command(BaseCommand):
    help = "Time every dashboard page (p50/p95, server-side) with a big bench workspace."

    def add_arguments(self, parser):
        parser.add_argument("--memories", type=int, default=100_000)
        parser.add_argument(
            "--vectors",
            type=int,
            default=10_000,
            help="how many of the memories get a (random) embedding; pages never read them",
        )
        parser.add_argument(
            "--turns", type=int, default=10_000, help="stored turns written with the memories"
        )
        parser.add_argument("--repeat", type=int, default=20)
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument(
            "--reuse",
            action="store_true",
            help="use the bench workspace as it is (fail if there is none), never add to it",
        )
        parser.add_argument("--only", default="", help="time only the pages whose label contains this")
        browser = parser.add_argument_group("--browser: page weight and time to the first chart")
        browser.add_argument("--browser", action="store_true", help="measure in Chromium (see above)")
        browser.add_argument("--url", default="", help="a running dashboard (default: start one)")
        browser.add_argument("--user", default="demo")
        browser.add_argument("--password", default="demo")
        browser.add_argument("--latency", type=float, default=page_weight.LATENCY_MS, help="ms")
        browser.add_argument("--mbit", type=float, default=page_weight.MBIT_PER_S, help="Mbit/s")

    def handle(self, *args, memories, vectors, turns, repeat, seed, reuse, only, **options):
        if options["browser"]:
            return self._browser(only=only, **options)
        started = time.perf_counter()
        if reuse:
            info = existing_bench()
        else:
            info = ensure_bench(
                memories=memories, vectors=vectors, seed=seed, log=self.stdout.write, turns=turns
            )
        self.stdout.write(
            f"data ready in {time.perf_counter() - started:.1f} s "
            f"({Memory.objects.filter(scope__workspace__slug=WORKSPACE).count()} memories and "
            f"{Turn.objects.filter(scope__workspace__slug=WORKSPACE).count()} turns in '{WORKSPACE}'; "
            "embeddings are random unit vectors written directly, not the embedder's)"
        )
        owner = self._client(info["owner"].user)
        reviewer = self._client(info["reviewer"].user)
        pages = [p for p in page_set(info["owner"]) if only in p[0]]
        self.stdout.write(
            f"\n{'page':<34} {'who':<9} {'first':>8} {'p50':>8} {'p95':>8} {'max':>8} {'queries':>8}"
        )
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
        self.stdout.write(
            f"\nworst p95: {worst:.1f} ms — {verdict} the {GOAL_MS:.0f} ms goal (times in ms, "
            f"{repeat} requests per page after the first)"
        )

    def _browser(self, *, only, url, user, password, latency, mbit, **options) -> None:
        from devtools import demo

        if page_weight.chromium_path() is None:
            raise CommandError("Debian's chromium is not installed (/usr/bin/chromium).")
        demo.load_demo()
        demo.ensure_demo_user()
        if not Turn.objects.filter(scope__workspace__slug=demo.WORKSPACE).exists():
            demo.store_demo_turns()
        pages = [p for p in main_pages(demo.WORKSPACE) if only in p[0]]
        with serving(url, log=self.stdout.write) as base:
            results = page_weight.measure_pages(
                base, pages, username=user, password=password, latency_ms=latency, mbit=mbit
            )
        self.stdout.write(page_weight.format_table(results, latency_ms=latency, mbit=mbit))

    def _client(self, user) -> Client:
        client = Client(HTTP_HOST="localhost")
        client.force_login(user)
        client.cookies["tz"] = "Europe/Berlin"
        return client

    def _time(self, client: Client, url: str, method: str, repeat: int):
        return measure(client, url, method, repeat)


def main_pages(workspace: str) -> list[tuple[str, str]]:
    """(label, path) of the pages a person opens every day, for the browser measurement."""
    memory = (
        Memory.objects.filter(scope__workspace__slug=workspace, key__isnull=False, status="active")
        .order_by("pk")
        .first()
    ) or Memory.objects.filter(scope__workspace__slug=workspace).order_by("pk").first()
    pages = [
        ("overview", "/"),
        ("memory list", "/memories/"),
        ("timeline", "/timeline/"),
        ("graph", "/graph/"),
        ("turns", "/turns/"),
        ("review", "/review/"),
        ("evaluation", "/evaluation/"),
    ]
    if memory is not None:
        pages.insert(2, ("a memory's page", f"/memories/{memory.pk}/"))
    return pages


@contextmanager
def serving(url: str, *, log):
    """The dashboard at `url`, or one started as `make run` serves it (collectstatic, then runstack's
    gunicorn on a free port), stopped when done."""
    if url:
        yield url.rstrip("/")
        return
    import socket
    import subprocess
    import sys
    import urllib.request

    from devtools.management.commands.runstack import child_env, web_command
    from devtools.static import collect_static

    log("collecting static files, starting gunicorn as runstack does")
    collect_static()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        web_command(sys.executable, host="127.0.0.1", port=port),
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/accounts/login/", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise CommandError("gunicorn did not start (run it by hand to see why).") from None
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(30)


def existing_bench() -> dict:
    """The bench workspace's principals, for --reuse (a CommandError when there is no workspace yet)."""
    from devtools.management.bench_seed import OWNER, REVIEWER
    from governance.models import Principal

    owner = Principal.objects.filter(name=OWNER).first()
    reviewer = Principal.objects.filter(name=REVIEWER).first()
    if (
        owner is None
        or reviewer is None
        or not Memory.objects.filter(scope__workspace__slug=WORKSPACE).exists()
    ):
        raise CommandError("No bench workspace to reuse: run bench_pages once without --reuse.")
    return {"owner": owner, "reviewer": reviewer}


def deep_cursor(owner, pages: int = 20) -> str:
    """The `after` cursor of page `pages` + 1 of the whole workspace, newest first (a deep page)."""
    from governance.selectors import dashboard as sel

    f = sel.MemoryFilters()
    cursor = ""
    for _ in range(pages):
        cursor = sel.memory_list_page(owner, None, f, after=cursor).next_cursor or cursor
    return cursor


def page_set(owner) -> list[tuple[str, str, str, str]]:
    """(label, url, who, method) of every page the benchmark requests; tests/memoryui run it small."""
    from urllib.parse import quote

    from governance.selectors import dashboard as sel
    from governance.selectors.dashboard.memory_list import SORTS

    ws = f"scope={WORKSPACE}"
    recent = (timezone.localdate() - timedelta(days=30)).isoformat()
    keyed = (
        Memory.objects.filter(scope__workspace__slug=WORKSPACE, key__isnull=False, status="active")
        .order_by("-pk")
        .first()
    )
    turn = Turn.objects.filter(scope__workspace__slug=WORKSPACE).order_by("-pk").first()
    today = timezone.localdate()
    week_ago = today - timedelta(days=7)
    # a keyset cursor halfway down the workspace's audit log: a deep page costs what the first does
    ids = (
        AuditEvent.objects.filter(scope_path__startswith=WORKSPACE)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    deep_audit = sel.audit_cursor(ids[ids.count() // 2] if ids.exists() else 1)
    pages = [
        ("overview", f"/?{ws}", "owner", "get"),
        ("overview: activation histogram", f"/charts/activation.json?{ws}", "owner", "get"),
        ("memories", f"/memories/?{ws}", "owner", "get"),
        ("memories: filtered", f"/memories/?{ws}&status=active&kind=semantic&tier=long", "owner", "get"),
        ("memories: text search", f"/memories/?{ws}&q=invoice+refund", "owner", "get"),
        ("memories: page 21 (cursor)", f"/memories/?{ws}&after={quote(deep_cursor(owner))}", "owner", "get"),
        *[
            (f"memories: by {sort} {d}", f"/memories/?{ws}&sort={sort}&dir={d}", "owner", "get")
            for sort in SORTS
            for d in ("desc", "asc")
        ],
        ("memories: written in 30 days", f"/memories/?{ws}&from={recent}", "owner", "get"),
        (
            "memories: key prefix",
            f"/memories/?{ws}&key=fact_&key_match=prefix&sort=key&dir=asc",
            "owner",
            "get",
        ),
        ("memories: session", f"/memories/?{ws}&session=s42", "owner", "get"),
        ("memories: source ref prefix", f"/memories/?{ws}&ref=bench:1*", "owner", "get"),
        (
            "memories: filters combined",
            f"/memories/?{ws}&status=active&kind=semantic&from={recent}&sort=confidence&dir=desc",
            "owner",
            "get",
        ),
        ("memories: by meaning", f"/memories/?{ws}&mode=meaning&q=invoice+refund+deadline", "owner", "get"),
        ("memories: by meaning", "/memories/?mode=meaning&q=invoice+refund+deadline", "reviewer", "get"),
        ("scope picker", "/scopes.json?q=bench/p1", "owner", "get"),
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
        *turn_search_pages(ws, turn),
        ("turn page", f"/turns/{turn.pk}/", "owner", "get"),
        ("review queue", f"/review/?scope={WORKSPACE}/p0", "reviewer", "get"),
        ("review queue, whole workspace", f"/review/?{ws}", "owner", "get"),
        ("review queue: newest, kind filter", f"/review/?{ws}&sort=newest&kind=semantic", "owner", "get"),
        *review_pages(ws),
        ("governance: grants", f"/governance/grants/?{ws}", "owner", "get"),
        ("governance: audit", f"/governance/audit/?{ws}", "owner", "get"),
        ("governance: propagation", f"/governance/propagation/?{ws}", "owner", "get"),
        (
            "governance: audit filtered, a week",
            f"/governance/audit/?{ws}&action=memory.record&from={week_ago}&to={today}",
            "owner",
            "get",
        ),
        (
            "governance: audit by actor, deep page",
            f"/governance/audit/?{ws}&actor=system&before={quote(deep_audit)}",
            "owner",
            "get",
        ),
        ("governance: chain verification", "/governance/verify/", "owner", "get"),
        ("evaluation", "/evaluation/", "owner", "get"),
    ]
    return pages


def turn_search_pages(ws: str, turn) -> list[tuple[str, str, str, str]]:
    """The turn search (words of the query, a memory used, filters combined, a deep keyset page) and a
    turn's "why not…?" (from the stored packet, by replaying the turn, the picker)."""
    from urllib.parse import quote

    from governance.models import TurnMemory
    from governance.selectors import dashboard as sel

    turns = Turn.objects.filter(scope__workspace__slug=WORKSPACE)
    word = (turn.query.split() or ["bench"])[1 if len(turn.query.split()) > 1 else 0].strip(".").lower()
    cited = TurnMemory.objects.filter(turn=turn).order_by("slot").values_list("memory_id", "included")
    used = next((m for m, included in cited if included), None)
    skipped = next((m for m, included in cited if not included), used)
    other = (
        Memory.objects.filter(scope_id=turn.scope_id, status="active")
        .exclude(pk__in=[m for m, _ in cited])
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    )
    middle = turns.order_by("pk").values_list("pk", flat=True)[turns.count() // 2] if turns.exists() else 1
    since = (timezone.localdate() - timedelta(days=3)).isoformat()
    pages = [
        ("turns: search by a word", f"/turns/?{ws}&q={word}", "owner", "get"),
        ("turns: search by a word", f"/turns/?q={word}", "reviewer", "get"),
        ("turns: a memory used", f"/turns/?{ws}&memory={used}&used=used", "owner", "get"),
        (
            "turns: words, session, dates",
            f"/turns/?{ws}&q={word}&session=s7&from={since}&strategy=full",
            "owner",
            "get",
        ),
        (
            "turns: deep page (keyset)",
            f"/turns/?{ws}&before={quote(sel.turn_cursor(middle))}",
            "owner",
            "get",
        ),
        ("turn: why not (stored packet)", f"/turns/{turn.pk}/why-not/?memory={skipped}", "owner", "get"),
        ("turn: why not (picker, words)", f"/turns/{turn.pk}/why-not/?q={word}", "owner", "get"),
    ]
    if other is not None:
        pages.append(
            ("turn: why not (replayed)", f"/turns/{turn.pk}/why-not/?memory={other}", "owner", "get")
        )
    return pages


def review_pages(ws: str) -> list[tuple[str, str, str, str]]:
    """The review queue's second page (by the cursor of the first page's last item) and one proposal's
    similar memories; none when the workspace has fewer than a page of proposals."""
    from urllib.parse import quote

    from governance.selectors.review import encode_cursor

    proposed = Memory.objects.filter(scope__workspace__slug=WORKSPACE, status="proposed").order_by(
        "created_at", "pk"
    )
    page_end = proposed[59:60].first()
    if page_end is None:
        return []
    return [
        (
            "review queue: page 2 (keyset)",
            f"/review/?{ws}&after={quote(encode_cursor(page_end))}",
            "owner",
            "get",
        ),
        ("review: similar in force (JSON)", f"/review/{page_end.pk}/similar.json", "owner", "get"),
    ]


def measure(client: Client, url: str, method: str, repeat: int):
    """(first request's ms, the next `repeat` requests' ms, queries of one warm request, HTTP status)."""

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
