"""The one "needs embedding" definition (governance.propagation.needs_embedding) that the embedder, the
reconciler, `reembed`, `embedding_status`, /readyz and /metrics share."""

from __future__ import annotations

import pytest

from governance.models import Memory
from governance.propagation import embed_memories, needs_embedding
from governance.services.memory import MemoryInput, memory_forget, memory_record


def _record(scope, actor, text):
    return memory_record(
        item=MemoryInput(scope=scope, kind="episodic", text=text, source_kind="user", session="s1"),
        actor=actor,
    )


@pytest.mark.django_db
def test_a_memory_needs_embedding_until_embedded_and_again_after_its_vector_is_from_another_model(
    project_scope, agent
):
    from governance.embedding import get_embedder

    model = get_embedder().name
    memory = _record(project_scope, agent, "The client wants PPTX.")
    assert list(needs_embedding(model).values_list("pk", flat=True)) == [memory.pk]
    embed_memories([memory.pk])
    assert not needs_embedding(model).exists()
    Memory.objects.filter(pk=memory.pk).update(embedding_model="some-older-model")
    # For this model it is stale; for the reconciler (any model's vector counts) it is not.
    assert needs_embedding(model).filter(pk=memory.pk).exists()
    assert not needs_embedding(None).filter(pk=memory.pk).exists()
    Memory.objects.filter(pk=memory.pk).update(embedding_hash="stale")
    assert needs_embedding(None).filter(pk=memory.pk).exists()


@pytest.mark.django_db
def test_a_forgotten_memory_never_needs_embedding(project_scope, agent):
    memory = _record(project_scope, agent, "My phone number is 555-0100.")
    assert needs_embedding(None).filter(pk=memory.pk).exists()
    memory_forget(memory_id=memory.pk, actor=None, reason="asked to")
    assert not needs_embedding(None).filter(pk=memory.pk).exists()
    assert not needs_embedding("any", Memory.objects.filter(pk=memory.pk)).exists()
