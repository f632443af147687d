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
    return memory_record(item=MemoryInput(scope=scope, kind="episodic", text=text, source_kind="user"), actor=agent)


def test_a_failed_batch_gives_its_claim_back_and_the_retry_embeds_the_rows(db, project_scope, agent, monkeypatch):
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
