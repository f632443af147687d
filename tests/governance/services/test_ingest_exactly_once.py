"""Ingestion limited by the embedder only (issue 13): every text goes through the embedder once, whether the
importer or the embedding worker takes it; embedding work is routed to its own queue, which the test
worker and `runstack` consume; the importer prints its progress and an ETA."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from io import StringIO

import pytest
from celery.signals import task_prerun
from django.conf import settings
from django.core.management import call_command
from django.db import transaction

from governance import propagation
from governance.embedding import get_embedder
from governance.models import Memory, OutboxDelivery
from governance.services.memory import MemoryInput, memory_record, memory_record_batch
from tests.conftest import wait_for

pytestmark = pytest.mark.slow

# Plain statements the rule extractor finds nothing in, so every memory is one turn.
SENTENCES = [
    "We walked along the harbour after dinner and watched the ferries come in.",
    "My sister finally moved to Lisbon last spring, she loves the light there.",
    "The sourdough came out flat again, I think the starter needs more feeding.",
    "Our team shipped the new billing page on Thursday after two weeks of testing.",
    "I started reading a novel about a lighthouse keeper on a remote island.",
    "The kids spent the whole afternoon building a cardboard castle in the garden.",
    "Traffic on the ring road was terrible this morning because of the roadworks.",
    "We tried the new ramen place near the station and the broth was excellent.",
]


@pytest.fixture
def counted_embedder():
    """The process's real embedder, with every text it is given counted (the worker threads share it)."""
    embedder = get_embedder()
    real = embedder.embed_memories
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def counting(texts):
        with lock:
            seen.update(texts)
        return real(texts)

    embedder.embed_memories = counting
    yield seen
    del embedder.embed_memories


def own_turns(embedded: Counter[str]) -> Counter[str]:
    """The turns themselves among the embedder's inputs: a conversation turn is embedded below the turn
    before it in its session (models/lexical.py, in_context), so its own text is the input's last line."""
    out: Counter[str] = Counter()
    for text, n in embedded.items():
        out[text.rsplit("\n", 1)[-1]] += n
    return out


def conversation_file(tmp_path, n: int, scope: str = "imp/once") -> str:
    lines = [
        {
            "scope": scope,
            "session": "s1",
            "at": f"2026-03-01T10:{i // 60:02d}:{i % 60:02d}Z",
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"{SENTENCES[i % len(SENTENCES)]} (turn {i})",
            "ref": str(i),
        }
        for i in range(n)
    ]
    path = tmp_path / "conv.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    return str(path)


def test_import_beside_a_running_worker_embeds_every_text_exactly_once(
    celery_worker, tmp_path, counted_embedder
):
    out = StringIO()
    call_command("import_conversations", conversation_file(tmp_path, 24), stdout=out, stderr=StringIO())

    ids = list(Memory.objects.values_list("pk", flat=True))
    assert len(ids) == 24
    # The worker has received every embedding delivery of the import, and found nothing left to embed.
    wait_for(lambda: not OutboxDelivery.objects.filter(store="embedding").exclude(state="done").exists())
    assert Memory.objects.filter(embedding__isnull=False).count() == 24
    assert own_turns(counted_embedder) == Counter(Memory.objects.values_list("text", flat=True))


def test_rows_held_by_an_importer_are_skipped_by_every_other_caller(
    db, project_scope, agent, counted_embedder
):
    items = [
        MemoryInput(scope=project_scope, kind="episodic", text=t, source_kind="user") for t in SENTENCES[:4]
    ]
    with transaction.atomic():
        ids = [m.pk for m in memory_record_batch(items=items, actor=agent)]
        propagation.hold_rows(ids)

    from governance.management.commands.embedding_status import embedding_backlog

    assert embedding_backlog(get_embedder().name)["claimed"] == 4
    assert propagation.embed_memories(ids) == 0  # a worker's delivery: nothing is its to embed
    assert propagation.claim_rows(ids, model_name=get_embedder().name) == []
    assert not counted_embedder

    assert propagation.embed_memories(ids, claimed=True) == 4  # the holder embeds them
    assert counted_embedder == Counter(SENTENCES[:4])
    assert not Memory.objects.filter(pk__in=ids, embedding_claimed_until__isnull=False).exists()
    assert embedding_backlog(get_embedder().name)["claimed"] == 0


