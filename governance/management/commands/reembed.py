"""`manage.py reembed`: bring every stored vector to the current embedder, through the same outbox →
Celery → `embedding` store path as a new memory (so workers anywhere do the work, with the same
idempotent, purge-safe writes).

    --model-changed (default)  memories whose vector is missing, from an older text or another model
    --all                      every vector (e.g. the same model name with new weights)
    --now                      embed in this process instead of queueing (no worker needed)

When the embedder's dimension differs from the database column, the per-scope HNSW indexes are dropped
and the column altered first; every old vector is dropped then (they cannot be cast), so everything is
queued. The indexes come back through `vector_index.maintain` (beat, or at the end of `--now`); search is
exact meanwhile.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from governance import propagation
from governance.embedding import get_embedder
from governance.management.commands.embedding_status import column_dimensions
from governance.models import Memory
from governance.propagation import embeddable, needs_embedding
from governance.recall import vector_index
from governance.services.audit import AuditEntry, audit_record
from governance.services.outbox import outbox_emit


def resize_embedding_column(dimensions: int) -> None:
    """Change vector(n) to vector(dimensions) in one transaction: vectors, passages and vector indexes dropped."""
    dimensions = int(dimensions)
    if not 1 <= dimensions <= 16000:
        raise CommandError(f"{dimensions} is not a dimension pgvector can store.")
    with transaction.atomic(), connection.cursor() as cursor:
        vector_index.drop_all()
        cursor.execute(
            "UPDATE governance_memory SET embedding = NULL, embedding_hash = '', embedding_model = '' "
            "WHERE embedding IS NOT NULL"
        )
        cursor.execute(
            f"ALTER TABLE governance_memory ALTER COLUMN embedding TYPE vector({dimensions}) USING NULL"
        )
        # The passages (the sentences of people's turns, embedded on their own) go with the vectors.
        cursor.execute("DELETE FROM governance_passage")
        cursor.execute(
            f"ALTER TABLE governance_passage ALTER COLUMN embedding TYPE vector({dimensions}) USING NULL"
        )


def memories_to_reembed(model_name: str, *, everything: bool):
    base = embeddable() if everything else needs_embedding(model_name)
    return base.order_by("pk").values_list("pk", flat=True)


def queue_reembed(memory_ids: list[int], *, chunk: int, reason: str) -> int:
    """One outbox row per chunk of ids (each a task for some worker) and one audit event."""
    queued = 0
    with transaction.atomic():
        audit_record(
            actor=None,
            entry=AuditEntry(
                "embedding.reembed",
                "embedding",
                settings.EMBEDDING_BACKEND,
                reason=reason,
                data={"memories": len(memory_ids)},
            ),
        )
        for start in range(0, len(memory_ids), chunk):
            outbox_emit(topic="memory.reembed", payload={"memory_ids": memory_ids[start : start + chunk]})
            queued += 1
    return queued


class Command(BaseCommand):
    help = "Re-embed memories with the current embedder (through the Celery workers, or --now here)."

    def add_arguments(self, parser):
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--all", action="store_true", help="Re-embed every memory.")
        mode.add_argument(
            "--model-changed",
            action="store_true",
            help="Only vectors that are missing, stale or from another model (default).",
        )
        parser.add_argument("--now", action="store_true", help="Embed in this process instead of queueing.")
        parser.add_argument("--chunk", type=int, default=256, help="Memories per queued task.")

    def handle(self, *args, **opts):
        if opts["chunk"] < 1:
            raise CommandError("--chunk is a positive number of memories.")
        try:
            embedder = get_embedder()
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        everything = opts["all"]
        current = column_dimensions()
        if current != embedder.dimensions:
            self.stdout.write(
                f"resizing the vector column from {current} to {embedder.dimensions} dimensions "
                "(the per-scope vector indexes are rebuilt once vectors are back)"
            )
            resize_embedding_column(embedder.dimensions)
        elif everything:
            # Forget which text each vector was made from: the embedding store then recomputes all of them,
            # while recall keeps using the old vectors until each new one lands.
            Memory.objects.filter(purged_at__isnull=True).exclude(embedding_hash="").update(embedding_hash="")
        ids = list(memories_to_reembed(embedder.name, everything=everything))
        if not ids:
            self.stdout.write(f"nothing to re-embed: every vector is current for {embedder.name}")
            return
        if opts["now"]:
            done = 0
            for start in range(0, len(ids), opts["chunk"]):
                done += propagation.embed_memories(ids[start : start + opts["chunk"]])
                self.stdout.write(f"  {done}/{len(ids)}")
            self.stdout.write(f"re-embedded {done} memories with {embedder.name}")
            built = vector_index.maintain()["built"]
            if built:
                self.stdout.write(f"built the vector indexes of {len(built)} scopes")
            return
        tasks = queue_reembed(ids, chunk=opts["chunk"], reason="all" if everything else "model-changed")
        self.stdout.write(
            f"queued {len(ids)} memories in {tasks} tasks for {embedder.name}; "
            "the workers embed them (watch with `manage.py embedding_status`)"
        )
