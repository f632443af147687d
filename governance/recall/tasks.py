"""Celery tasks of the read path (listed in CELERY_IMPORTS so every worker registers them)."""

from __future__ import annotations

from celery import shared_task
from django.utils.dateparse import parse_datetime

from governance.models import ReinforcementEvent, Turn
from governance.runtime.retries import RETRY
from governance.services.memory import memory_reinforce

RECALL_WEIGHT = 0.3  # a use counts less than a reviewer's boost (0.5)


@shared_task(**RETRY)
def reinforce_used_memories(*, turn_id: int | None, memory_ids: list[int], at: str) -> int:
    """Reinforce what a turn used. Idempotent per turn: memories already reinforced for it are skipped."""
    if turn_id is not None:
        if not Turn.objects.filter(pk=turn_id).exists():
            return 0
        done = set(ReinforcementEvent.objects.filter(turn_id=turn_id).values_list("memory_id", flat=True))
        memory_ids = [m for m in memory_ids if m not in done]
    if not memory_ids:
        return 0
    return memory_reinforce(
        memory_ids=memory_ids,
        weight=RECALL_WEIGHT,
        reason=ReinforcementEvent.Reason.RECALL,
        actor=None,
        at=parse_datetime(at),
        turn_id=turn_id,
    )
