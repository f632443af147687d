"""A failed embedding batch gives its claim back, so a retry embeds the rows at once (found under load:
a dropped database connection mid-batch left rows without a vector for the whole claim lease)."""

from __future__ import annotations

import numpy as np
import pytest

from governance import propagation
from governance.models import Memory
from governance.propagation import embedding as embedding_store
from governance.services.memory import MemoryInput, memory_record


class FailingEmbedder:
    """An embedder whose server went away mid-batch (the real backends raise ConnectionError then)."""

    name = "failing/test"
    dimensions = 384

    def embed_memories(self, texts):
        raise ConnectionError("embedding server went away")


class WorkingEmbedder(FailingEmbedder):
    name = "working/test"

    def embed_memories(self, texts):
        return np.ones((len(texts), 384), dtype=np.float32)


def record(scope, agent, text):
    return memory_record(
        item=MemoryInput(scope=scope, kind="episodic", text=text, source_kind="user"), actor=agent
    )


def test_a_failed_batch_gives_its_claim_back_and_the_retry_embeds_the_rows(
    db, project_scope, agent, monkeypatch
):
    memory = record(project_scope, agent, "The staging database moves to the new cluster on Monday")
    monkeypatch.setattr(embedding_store, "get_embedder", FailingEmbedder)
    with pytest.raises(ConnectionError):
        propagation.embed_memories([memory.pk])
    memory.refresh_from_db()
    assert memory.embedding_claimed_until is None  # not held for EMBEDDING_CLAIM_SECONDS
    assert memory.embedding is None

    monkeypatch.setattr(embedding_store, "get_embedder", WorkingEmbedder)
    assert propagation.embed_memories([memory.pk]) == 1
    assert Memory.objects.get(pk=memory.pk).embedding_model == "working/test"


def test_rows_another_caller_holds_stay_held_when_a_batch_fails(db, project_scope, agent, monkeypatch):
    mine = record(project_scope, agent, "The quarterly report is due on the fifth")
    theirs = record(project_scope, agent, "The office closes early on Friday")
    propagation.hold_rows([theirs.pk])
    monkeypatch.setattr(embedding_store, "get_embedder", FailingEmbedder)
    with pytest.raises(ConnectionError):
        propagation.embed_memories([mine.pk, theirs.pk])
    assert Memory.objects.get(pk=theirs.pk).embedding_claimed_until is not None  # still the other caller's
    assert Memory.objects.get(pk=mine.pk).embedding_claimed_until is None


def test_an_embedding_delivery_fills_its_batch_with_other_waiting_rows_each_embedded_once(
    db, project_scope, agent
):
    from governance.models import Outbox

    first = record(project_scope, agent, "The design review is on Tuesday afternoon")
    waiting = record(project_scope, agent, "The deploy freeze starts on the twentieth")
    held = record(project_scope, agent, "The new intern starts next week")
    propagation.hold_rows([held.pk])  # someone else is embedding this one: it is not taken along
    outbox = Outbox.objects.filter(memory=first, topic="memory.created").get()

    propagation.HANDLERS["embedding"](outbox)

    rows = {m.pk: m for m in Memory.objects.filter(pk__in=[first.pk, waiting.pk, held.pk])}
    assert rows[first.pk].embedding is not None and rows[waiting.pk].embedding is not None
    assert rows[held.pk].embedding is None and rows[held.pk].embedding_claimed_until is not None
    # The waiting row's own delivery then has nothing left to embed.
    assert propagation.embed_memories([waiting.pk]) == 0


def test_waiting_rows_skips_purged_claimed_and_already_embedded_memories(db, project_scope, agent):
    rows = [record(project_scope, agent, f"Waiting row number {i} about the budget") for i in range(4)]
    propagation.hold_rows([rows[1].pk])
    Memory.objects.filter(pk=rows[2].pk).update(purged_at=rows[2].created_at, status="forgotten")
    assert embedding_store.waiting_rows(exclude=[rows[0].pk], limit=10) == [rows[3].pk]
    assert embedding_store.waiting_rows(exclude=[], limit=0) == []