def test_two_claimers_of_the_same_rows_get_disjoint_shares(db, project_scope, agent):
    items = [MemoryInput(scope=project_scope, kind="episodic", text=t, source_kind="user") for t in SENTENCES]
    ids = [m.pk for m in memory_record_batch(items=items, actor=agent)]
    name = get_embedder().name

    first = propagation.claim_rows(ids[:5], model_name=name)
    second = propagation.claim_rows(ids, model_name=name)

    assert first == ids[:5]
    assert second == ids[5:]


def test_the_reconciler_leaves_rows_someone_is_embedding_alone(db, project_scope, agent):
    from datetime import timedelta

    from django.utils import timezone

    from governance.tasks import reconcile

    items = [
        MemoryInput(scope=project_scope, kind="episodic", text=t, source_kind="user") for t in SENTENCES[:2]
    ]
    held, loose = [m.pk for m in memory_record_batch(items=items, actor=agent)]
    Memory.objects.filter(pk__in=[held, loose]).update(created_at=timezone.now() - timedelta(hours=1))
    propagation.hold_rows([held])

    assert reconcile(stale_after_seconds=0)["reembed"] == 1  # only the row no one holds


def test_embedding_work_runs_on_the_embedding_queue_and_the_rest_on_the_propagation_one(
    celery_worker, project_scope, agent
):
    ran: list[tuple[str, str]] = []

    def record(sender=None, task=None, **kwargs):
        ran.append((task.name, (task.request.delivery_info or {}).get("routing_key")))

    task_prerun.connect(record, weak=False)
    try:
        memory = memory_record(
            item=MemoryInput(scope=project_scope, kind="episodic", text=SENTENCES[0], source_kind="user"),
            actor=agent,
        )
        wait_for(lambda: Memory.objects.filter(pk=memory.pk, embedding__isnull=False).exists())
        wait_for(lambda: ("governance.tasks.propagate_outbox", settings.PROPAGATION_QUEUE) in ran)
    finally:
        task_prerun.disconnect(record)
    assert ("governance.tasks.embed_outbox", settings.EMBEDDING_QUEUE) in ran
    assert not [
        name for name, queue in ran if name.startswith("governance.tasks.embed") and queue != "embedding"
    ]


def test_runstack_starts_a_worker_for_every_queue():
    from devtools.management.commands.runstack import worker_commands

    commands = worker_commands("python", port=8000, concurrency=2)
    consumed = set()
    for argv in commands.values():
        consumed |= {
            q for arg in argv if arg.startswith("--queues=") for q in arg.split("=", 1)[1].split(",")
        }
    assert (
        consumed
        == {q.name for q in settings.CELERY_TASK_QUEUES}
        == {"celery", "propagation", "embedding", "reinforcement", "maintenance", "webhooks"}
    )
    assert "--concurrency=1" in commands["embedder"]
    assert (
        "--queues=webhooks" in commands["webhooks"]
    )  # a slow receiver never holds a worker that carries forgets
    assert (
        "--queues=embedding" in commands["embedder"]
    )  # embedding alone: it never shares a worker with a forget


def test_import_prints_progress_with_rate_and_eta(db, tmp_path, monkeypatch):
    from governance.management.commands import import_conversations

    monkeypatch.setattr(import_conversations, "BATCH_TURNS", 2)
    out = StringIO()
    call_command(
        "import_conversations",
        conversation_file(tmp_path, 5, scope="imp/progress"),
        stdout=out,
        stderr=StringIO(),
    )

    lines = [line for line in out.getvalue().splitlines() if line.startswith("  ")]
    pattern = (
        r"  (\d+)/5 turns \((\d+)%\), (\d+) memories created, (\d+) embedded, [\d.]+ turns/s, ETA \d+:\d\d"
    )
    progress = [re.fullmatch(pattern, line) for line in lines]
    assert all(progress), lines
    assert [(int(m[1]), int(m[2])) for m in progress] == [(2, 40), (4, 80), (5, 100)]
    # Inside the test's transaction the importer embeds inline, once the last batch is handed over.
    assert [int(m[4]) for m in progress] == [0, 0, 0]
    assert lines[-1].endswith("ETA 0:00")
    assert Memory.objects.filter(scope__path="imp/progress", embedding__isnull=False).count() == 5


