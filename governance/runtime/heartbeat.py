"""The worker heartbeat: a Redis key holding the time a Celery worker last ran the heartbeat task (beat
queues it every HEARTBEAT_EVERY_SECONDS) or last started. Readiness reads its age."""

from __future__ import annotations

import time

from django.core.cache import cache

HEARTBEAT_KEY = "ops:worker-heartbeat"
# Outlives many missed beats, so an old heartbeat reads as "old", not as "never seen".
HEARTBEAT_TTL_SECONDS = 24 * 3600


def record_heartbeat(now: float | None = None) -> float:
    """Store the current time (epoch seconds) as the latest worker heartbeat and return it."""
    stamp = time.time() if now is None else now
    cache.set(HEARTBEAT_KEY, stamp, timeout=HEARTBEAT_TTL_SECONDS)
    return stamp


def heartbeat_age_seconds() -> float | None:
    """Seconds since the last worker heartbeat, or None when no worker has ever recorded one."""
    stamp = cache.get(HEARTBEAT_KEY)
    if stamp is None:
        return None
    return max(0.0, time.time() - float(stamp))
