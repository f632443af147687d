"""Prometheus metrics the code observes as it runs (request latency, context stage timings, throttled
requests). The figures read from the database at scrape time (outbox lag, embedding backlog, propagation
latency) are in memoryui.ops.metrics. With PROMETHEUS_MULTIPROC_DIR set before the process starts,
prometheus-client keeps these in files there so every gunicorn worker's counts are scraped together."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

# Latency buckets (s) from a cached read to a slow context packet.
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_STAGE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

REQUEST_LATENCY = Histogram(
    "memory_http_request_duration_seconds",
    "Time from the first middleware to the response, per route name, method and status class.",
    ["route", "method", "status_class"],
    buckets=_LATENCY_BUCKETS,
)
CONTEXT_STAGE = Histogram(
    "memory_context_stage_seconds",
    "Time of each stage of the context/recall pipeline (the per-stage timings of the turn trace).",
    ["stage"],
    buckets=_STAGE_BUCKETS,
)
THROTTLED = Counter(
    "memory_throttled_requests_total",
    "API requests answered 429 by the rate limit, per bucket (context, read, write, governance).",
    ["bucket"],
)

_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}


def observe_request(*, route: str, method: str, status: int, seconds: float) -> None:
    """One request's latency. Labels are bounded: route names (not paths), known methods, status classes."""
    REQUEST_LATENCY.labels(
        route=route or "unmatched",
        method=method if method in _METHODS else "other",
        status_class=f"{status // 100}xx",
    ).observe(seconds)


def observe_stages(trace: list[dict]) -> None:
    """Each stage of one recall trace (entries of {"name", "ms", ...})."""
    for stage in trace:
        CONTEXT_STAGE.labels(stage=stage["name"]).observe(stage["ms"] / 1000.0)


# --- Redis away (governance/runtime/degraded.py) ---------------------------------------------------------
REDIS_ERRORS = Counter(
    "memory_redis_errors_total",
    "Calls to Redis that failed (unreachable or timed out) and were done without, per use "
    "(throttle, cache, publish).",
    ["use"],
)
DEGRADED = Gauge(
    "memory_degraded",
    "1 while this process does without Redis for a part: throttle (counting per process), cache "
    "(reads uncached), publish (messages left to the reconciler).",
    ["part"],
    multiprocess_mode="livemax",
)
PUBLISH_DEFERRED = Counter(
    "memory_publish_deferred_total",
    "Celery messages not sent because the broker was away; the reconciler sends their work later.",
)
DB_RETRIES = Counter(
    "memory_db_retries_total",
    "Requests run again on a fresh database connection after theirs was dropped before they committed "
    "anything, per outcome (the status class of the second answer).",
    ["outcome"],
)
# Read replicas (governance.runtime.replica): where each routed read went, and why when not the replica.
REPLICA_READS = Counter(
    "memory_replica_reads_total",
    "Reads that a replica may answer (recall, context, dashboard lists), by outcome: replica (caught up at "
    "once), replica_after_wait (caught up within REPLICA_MAX_WAIT_MS), primary_behind (not within it), "
    "primary_wrote (the request had written), primary_unavailable (the replica did not answer or failed).",
    ["outcome"],
)
