"""Redis off the answer path (docs/operations.md, "When Redis or the database fails").

Redis carries the Celery messages, the throttle counts and a few caches; PostgreSQL holds every write and
its outbox row. So while Redis is away a request does without it: a committed write leaves its message to
the reconciler, a read skips the cache, the throttle counts in the process. Each of those parts keeps a
`Breaker`: after a failure it stops asking Redis for `DEGRADED_RETRY_SECONDS`, so a dead or silent Redis
costs one request its timeouts, not every request; then the next request tries again, and a success
closes it. Each failure is logged and counted (`memory_redis_errors_total`), and the state of each part of
this process is a gauge (`memory_degraded`) and a check of /readyz."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from django.conf import settings
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from governance.runtime.metrics import DEGRADED, PUBLISH_DEFERRED, REDIS_ERRORS

logger = logging.getLogger(__name__)

# Redis (or the broker on it) could not be reached or did not answer in time. Not every RedisError: a
# bad command or a wrong type is a bug and must surface.
REDIS_DOWN = (RedisConnectionError, RedisTimeoutError, BrokerError, ConnectionError, TimeoutError)


class Breaker:
    """One part's view of Redis in this process: `closed` (use Redis) or `open` since a failure (do
    without it until `retry_at`). Thread-safe; the transitions are logged once, not per request."""

    def __init__(self, part: str) -> None:
        self.part = part
        self._lock = threading.Lock()
        self.since: float | None = None  # wall clock of the first failure of this outage
        self.retry_at = 0.0  # monotonic

    @property
    def degraded(self) -> bool:
        return self.since is not None

    def should_try(self) -> bool:
        """Whether to ask Redis now: always when closed, once per retry interval when open."""
        return self.since is None or time.monotonic() >= self.retry_at

    def failed(self, exc: BaseException) -> None:
        REDIS_ERRORS.labels(use=self.part).inc()
        with self._lock:
            self.retry_at = time.monotonic() + settings.DEGRADED_RETRY_SECONDS
            opened = self.since is None
            if opened:
                self.since = time.time()
        if opened:
            DEGRADED.labels(part=self.part).set(1)
            logger.warning(
                "redis unavailable for %s (%s): doing without it, retrying every %.1f s",
                self.part,
                exc.__class__.__name__,
                settings.DEGRADED_RETRY_SECONDS,
            )

    def succeeded(self) -> None:
        if self.since is None:
            return
        with self._lock:
            since, self.since = self.since, None
        if since is not None:
            DEGRADED.labels(part=self.part).set(0)
            logger.warning("redis back for %s after %.1f s", self.part, time.time() - since)

    def state(self) -> dict:
        if self.since is None:
            return {"state": "ok"}
        return {
            "state": "degraded",
            "since": datetime.fromtimestamp(self.since, tz=UTC).isoformat(),
        }

    def reset(self) -> None:
        """Back to closed (tests)."""
        self.succeeded()
        self.retry_at = 0.0


THROTTLE = Breaker("throttle")
CACHE = Breaker("cache")
BROKER = Breaker("publish")
BREAKERS = (THROTTLE, CACHE, BROKER)


def cache_get(key: str, default=None):
    """A cached value a read can do without: `default` while Redis is away."""
    from django.core.cache import cache

    if not CACHE.should_try():
        return default
    try:
        value = cache.get(key, default)
    except REDIS_DOWN as exc:
        CACHE.failed(exc)
        return default
    CACHE.succeeded()
    return value


def cache_set(key: str, value, timeout: float | None) -> None:
    """Store a value a read can do without; nothing while Redis is away."""
    from django.core.cache import cache

    if not CACHE.should_try():
        return
    try:
        cache.set(key, value, timeout)
    except REDIS_DOWN as exc:
        CACHE.failed(exc)
        return
    CACHE.succeeded()


def publish(send: Callable[[], object], *, what: str) -> bool:
    """Send a Celery message whose work the reconciler finds again if it is lost (an outbox row, a
    webhook delivery, a reinforcement); whether it was sent. The broker's own retries are bounded
    (settings, "Celery"); while it is known to be down the message is not even tried. Never raises: the
    request that committed the work answers whatever happens here."""
    if not BROKER.should_try():
        PUBLISH_DEFERRED.inc()
        return False
    try:
        send()
    except REDIS_DOWN as exc:
        BROKER.failed(exc)
        PUBLISH_DEFERRED.inc()
        logger.warning("could not queue %s (broker unavailable); the reconciler will", what)
        return False
    except Exception:  # noqa: BLE001 - anything else is logged with its trace; the commit stands
        PUBLISH_DEFERRED.inc()
        logger.warning("could not queue %s; the reconciler will", what, exc_info=True)
        return False
    BROKER.succeeded()
    return True


for _breaker in BREAKERS:  # every part shows in /metrics from the start, at 0
    DEGRADED.labels(part=_breaker.part).set(0)