def test_the_import_keeps_reporting_while_the_embedder_finishes_what_was_written(
    transactional_db, tmp_path, settings, monkeypatch
):
    """The writes run a few batches ahead of the embedder (EmbedAhead's queue): after the last chunk is
    written the importer still prints how many memories hold their vector until the embedder is done,
    instead of going quiet at "100%" for what can be minutes of long turns."""
    from governance.services import conversation_import

    settings.EMBEDDING_BATCH_SIZE = 4
    monkeypatch.setattr(conversation_import, "EMBEDDING_PROGRESS_SECONDS", 0.05)
    embedder = get_embedder()
    real = embedder.embed_memories
    reported = threading.Event()

    def held(texts):  # the embedder is busy until the importer has said so
        assert reported.wait(timeout=60), "the importer never reported while the embedder was busy"
        return real(texts)

    class Out(StringIO):
        def write(self, text):
            if "embedded of those written" in text:
                reported.set()
            return super().write(text)

    embedder.embed_memories = held
    out = Out()
    try:
        call_command(
            "import_conversations",
            conversation_file(tmp_path, 8, scope="imp/tail"),
            stdout=out,
            stderr=StringIO(),
        )
    finally:
        del embedder.embed_memories

    lines = out.getvalue().splitlines()
    written = [line for line in lines if " turns (" in line]
    tail = [line for line in lines if "embedded of those written" in line]
    assert written[-1].startswith("  8/8 turns (100%), 8 memories created, 0 embedded"), lines
    assert tail and lines.index(tail[0]) > lines.index(written[-1]), lines
    assert re.fullmatch(
        r"  0/8 memories \(0%\), embedded of those written, [\d.]+ memories/s, ETA \S+", tail[0]
    ), tail
    assert Memory.objects.filter(scope__path="imp/tail", embedding__isnull=False).count() == 8


def test_eta_is_written_in_minutes_or_hours():
    from governance.management.commands.import_conversations import format_eta, progress_line

    assert format_eta(75) == "1:15"
    assert format_eta(3 * 3600 + 125) == "3:02:05"
    assert progress_line(10, 40, 12, 5.0) == "  10/40 turns (25%), 12 memories created, 2.0 turns/s, ETA 0:15"


def test_imported_turns_are_found_by_keyword_at_once_and_the_packet_says_their_vectors_are_pending(
    db, tmp_path
):
    from governance.recall.packet import assemble_context

    call_command(
        "import_conversations",
        conversation_file(tmp_path, 3, scope="imp/pending"),
        "--no-embed",
        stdout=StringIO(),
        stderr=StringIO(),
    )

    before = assemble_context(
        principal=None, scope="imp/pending", query="ferries harbour", budget_tokens=800, store=False
    )
    assert before["trace"]["pending_vectors"] == 3
    assert "ferries" in before["text"]  # the keyword index has the turn already

    propagation.embed_memories(list(Memory.objects.values_list("pk", flat=True)))
    after = assemble_context(
        principal=None, scope="imp/pending", query="ferries harbour", budget_tokens=800, store=False
    )
    assert after["trace"]["pending_vectors"] == 0


def test_embedding_batches_are_bounded_by_count_and_characters():
    from governance.propagation import embedding_batches

    rows = [(1, 100), (2, 100), (3, 100), (4, 5000), (5, 100), (6, 100)]
    assert embedding_batches(rows, size=2, max_chars=10_000) == [[1, 2], [3, 4], [5, 6]]
    assert embedding_batches(rows, size=10, max_chars=1000) == [[1, 2, 3], [4], [5, 6]]
    assert embedding_batches([(7, 50_000)], size=10, max_chars=1000) == [[7]]  # one text always goes


