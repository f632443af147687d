"""Operational figures read from the database: outbox lag and embedding backlog. Each is one bounded
query (an index range scan or a counted LIMIT), cheap enough to run on every readiness probe and scrape."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Min
from django.utils import timezone

from governance.embedding.base import embedder_class
from governance.models import Outbox
from governance.propagation import needs_embedding


def outbox_lag_seconds() -> float:
    """Age in seconds of the oldest pending outbox row, 0.0 when none is pending (the `outbox_pending`
    partial index answers it with one index entry)."""
    oldest = Outbox.objects.filter(state=Outbox.State.PENDING).aggregate(oldest=Min("created_at"))["oldest"]
    if oldest is None:
        return 0.0
    return max(0.0, (timezone.now() - oldest).total_seconds())


def embedding_backlog_queryset():
    """Memories that need a vector from the configured embedder: not purged, in a status that is embedded,
    and with no vector, a vector of an older text or one from another model."""
    return needs_embedding(embedder_class(settings.EMBEDDING_BACKEND).name)


def embedding_backlog(*, cap: int) -> int:
    """How many memories need a vector, counted up to `cap` (a LIMIT keeps a huge backlog from costing a
    full count on every probe); a result equal to `cap` means "at least cap"."""
    return embedding_backlog_queryset().values("pk")[:cap].count()
