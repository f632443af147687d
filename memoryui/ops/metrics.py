"""`GET /metrics`: Prometheus text format, for the addresses in METRICS_ALLOWED_IPS or a bearer METRICS_TOKEN.

The counters and histograms live in governance.runtime.metrics. The figures read from the database are computed
here at scrape time, each with one bounded query, so a scrape costs the same however large the tables:
outbox lag (the oldest pending row, one index entry), embedding backlog (a count under a LIMIT) and
propagation latency per store over the most recent outbox rows (a primary-key range)."""

from __future__ import annotations

import hmac
import logging
import os

from django.conf import settings
from django.db import connection
from django.http import Http404, HttpResponse, HttpResponseForbidden
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from governance.selectors.ops import (
    embedding_backlog,
    outbox_lag_seconds,
    turn_retention_totals,
    webhook_failed,
    webhook_overdue_seconds,
)
from memoryui.auth_backends import client_ip

logger = logging.getLogger(__name__)

BAD_METRICS_TOKEN = "The metrics token is not valid."

# Per store, the 50th/95th percentile and the maximum of done_at − outbox.created_at over the deliveries
# of the last %(window)s outbox rows: a backward range on the outbox primary key, then, per row, the
# unique (outbox, store) index.
# Bounded by the window, not by the table (docs/operations.md, "Metrics", for the plan at 100k rows).
PROPAGATION_SQL = """
    SELECT d.store,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY d.seconds),
           percentile_cont(0.95) WITHIN GROUP (ORDER BY d.seconds),
           max(d.seconds),
           count(*)
      FROM (SELECT id, created_at FROM governance_outbox ORDER BY id DESC LIMIT %s) AS o
     CROSS JOIN LATERAL (
           SELECT store, extract(epoch FROM done_at - o.created_at) AS seconds
             FROM governance_outboxdelivery
            WHERE outbox_id = o.id AND state = 'done' AND done_at IS NOT NULL
           OFFSET 0  -- a fence: without it the planner flattens this into a hash join over every delivery
           ) AS d
     GROUP BY d.store
"""


def propagation_latency(window: int) -> list[tuple[str, float, float, float, int]]:
    """(store, p50, p95, max, deliveries) in seconds over the last `window` outbox rows."""
    with connection.cursor() as cursor:
        cursor.execute(PROPAGATION_SQL, [window])
        return [
            (store, float(p50), float(p95), float(top), int(n))
            for store, p50, p95, top, n in cursor.fetchall()
        ]


class DatabaseCollector:
    """Gauges read from the database at scrape time. A database that does not answer gives
    memory_metrics_database_up 0 rather than a failed scrape, so the other metrics still arrive."""

    def collect(self):
        up = GaugeMetricFamily(
            "memory_metrics_database_up", "1 when the scrape-time database figures were read."
        )
        try:
            lag = outbox_lag_seconds()
            backlog = embedding_backlog(cap=settings.METRICS_BACKLOG_CAP)
            latency = propagation_latency(settings.METRICS_PROPAGATION_WINDOW)
            webhooks_overdue = webhook_overdue_seconds()
            webhooks_failed = webhook_failed(cap=settings.METRICS_BACKLOG_CAP)
            turns_pruned, turns_archived = turn_retention_totals()
        except Exception as exc:  # noqa: BLE001 - a scrape must answer even when the database does not
            logger.warning("metrics: database figures unavailable: %s", exc.__class__.__name__)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield GaugeMetricFamily(
            "memory_outbox_lag_seconds", "Age of the oldest pending outbox row (0 when none).", value=lag
        )
        yield GaugeMetricFamily(
            "memory_embedding_backlog",
            f"Memories that need a vector from the configured embedder, counted up to METRICS_BACKLOG_CAP "
            f"({settings.METRICS_BACKLOG_CAP}).",
            value=backlog,
        )
        family = GaugeMetricFamily(
            "memory_propagation_latency_seconds",
            "Outbox row created → delivery done, per derived store, over the most recent outbox rows "
            "(METRICS_PROPAGATION_WINDOW).",
            labels=["store", "stat"],
        )
        for store, p50, p95, top, _n in latency:
            family.add_metric([store, "p50"], p50)
            family.add_metric([store, "p95"], p95)
            family.add_metric([store, "max"], top)
        yield family
        yield GaugeMetricFamily(
            "memory_webhook_overdue_seconds",
            "How late the most overdue pending webhook delivery is (0 when none is due).",
            value=webhooks_overdue,
        )
        yield GaugeMetricFamily(
            "memory_webhook_failed_deliveries",
            "Webhook deliveries whose attempts are used up, waiting for a person, counted up "
            f"to METRICS_BACKLOG_CAP ({settings.METRICS_BACKLOG_CAP}).",
            value=webhooks_failed,
        )
        yield CounterMetricFamily(
            "memory_turns_pruned",
            "Stored turns deleted from the turn table by turn retention, over every policy so far.",
            value=turns_pruned,
        )
        yield CounterMetricFamily(
            "memory_turns_archived",
            "Stored turns copied into the turn archive before they were deleted, over every policy so far.",
            value=turns_archived,
        )


def _registry_text() -> bytes:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        process_text = generate_latest(registry)
    else:
        process_text = generate_latest(REGISTRY)
    database = CollectorRegistry()
    database.register(DatabaseCollector())
    return process_text + generate_latest(database)


def _bearer(request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def may_scrape(request) -> bool:
    """True for a client address in METRICS_ALLOWED_IPS or the right bearer METRICS_TOKEN. A wrong token
    is refused with 403; no token from another address is answered as if there were no such page."""
    token = _bearer(request)
    if token is not None:
        expected = settings.METRICS_TOKEN
        if expected and hmac.compare_digest(token.encode(), expected.encode()):
            return True
        raise PermissionError(BAD_METRICS_TOKEN)
    return client_ip(request) in settings.METRICS_ALLOWED_IPS


@never_cache
@require_GET
def metrics(request):
    try:
        allowed = may_scrape(request)
    except PermissionError as exc:
        return HttpResponseForbidden(str(exc), content_type="text/plain; charset=utf-8")
    if not allowed:
        raise Http404
    return HttpResponse(_registry_text(), content_type=CONTENT_TYPE_LATEST)
