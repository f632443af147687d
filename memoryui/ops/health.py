"""Liveness (`/healthz`) and readiness (`/readyz`) probes.

A plain view rather than django-health-check's: its answer does not carry a figure per check, and the
probe here must name each check with its state and figure (docs/dependencies.md)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from governance.runtime import degraded
from governance.runtime.heartbeat import heartbeat_age_seconds
from governance.selectors.ops import embedding_backlog, outbox_lag_seconds

logger = logging.getLogger(__name__)

OK, DEGRADED, FAIL = "ok", "degraded", "fail"
NO_HEARTBEAT = "no worker has recorded a heartbeat"
# Redis away is not a reason to take the web process out of service: every request answers without it
# (governance/runtime/degraded.py). The check says so, and the answer stays 200.
WITHOUT_REDIS = "Redis is unreachable; answering without it (throttle per process, no cache, messages left to the reconciler)"
# Checks that read Redis: when it is away they are degraded (with the error's class), not failed.
REDIS_CHECKS = {"redis", "worker_heartbeat"}


@never_cache
@require_GET
def healthz(request):
    """The process answers. Touches no database, Redis or worker, so a slow dependency never gets a
    healthy web process restarted."""
    return JsonResponse({"status": OK})


def _database() -> dict:
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"state": OK, "latency_ms": round((time.perf_counter() - started) * 1000, 2)}


def _redis() -> dict:
    started = time.perf_counter()
    cache.set("ops:readyz-ping", 1, timeout=30)
    if cache.get("ops:readyz-ping") != 1:
        raise RuntimeError("Redis did not return the value just written")
    return {"state": OK, "latency_ms": round((time.perf_counter() - started) * 1000, 2)}


def _worker_heartbeat() -> dict:
    limit = settings.READY_MAX_HEARTBEAT_AGE_SECONDS
    age = heartbeat_age_seconds()
    if age is None:
        return {"state": FAIL, "age_seconds": None, "max_seconds": limit, "message": NO_HEARTBEAT}
    return {"state": OK if age <= limit else FAIL, "age_seconds": round(age, 1), "max_seconds": limit}


def _outbox_lag() -> dict:
    limit = settings.READY_MAX_OUTBOX_LAG_SECONDS
    lag = outbox_lag_seconds()
    return {"state": OK if lag <= limit else FAIL, "seconds": round(lag, 1), "max_seconds": limit}


def _embedding_backlog() -> dict:
    limit = settings.READY_MAX_EMBEDDING_BACKLOG
    # Counted up to one past the limit: enough to decide, bounded however large the backlog is.
    count = embedding_backlog(cap=limit + 1)
    return {"state": OK if count <= limit else FAIL, "count": count, "max": limit, "capped": count > limit}


def _throttle() -> dict:
    """Where this process counts the API rates: in Redis (shared by every process), or, while Redis is
    away, in the process (each process then allows the full rate)."""
    state = degraded.THROTTLE.state()
    state["counts"] = "per-process" if degraded.THROTTLE.degraded else "shared"
    return state


CHECKS: dict[str, Callable[[], dict]] = {
    "database": _database,
    "redis": _redis,
    "throttle": _throttle,
    "worker_heartbeat": _worker_heartbeat,
    "outbox_lag": _outbox_lag,
    "embedding_backlog": _embedding_backlog,
}


@never_cache
@require_GET
def readyz(request):
    """Each dependency named with its state and figure; 503 when one fails, 200 with status `degraded`
    while the process answers without Redis. A check that raises (the database or Redis is down) names
    the error's class, never a 500."""
    checks = {}
    for name, check in CHECKS.items():
        try:
            checks[name] = check()
        except Exception as exc:  # noqa: BLE001 - any error of a dependency means "not ready"
            logger.warning("readiness check %s failed: %s", name, exc.__class__.__name__)
            checks[name] = {"state": FAIL, "error": exc.__class__.__name__}
            if name in REDIS_CHECKS and isinstance(exc, degraded.REDIS_DOWN):
                checks[name].update(state=DEGRADED, message=WITHOUT_REDIS)
    states = {check["state"] for check in checks.values()}
    status = FAIL if FAIL in states else DEGRADED if DEGRADED in states else OK
    return JsonResponse({"status": status, "checks": checks}, status=503 if status == FAIL else 200)
