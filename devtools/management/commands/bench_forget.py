"""`manage.py bench_forget`: forget propagation latency, from the hard-forget call to every derived store
done (embedding, keyword, cache, summaries, turns), with ONE worker (solo pool, started here on its own
queue so no other worker on the same Redis takes the tasks), in a `bench/forget` scope holding --memories
memories (100,000) and, for each forgotten memory, --turns stored turns citing it (1,000).

The 100k background memories are fixture data written directly (bulk insert, no audit, no outbox, no
embedding: they are not changes of state to govern, and embedding them would keep the one worker busy for
hours); they are kept between runs. Each sampled memory goes through the services; its turns are clones
of one real packet assembled for it; they are deleted after the sample. Prints p50/p95/max overall and per
store. The figures are only as good as the CPU is idle (the machine is shared).
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
import uuid

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from devtools.benchmarks.stats import percentile
from governance.models import Memory, Outbox, Role, Scope, Turn, TurnMemory
from governance.services.events import event_ingest
from governance.services.memory import MemoryInput, build_memory, memory_forget, memory_record
from governance.services.principal import grant_add, principal_ensure
from governance.services.scope import scope_ensure
from governance.services.summary import summary_build

QUEUE = "bench-forget"
TOPICS = [
    "the Q3 deck",
    "the payment module",
    "the daily report",
    "the brochure",
    "the export job",
    "the refunds service",
    "the onboarding guide",
    "the release notes",
]


class Command(BaseCommand):
    help = "Benchmark hard-forget propagation latency (call → every store done); prints p50/p95."

    def add_arguments(self, parser):
        parser.add_argument("--memories", type=int, default=100_000)
        parser.add_argument("--turns", type=int, default=1000)
        parser.add_argument("--samples", type=int, default=20)
        parser.add_argument("--timeout", type=float, default=120.0)
        parser.add_argument(
            "--from-turn",
            action="store_true",
            help="forget a sentence the extractor read from a relayed user turn, the stored turns citing "
            "that turn too: the forget then also rewrites the turn and every stored packet quoting it",
        )

    def handle(self, *args, **opts):
        if min(opts["memories"], opts["turns"], opts["samples"]) < 1:
            raise CommandError("--memories, --turns and --samples are positive numbers.")
        from memoryui.celery import app

        # Before anything is dispatched from this process: our tasks go to the bench worker's own queue.
        app.conf.task_default_queue = QUEUE
        app.conf.task_routes = {"*": {"queue": QUEUE}}
        scope = scope_ensure(path="bench/forget", actor=None)
        owner = principal_ensure(name="bench-owner", kind="user", actor=None)
        grant_add(principal=owner, scope=scope, role=Role.OWNER, actor=None)
        self._seed(scope, opts["memories"])
        summary_build(scope=scope, actor=None)
        worker = self._start_worker()
        try:
            self._run(scope, owner, opts)
        finally:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(60)
            except subprocess.TimeoutExpired:
                worker.kill()

    def _seed(self, scope: Scope, wanted: int) -> None:
        have = Memory.objects.filter(scope=scope).count()
        if have >= wanted:
            self.stdout.write(f"bench scope {scope.path}: {have} memories already there")
            return
        self.stdout.write(
            f"seeding {wanted - have} memories into {scope.path} (bulk insert, kept for next runs)"
        )
        now = timezone.now()
        kinds = ["episodic", "semantic", "preference", "convention", "episodic"]
        batch = []
        for i in range(have, wanted):
            kind = kinds[i % len(kinds)]
            text = (
                f"Memory {i}: the user {['exported', 'reviewed', 'approved'][i % 3]} {TOPICS[i % len(TOPICS)]} "
                f"(note {uuid.uuid4().hex[:10]})"
            )
            item = MemoryInput(
                scope=scope,
                kind=kind,
                text=text,
                source_kind="user",
                session=f"s{i // 50}",
                status="active" if kind in ("episodic", "semantic") else "candidate",
            )
            batch.append(build_memory(item, None, now))
            if len(batch) == 5000:
                Memory.objects.bulk_create(batch)
                batch = []
        if batch:
            Memory.objects.bulk_create(batch)

    def _start_worker(self) -> subprocess.Popen:
        env = os.environ.copy()
        env.update(
            DATABASE_URL=settings.DATABASE_URL,
            REDIS_URL=settings.REDIS_URL,
            PYTHONUNBUFFERED="1",
            SECRET_KEY=settings.SECRET_KEY,
            DJANGO_SETTINGS_MODULE=os.environ.get("DJANGO_SETTINGS_MODULE", "memoryui.settings.dev"),
        )
        self.stdout.write(f"starting one Celery worker (solo pool) on queue {QUEUE}")
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "memoryui",
                "worker",
                "--pool=solo",
                "-Q",
                QUEUE,
                "--loglevel=WARNING",
                "--hostname=bench-forget@%h",
                "--without-mingle",
                "--without-gossip",
            ],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _wait_outbox(self, ids: list[int], timeout: float, interval: float = 0.01) -> float:
        # 10 ms: finer polling would take CPU from the one worker on a two-core machine and slow what it measures.
        started = time.perf_counter()
        while time.perf_counter() - started < timeout:
            if not Outbox.objects.filter(pk__in=ids, state=Outbox.State.PENDING).exists():
                return time.perf_counter() - started
            time.sleep(interval)
        raise CommandError(f"outbox rows {ids} not done within {timeout:.0f}s (is the worker running?)")

    def _sample(self, scope: Scope, owner, n_turns: int, timeout: float) -> tuple[float, dict[str, float]]:
        from governance.recall.packet import assemble_context

        marker = uuid.uuid4().hex[:12]
        first_row = (Outbox.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1
        if self.from_turn:
            sentence = f"Always use the bench vault code {marker} for the door."
            created = event_ingest(
                scope=scope,
                session=f"bench-{marker}",
                at=None,
                turns=[{"role": "user", "content": f"Thanks. {sentence} See you.", "ref": marker}],
                actor=None,
            )
            target = next(m for m in created if m.text == sentence)
        else:
            target = memory_record(
                item=MemoryInput(
                    scope=scope,
                    kind="semantic",
                    status="active",
                    source_kind="user",
                    text=f"The bench vault code is {marker}",
                ),
                actor=owner,
            )
        result = assemble_context(
            principal=owner,
            scope=scope,
            query=f"bench vault code {marker}",
            budget_tokens=1500,
            session=f"bench-{marker}" if self.from_turn else "",
        )
        template = Turn.objects.get(pk=result["turn_id"])
        if not TurnMemory.objects.filter(turn=template, memory=target).exists() and not self.from_turn:
            raise CommandError("the assembled packet did not cite the sampled memory; cannot measure turns")
        clones = Turn.objects.bulk_create(
            [
                Turn(
                    scope=scope,
                    principal=owner,
                    query=template.query,
                    request=template.request,
                    packet=template.packet,
                    text=template.text,
                    trace=template.trace,
                )
                for _ in range(n_turns - 1)
            ],
            batch_size=1000,
        )
        cited = list(TurnMemory.objects.filter(turn=template).values_list("memory_id", "slot"))
        TurnMemory.objects.bulk_create(
            [TurnMemory(turn=t, memory_id=m, slot=slot) for t in clones for m, slot in cited],
            batch_size=2000,
            ignore_conflicts=True,
        )
        # This sample's earlier rows (embedding the target, reinforcement) are done: the worker is idle.
        ours = list(Outbox.objects.filter(pk__gte=first_row).values_list("pk", flat=True))
        self._wait_outbox(ours, timeout)
        started = time.perf_counter()
        memory_forget(memory_id=target.pk, actor=owner, reason="bench", hard=True)
        self.calls.append(time.perf_counter() - started)
        outbox = Outbox.objects.filter(memory=target, topic="memory.forgotten").latest("pk")
        self._wait_outbox([outbox.pk], timeout)
        total = time.perf_counter() - started
        stores = {d.store: (d.done_at - outbox.created_at).total_seconds() for d in outbox.deliveries.all()}
        redacted = Turn.objects.filter(
            pk__in=[template.pk, *[c.pk for c in clones]], text__contains="[forgotten]"
        ).count()
        if redacted != n_turns:
            raise CommandError(f"only {redacted} of {n_turns} turns were redacted")
        Turn.objects.filter(pk__in=[template.pk, *[c.pk for c in clones]]).delete()
        return total, stores

    def _run(self, scope: Scope, owner, opts) -> None:
        self.from_turn, self.calls = opts["from_turn"], []
        n = Memory.objects.filter(scope=scope).count()
        self.stdout.write(
            f"{n} memories in {scope.path}; {opts['turns']} stored turns cite each forgotten memory"
        )
        self._sample(scope, owner, opts["turns"], timeout=300)  # warm-up: worker start, model load
        totals, per_store = [], {}
        for i in range(opts["samples"]):
            total, stores = self._sample(scope, owner, opts["turns"], opts["timeout"])
            totals.append(total)
            for store, seconds in stores.items():
                per_store.setdefault(store, []).append(seconds)
            self.stdout.write(f"  sample {i + 1}: {total * 1000:.0f} ms")
        self.stdout.write(
            f"forget propagation, call → every store done ({len(totals)} samples, one worker): "
            f"p50 {statistics.median(totals) * 1000:.0f} ms, p95 {percentile(totals, 0.95) * 1000:.0f} ms, "
            f"max {max(totals) * 1000:.0f} ms (goal: p95 < 2000 ms)"
        )
        calls = self.calls[1:]  # after the warm-up
        self.stdout.write(
            f"  the forget call itself{' (a sentence read from a turn)' if self.from_turn else ''}: "
            f"p50 {statistics.median(calls) * 1000:.0f} ms, p95 {percentile(calls, 0.95) * 1000:.0f} ms"
        )
        for store, values in sorted(per_store.items()):
            self.stdout.write(
                f"  {store:<10} done after p50 {statistics.median(values) * 1000:.0f} ms, "
                f"p95 {percentile(values, 0.95) * 1000:.0f} ms"
            )
