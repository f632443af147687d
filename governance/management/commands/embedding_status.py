"""`manage.py embedding_status`: how far the stored vectors are from what the current embedder would make.

The backlog is every memory that should carry a vector (not purged, in a status recall may use) but has
none, or has one made from an older text or by another model. The reconciler and `reembed` drain it.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import connection
from django.db.models import Count, F, Q
from django.utils import timezone

from governance.embedding.backends import embedder_class
from governance.models import OutboxDelivery
from governance.propagation import embeddable


def column_dimensions() -> int | None:
    """The dimension of the vector column as it is in the database (not as settings say it should be)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'governance_memory'::regclass "
            "AND attname = 'embedding' AND NOT attisdropped"
        )
        row = cursor.fetchone()
    return row[0] if row and row[0] > 0 else None


def embedding_backlog(model_name: str) -> dict:
    """Counts of memories by embedding state for `model_name`, and vectors held per model."""
    base = embeddable()
    has = Q(embedding__isnull=False)
    counts = base.aggregate(
        total=Count("id"),
        missing=Count("id", filter=Q(embedding__isnull=True)),
        other_model=Count("id", filter=has & ~Q(embedding_model=model_name)),
        stale_text=Count(
            "id", filter=has & Q(embedding_model=model_name) & ~Q(embedding_hash=F("content_hash"))
        ),
        # Claimed by an importer or a worker that is embedding them right now (propagation.claim_rows).
        claimed=Count("id", filter=Q(embedding_claimed_until__gt=timezone.now())),
    )
    counts["backlog"] = counts["missing"] + counts["other_model"] + counts["stale_text"]
    counts["current"] = counts["total"] - counts["backlog"]
    by_model = base.exclude(embedding=None).values("embedding_model").annotate(n=Count("id")).order_by("-n")
    counts["by_model"] = {row["embedding_model"] or "(unnamed)": row["n"] for row in by_model}
    deliveries = OutboxDelivery.objects.filter(store="embedding")
    counts["deliveries_pending"] = deliveries.filter(state=OutboxDelivery.State.PENDING).count()
    counts["deliveries_failed"] = deliveries.filter(state=OutboxDelivery.State.FAILED).count()
    return counts


class Command(BaseCommand):
    help = "Show the embedding backlog: memories without a current vector, by model."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")

    def handle(self, *args, **opts):
        backend = embedder_class(settings.EMBEDDING_BACKEND)
        status = {
            "backend": settings.EMBEDDING_BACKEND,
            "model": backend.name,
            "dimensions": backend.dimensions,
            "column_dimensions": column_dimensions(),
            **embedding_backlog(backend.name),
        }
        if opts["json"]:
            self.stdout.write(json.dumps(status))
            return
        w = self.stdout.write
        w(
            f"embedder:  {status['model']} ({status['dimensions']}-d); column vector({status['column_dimensions']})"
        )
        if status["column_dimensions"] != status["dimensions"]:
            w(self.style.WARNING("  the column does not match the embedder: run `manage.py reembed --all`"))
        w(f"memories that should have a vector: {status['total']}")
        w(f"  current:               {status['current']}")
        w(f"  backlog:               {status['backlog']}")
        w(f"    no vector yet:       {status['missing']}")
        w(f"    made by other model: {status['other_model']}")
        w(f"    made from old text:  {status['stale_text']}")
        w(f"  being embedded now:    {status['claimed']} (claimed by an importer or a worker)")
        for model, n in status["by_model"].items():
            w(f"  vectors by {model}: {n}")
        w(
            f"embedding deliveries pending: {status['deliveries_pending']}, failed: {status['deliveries_failed']}"
        )
