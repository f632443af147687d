"""`manage.py bench_import`: is importing conversations limited by the embedder alone (issue 13)?

For short turns (~150 characters, LoCoMo-like) and long ones (~1,000 characters, LongMemEval-like), all
generated here (conversation-like sentences, no downloads), it measures on the same texts:

1. the configured embedder on its own: texts/s in the pipeline's batches (EMBEDDING_BATCH_SIZE texts,
   EMBEDDING_BATCH_CHARS characters), before and after the
   import (the mean of the two is the reference, so a change of machine load in between shows);
2. `import_conversations` of the same turns as a file, end to end (parse, write, extract candidates,
   embed), with a real Celery worker on both queues running beside it (`--no-worker` leaves it out),
   as in a deployment: the worker receives every chunk's embedding delivery and must find nothing to do;

and prints turns/s of the import, the embedder's texts/s and their ratio (goal ≥ 0.90), plus how many
texts the embedder was given per stored memory (1.00 = every text embedded exactly once). Everything it
wrote (scopes under `bench-import`, memories, outbox rows) is deleted at the end; audit events stay.
Run it on a quiet machine: the figures are only as good as the CPU is idle.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from io import StringIO

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from governance.embedding import get_embedder
from governance.models import Memory, Outbox, Scope
from governance.propagation import embedding_batches

NAMES = [
    "Caroline",
    "Melanie",
    "Jon",
    "Gina",
    "Audrey",
    "Andrew",
    "Nate",
    "Joanna",
    "Tim",
    "John",
    "Maria",
    "Dave",
]
OPENERS = [
    "Hey {other}!",
    "Hi {other}, good to hear from you.",
    "Oh wow, {other}, that sounds amazing.",
    "Thanks for asking, {other}.",
    "Ha, that's so you, {other}.",
    "Long time no see, {other}!",
]
EVENTS = [
    "I went to a pottery class last weekend and made a lopsided bowl that I secretly love",
    "we finally took the kids camping by the lake, and it rained on the second night",
    "my sister got the job at the animal shelter she'd been hoping for since March",
    "I started volunteering at the community garden on Saturday mornings",
    "our band played its first gig at the café downtown and about forty people came",
    "I signed up for a half marathon in October, so the training has started",
    "the new puppy chewed through my running shoes on the very first day",
    "I've been reading a book about the history of the Silk Road before bed",
    "we repainted the living room a soft green and it feels so much calmer now",
    "my grandmother taught me her lentil soup recipe over a video call",
    "I got back from a conference in Lisbon where I gave my first talk",
    "work has been hectic because we are moving the whole team to a new office",
]
FEELINGS = [
    "It honestly made my week.",
    "I'm still a bit nervous about it, to be fair.",
    "It reminded me how much I need time outdoors.",
    "I didn't expect it to mean so much to me.",
    "It was exhausting but totally worth it.",
    "I can't stop thinking about it.",
]
DETAILS = [
    "The instructor said the trick is to keep your hands wet and to go slower than feels natural.",
    "We cooked on a tiny stove, played cards by torchlight and watched the stars when the clouds cleared.",
    "She had been volunteering there for two years, so everyone already knew how good she is with the dogs.",
    "Mostly I pull weeds and water the tomatoes, but last week they let me plan the new herb beds.",
    "We practised every Thursday for three months, and the drummer still came in late on the second song.",
    "I run four times a week now, with one long run on Sundays that gets a little longer every time.",
    "He looked so guilty afterwards that I couldn't even be angry, so now the shoes live on a high shelf.",
    "It goes from the Han dynasty to the Mongols, and every chapter follows a different merchant or monk.",
    "It took two weekends and far too many coffee breaks, but the light in the afternoon is beautiful now.",
    "The secret is cumin toasted in the pan first and a squeeze of lemon right before serving.",
    "I practised in the hotel room the night before, and people asked good questions at the end.",
    "Half of my desk is in boxes and the other half is covered in cables nobody can identify.",
]
QUESTIONS = [
    "How was your week?",
    "Have you tried anything new lately?",
    "What are you up to this weekend?",
    "Did you ever finish that project you told me about?",
    "How are the kids doing?",
]


def short_turn(rng: random.Random, speaker: str, other: str) -> str:
    """About 150 characters: an opener and one event, sometimes a question back."""
    text = f"{rng.choice(OPENERS).format(other=other)} {rng.choice(EVENTS).capitalize()}."
    if len(text) < 130:
        text += f" {rng.choice(QUESTIONS)}"
    return text


def long_turn(rng: random.Random, speaker: str, other: str) -> str:
    """About 1,000 characters: several events told with detail and feeling."""
    parts = [rng.choice(OPENERS).format(other=other)]
    while sum(len(p) + 1 for p in parts) < 950:
        parts += [f"{rng.choice(EVENTS).capitalize()}.", rng.choice(DETAILS), rng.choice(FEELINGS)]
    return " ".join(parts)


def conversation(kind: str, n: int, scope: str, seed: int) -> list[dict]:
    """n turns of two people talking, in the import_conversations format (a `(turn i)` keeps texts unique)."""
    rng = random.Random(seed)
    make = short_turn if kind == "short" else long_turn
    a, b = rng.sample(NAMES, 2)
    lines = []
    for i in range(n):
        speaker, other = (a, b) if i % 2 == 0 else (b, a)
        lines.append(
            {
                "scope": scope,
                "session": f"session-{i // 40 + 1}",
                "at": f"2026-0{1 + i // 4000}-{1 + (i // 150) % 28:02d}T{(i // 60) % 24:02d}:{i % 60:02d}:00Z",
                "role": "user" if i % 2 == 0 else "assistant",
                "speaker": speaker,
                "content": f"{make(rng, speaker, other)} (turn {i})",
                "ref": f"t{i}",
            }
        )
    return lines


class Command(BaseCommand):
    help = "Import turns/s against the embedder's own texts/s on the same texts, short and long turns."

    def add_arguments(self, parser):
        parser.add_argument("--short", type=int, default=240, help="short turns (~150 chars) to import")
        parser.add_argument("--long", type=int, default=48, help="long turns (~1,000 chars) to import")
        parser.add_argument("--no-worker", action="store_true", help="import without a Celery worker running")
        parser.add_argument("--json", action="store_true", help="print one JSON object at the end")

    def handle(self, *args, **opts):
        if opts["short"] < 0 or opts["long"] < 0 or opts["short"] + opts["long"] == 0:
            raise CommandError("--short and --long are numbers of turns, at least one of them positive.")
        embedder = get_embedder()
        embedder.embed_memories(["warm-up"])
        run = f"bench-import/r{int(time.time())}"
        self._started = timezone.now()
        worker = None
        results = {
            "embedder": embedder.name,
            "batch_size": settings.EMBEDDING_BATCH_SIZE,
            "batch_chars": settings.EMBEDDING_BATCH_CHARS,
            "worker": not opts["no_worker"],
            "cpus": os.cpu_count(),
        }
        try:
            worker = None if opts["no_worker"] else self._start_worker(run)
            for kind in ("short", "long"):
                if opts[kind]:
                    results[kind] = self._bench(kind, opts[kind], f"{run}/{kind}", embedder)
        finally:
            if worker is not None:
                worker.send_signal(signal.SIGTERM)
                try:
                    worker.wait(60)
                except subprocess.TimeoutExpired:
                    worker.kill()
            self._cleanup(run)
        results["load_avg_1m_end"] = os.getloadavg()[0]
        if opts["json"]:
            self.stdout.write(json.dumps(results))

    # --- one length class --------------------------------------------------------------------------------

    def _standalone(self, embedder, texts: list[str]) -> float:
        """The embedder alone, in the batches the pipeline makes of these texts (embedding_batches)."""
        batches = embedding_batches(
            list(enumerate(map(len, texts))), settings.EMBEDDING_BATCH_SIZE, settings.EMBEDDING_BATCH_CHARS
        )
        started = time.perf_counter()
        for batch in batches:
            embedder.embed_memories([texts[i] for i in batch])
        return len(texts) / (time.perf_counter() - started)

    def _bench(self, kind: str, n: int, scope: str, embedder) -> dict:
        lines = conversation(kind, n, scope, seed=13 if kind == "short" else 31)
        texts = [line["content"] for line in lines]
        chars = sum(len(t) for t in texts) / len(texts)
        load_before = os.getloadavg()[0]
        before = self._standalone(embedder, texts)

        seen: Counter[str] = Counter()
        real = embedder.embed_memories
        lock = threading.Lock()

        busy = [0.0]

        def counting(batch):
            with lock:
                seen.update(batch)
            t = time.perf_counter()
            try:
                return real(batch)
            finally:
                busy[0] += time.perf_counter() - t

        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8", delete=False) as handle:
            handle.write("\n".join(json.dumps(line) for line in lines))
        embedder.embed_memories = counting  # counts this process's calls; the worker's are counted below
        try:
            cpu_before = self._cpu()
            started = time.perf_counter()
            call_command("import_conversations", handle.name, stdout=StringIO(), stderr=self.stderr)
            seconds = time.perf_counter() - started
            cpu = {who: round(after - cpu_before.get(who, 0.0), 2) for who, after in self._cpu().items()}
        finally:
            del embedder.embed_memories
            os.unlink(handle.name)
        after = self._standalone(embedder, texts)
        memories = Memory.objects.filter(scope__path__startswith=scope)
        stored = memories.count()
        # The worker had every chunk's embedding delivery; give it time to take (and skip) the last ones.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and memories.filter(embedding__isnull=True).exists():
            time.sleep(0.2)
        by_worker = memories.exclude(embedding_hash="").count() - sum(seen.values())
        reference = (before + after) / 2
        out = {
            "turns": n,
            "avg_chars": round(chars),
            "memories": stored,
            "import_s": round(seconds, 2),
            "import_turns_per_s": round(n / seconds, 2),
            "embedder_texts_per_s_before": round(before, 2),
            "embedder_texts_per_s_after": round(after, 2),
            "ratio": round(n / seconds / reference, 3),
            "embedder_busy_s": round(busy[0], 2),
            "embedder_busy_share": round(busy[0] / seconds, 3),
            "texts_embedded_by_import": sum(seen.values()),
            "texts_embedded_by_worker": max(by_worker, 0),
            "cpu_s": cpu,
            "load_avg_1m_before": load_before,
            "load_avg_1m_after": os.getloadavg()[0],
        }
        w = self.stdout.write
        w(f"{kind} turns (n={n}, ~{out['avg_chars']} chars, {stored} memories incl. candidates):")
        w(
            f"  embedder alone:  {before:.1f} / {after:.1f} texts/s (before / after the import; "
            f"{embedder.name}, batches of ≤ {settings.EMBEDDING_BATCH_SIZE} texts / "
            f"{settings.EMBEDDING_BATCH_CHARS} chars)"
        )
        w(
            f"  import:          {out['import_turns_per_s']:.1f} turns/s ({seconds:.1f} s, worker "
            f"{'running' if self._worker_running else 'not running'})"
        )
        w(
            f"  ratio:           {out['ratio']:.2f} of the embedder's own throughput (goal ≥ 0.90); the embedder "
            f"was busy {busy[0]:.1f} s of the import's {seconds:.1f} s ({100 * out['embedder_busy_share']:.0f}%)"
        )
        w(
            f"  CPU during it:   {cpu['import']:.1f} s this process (the embedder's {busy[0]:.1f} s of wall time on "
            f"{os.cpu_count()} cores included), {cpu.get('worker', 0.0):.1f} s the worker, {cpu['database']:.1f} s the "
            f"database server's processes on this machine; {os.cpu_count()} cores × {seconds:.1f} s = "
            f"{os.cpu_count() * seconds:.1f} s available"
        )
        w(
            f"  texts embedded:  {out['texts_embedded_by_import']} by the import, {out['texts_embedded_by_worker']} "
            f"by the worker, for {stored} memories; 1-min load average {load_before:.1f} → {out['load_avg_1m_after']:.1f}"
        )
        return out

    def _cpu(self) -> dict[str, float]:
        """CPU seconds used so far by this process, the benchmark's worker, and the PostgreSQL processes
        on this machine (all of them: run it on a quiet machine), to say where the cores went."""
        out = {"import": sum(os.times()[:2]), "database": 0.0}
        worker = getattr(self, "_worker", None)
        if worker is not None:
            out["worker"] = _proc_cpu(worker.pid)
        for pid in filter(str.isdigit, os.listdir("/proc")) if os.path.isdir("/proc") else []:
            try:
                with open(f"/proc/{pid}/comm", encoding="ascii") as comm:
                    if comm.read().strip() in ("postgres", "postmaster"):
                        out["database"] += _proc_cpu(int(pid))
            except OSError:
                continue  # gone meanwhile
        return out

    # --- worker and cleanup ------------------------------------------------------------------------------

    _worker_running = False

    def _start_worker(self, run: str) -> subprocess.Popen:
        from governance.services.memory import MemoryInput, memory_record_batch
        from governance.services.scope import scope_ensure

        env = os.environ.copy()
        env.update(
            DATABASE_URL=settings.DATABASE_URL,
            REDIS_URL=settings.REDIS_URL,
            PYTHONUNBUFFERED="1",
            DJANGO_SETTINGS_MODULE=os.environ.get("DJANGO_SETTINGS_MODULE", "memoryui.settings.dev"),
        )
        queues = ",".join(q.name for q in settings.CELERY_TASK_QUEUES)
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "memoryui",
                "worker",
                "--pool=threads",
                "--concurrency=2",
                f"--queues={queues}",
                "--loglevel=WARNING",
                "--hostname=bench-import@%h",
                "--without-mingle",
                "--without-gossip",
            ],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.stdout.write(f"starting a Celery worker on the queues {queues} and waiting for its first vector")
        try:
            scope = scope_ensure(path=f"{run}/warm", actor=None)
            warm = memory_record_batch(
                items=[MemoryInput(scope=scope, kind="episodic", text="warm-up", source_kind="user")],
                actor=None,
            )
            deadline = time.monotonic() + 180
            while not Memory.objects.filter(pk=warm[0].pk, embedding__isnull=False).exists():
                if time.monotonic() > deadline or worker.poll() is not None:
                    raise CommandError(
                        "the benchmark's Celery worker did not embed a warm-up memory within 180 s"
                    )
                time.sleep(0.2)
        except BaseException:  # never leave the worker behind (e.g. an unmigrated database, Ctrl-C)
            worker.kill()
            worker.wait(30)
            raise
        self._worker_running = True
        self._worker = worker
        return worker

    def _cleanup(self, run: str) -> None:
        scopes = Scope.objects.filter(path__startswith=run)
        ids = set(Memory.objects.filter(scope__in=scopes).values_list("pk", flat=True))
        ours = [
            pk
            for pk, payload in Outbox.objects.filter(
                created_at__gte=self._started, topic="memory.created"
            ).values_list("pk", "payload")
            if set(payload.get("memory_ids") or []) & ids
        ]
        with transaction.atomic():
            Outbox.objects.filter(pk__in=ours).delete()
            Outbox.objects.filter(memory_id__in=ids).delete()
            Memory.objects.filter(pk__in=ids).delete()
        for scope in sorted(scopes, key=lambda s: -s.path.count("/")):
            scope.grants.all().delete()
            scope.delete()


def _proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads) from /proc/<pid>/stat; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
