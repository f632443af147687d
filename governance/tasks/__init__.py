"""Celery tasks of maintenance (retention, promotions, summaries, vector indexes) and the worker heartbeat.

The propagation tasks (deliveries, embeddings, the reconciler) live in governance/propagation/tasks.py
under their old names `governance.tasks.<name>`; they are imported here so that `from governance.tasks
import ...` keeps working and every worker that loads this module registers them."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready

from governance.evaluation.runs import run_retrieval_evaluation
from governance.propagation.reconcile import repair_derived_drift
from governance.propagation.tasks import (
    deliver_webhook,
    dispatch_outbox,
    embed_memories,
    embed_outbox,
    propagate_outbox,
    reconcile,
)
from governance.runtime import heartbeat
from governance.runtime.retries import RETRY, TRANSIENT

__all__ = [
    "RETRY",
    "TRANSIENT",
    "apply_retention",
    "deliver_webhook",
    "dispatch_outbox",
    "embed_memories",
    "embed_outbox",
    "maintain_vector_indexes",
    "propagate_outbox",
    "prune_idempotency_keys",
    "prune_turns",
    "rebuild_stale_summaries",
    "reconcile",
    "repair_derived_drift",
    "run_retrieval_evaluation",
    "scan_promotions",
    "worker_heartbeat",
]

logger = logging.getLogger(__name__)


@shared_task(**RETRY)
def apply_retention() -> dict:
    """Run every enabled retention policy (beat)."""
    from governance.services.retention import retention_apply_all

    return retention_apply_all()


@shared_task(**RETRY)
def prune_turns() -> dict:
    """Archive and delete the stored turns every enabled policy's turn limits let go (beat)."""
    from governance.services.turn_retention import turns_prune_all

    return turns_prune_all()


@shared_task(**RETRY)
def prune_idempotency_keys() -> int:
    """Delete the expired idempotency keys of API writes and their stored answers (beat)."""
    from governance.services.idempotency import keys_prune

    return keys_prune()


@shared_task(**RETRY)
def scan_promotions() -> int:
    """Turn repeated, consistent candidates into promotion proposals (beat)."""
    from governance.models import Memory, Scope, Status
    from governance.services.memory.promotion import PROMOTABLE_KINDS, promotion_scan

    scope_ids = set(
        Memory.objects.filter(status=Status.CANDIDATE, kind__in=PROMOTABLE_KINDS).values_list(
            "scope_id", flat=True
        )
    )
    return sum(len(promotion_scan(scope=scope)) for scope in Scope.objects.filter(pk__in=scope_ids))


@shared_task(**RETRY)
def rebuild_stale_summaries() -> int:
    from governance.services.summary import rebuild_stale_summaries as rebuild

    return rebuild()


@shared_task(**RETRY)
def maintain_vector_indexes() -> dict:
    """Give every big scope its own HNSW index and drop the ones no longer wanted (beat; see
    governance/recall/vector_index.py). Builds run CONCURRENTLY: writes go on meanwhile."""
    from governance.recall import vector_index

    report = vector_index.maintain()
    if report["built"] or report["dropped"] or report["dropped_invalid"]:
        logger.info(
            "vector indexes: built %s, dropped %s, dropped invalid %s",
            report["built"],
            report["dropped"],
            report["dropped_invalid"],
        )
    return {k: v for k, v in report.items() if k != "ms"} | {
        "ms": {str(k): v for k, v in report["ms"].items()}
    }


@shared_task(ignore_result=True)
def worker_heartbeat() -> None:
    """Beat queues this every HEARTBEAT_EVERY_SECONDS: that a worker ran it proves a worker takes tasks
    from the broker (readiness reads the age, /readyz)."""
    heartbeat.record_heartbeat()


@worker_ready.connect
def _heartbeat_on_start(**_kwargs) -> None:
    # A worker that just started is alive before beat's next tick.
    try:
        heartbeat.record_heartbeat()
    except TRANSIENT:  # Redis not there yet: the periodic task records it later
        logger.warning("worker heartbeat could not be recorded at start")