def test_an_import_of_many_short_sessions_reaches_the_embedder_in_full_batches(
    db, tmp_path, counted_embedder, settings
):
    settings.EMBEDDING_BATCH_SIZE = 8
    calls: list[int] = []
    embedder = get_embedder()
    counting = embedder.embed_memories

    def recording(texts):
        calls.append(len(texts))
        return counting(texts)

    embedder.embed_memories = recording
    lines = [
        {
            "scope": "imp/sessions",
            "session": f"s{i // 3}",
            "at": f"2026-03-01T10:00:{i:02d}Z",
            "role": "user",
            "content": f"{SENTENCES[i % len(SENTENCES)]} (turn {i})",
            "ref": str(i),
        }
        for i in range(20)
    ]
    path = tmp_path / "sessions.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")

    call_command("import_conversations", str(path), stdout=StringIO(), stderr=StringIO())

    assert calls == [8, 8, 4]  # sessions of 3 turns, embedded in batches that span them
    assert Memory.objects.filter(scope__path="imp/sessions", embedding__isnull=False).count() == 20
    assert sum(counted_embedder.values()) == 20


def test_an_import_that_only_writes_is_embedded_once_by_the_embedding_queue(
    celery_worker, tmp_path, counted_embedder
):
    call_command(
        "import_conversations",
        conversation_file(tmp_path, 12, scope="imp/queue"),
        "--no-embed",
        stdout=StringIO(),
        stderr=StringIO(),
    )

    wait_for(lambda: Memory.objects.filter(scope__path="imp/queue", embedding__isnull=False).count() == 12)
    wait_for(lambda: not OutboxDelivery.objects.filter(store="embedding").exclude(state="done").exists())
    assert own_turns(counted_embedder) == Counter(
        Memory.objects.filter(scope__path="imp/queue").values_list("text", flat=True)
    )


def test_import_embeds_on_a_thread_of_its_own_while_it_writes(transactional_db, tmp_path, settings):
    """Outside a transaction the importer hands full batches to a background thread (EmbedAhead), so the
    write of the next chunk overlaps the embedder; every text is still embedded exactly once."""
    settings.EMBEDDING_BATCH_SIZE = 8
    embedder = get_embedder()
    real = embedder.embed_memories
    threads: list[str] = []
    seen: Counter[str] = Counter()

    def recording(texts):
        threads.append(threading.current_thread().name)
        seen.update(texts)
        return real(texts)

    embedder.embed_memories = recording
    try:
        call_command(
            "import_conversations",
            conversation_file(tmp_path, 20, scope="imp/ahead"),
            stdout=StringIO(),
            stderr=StringIO(),
        )
    finally:
        del embedder.embed_memories

    assert threads and set(threads) == {"embed-ahead"}
    assert Memory.objects.filter(scope__path="imp/ahead", embedding__isnull=False).count() == 20
    assert own_turns(seen) == Counter(
        Memory.objects.filter(scope__path="imp/ahead").values_list("text", flat=True)
    )
    assert not Memory.objects.filter(scope__path="imp/ahead", embedding_claimed_until__isnull=False).exists()


def test_a_failing_embedder_fails_the_import_keeps_the_turns_and_gives_their_claims_back(
    transactional_db, tmp_path, settings
):
    settings.EMBEDDING_BATCH_SIZE = 4
    embedder = get_embedder()

    def broken(texts):
        raise RuntimeError("embedder crashed")

    embedder.embed_memories = broken
    rows = Memory.objects.filter(scope__path="imp/broken")
    try:
        with pytest.raises(RuntimeError, match="embedder crashed"):
            call_command(
                "import_conversations",
                conversation_file(tmp_path, 16, scope="imp/broken"),
                stdout=StringIO(),
                stderr=StringIO(),
            )
        assert rows.count() >= 4  # what was written before the error stays, searchable by keyword
        # No row is left held by the dead import: the embedding queue may take every one of them now. (When
        # a test worker runs in this process, it may take them and fail on the same embedder: it gives them
        # back too. Held by the import, they would stay claimed for the whole lease, EMBEDDING_CLAIM_SECONDS.)
        wait_for(lambda: not rows.filter(embedding_claimed_until__isnull=False).exists(), timeout=30)
        assert not rows.filter(embedding__isnull=False).exists()
    finally:
        del embedder.embed_memories
