"""Stage 6, reinforce: the memories a packet used are reinforced after the response, by a Celery task
queued when the turn's transaction commits (a rolled-back request reinforces nothing).

The message is published from a background thread, not the request's: building and sending a Celery
message costs ~3–5 ms of Python (kombu), which bench_context counted on every /context call. A message
lost with a process that dies in between is one missed reinforcement, never a failed turn."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from django.db import transaction

from governance.recall.tasks import reinforce_used_memories
from governance.runtime import process_pool
from governance.runtime.degraded import publish

logger = logging.getLogger(__name__)


def publisher_pool() -> ThreadPoolExecutor:
    """The one thread per process that publishes reinforcement messages, in order."""
    return process_pool("reinforce-publish", 1)


def queue_reinforcement(*, turn_id: int | None, memory_ids: list[int], at: datetime) -> int:
    if not memory_ids:
        return 0
    ids = sorted(set(memory_ids))

    def send() -> None:
        # Broker down: losing one reinforcement is acceptable, failing the turn is not.
        publish(
            lambda: reinforce_used_memories.delay(turn_id=turn_id, memory_ids=ids, at=at.isoformat()),
            what=f"reinforcement for turn {turn_id}",
        )

    transaction.on_commit(lambda: publisher_pool().submit(send))
    return len(ids)
