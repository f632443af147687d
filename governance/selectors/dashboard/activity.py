"""Overview, turns, governance (grants, audit, propagation) and evaluation."""

from __future__ import annotations

import math
from datetime import datetime

from django.apps import apps
from django.conf import settings
from django.core.paginator import Page
from django.db import connection
from django.db.models import Count, JSONField, Min
from django.db.models.expressions import RawSQL
from django.utils import timezone

from governance.errors import NotFound
from governance.models import (
    AuditEvent,
    Grant,
    Memory,
    Outbox,
    OutboxDelivery,
    Principal,
    Scope,
    Status,
    Turn,
    TurnMemory,
)
from governance.models.activation import days, log_activation_sql
from governance.permissions import resolve, tokens_visible_to
from governance.selectors.dashboard.audit import audit_queryset
from governance.selectors.dashboard.common import (
    PAGE_SIZE,
    governed_scope_ids,
    paginate,
)

# --- Overview -----------------------------------------------------------------------------------------


def overview_counts(principal: Principal, scope: Scope | None) -> dict:
    """Counts by status, kind and scope from one scan (an index-only scan of (scope, status, kind))."""
    ids = governed_scope_ids(principal, scope)
    rows = (
        Memory.objects.filter(scope_id__in=ids)
        .order_by()
        .values_list("scope_id", "status", "kind")
        .annotate(n=Count("*"))
    )
    by_status: dict[str, int] = {}
    by_kind: dict[str, int] = {}
    by_scope_id: dict[int, int] = {}
    for scope_id, status, kind, n in rows:
        by_status[status] = by_status.get(status, 0) + n
        by_kind[kind] = by_kind.get(kind, 0) + n
        by_scope_id[scope_id] = by_scope_id.get(scope_id, 0) + n
    top = sorted(by_scope_id.items(), key=lambda kv: -kv[1])[:12]
    paths = dict(Scope.objects.filter(pk__in=[pk for pk, _ in top]).values_list("pk", "path"))
    return {
        "total": sum(by_status.values()),
        "by_status": [(s.label, s.value, by_status.get(s.value, 0)) for s in Status],
        "by_kind": sorted(by_kind.items(), key=lambda kv: -kv[1]),
        "by_scope": sorted(((paths[pk], n) for pk, n in top), key=lambda kv: (-kv[1], kv[0])),
        "review_queue": by_status.get(Status.PROPOSED, 0),
    }


def propagation_health() -> dict:
    """Backlog of the outbox and the reconciler's heartbeat (system-wide: it holds no memory content)."""
    from governance.runtime.degraded import cache_get

    pending = Outbox.objects.filter(state=Outbox.State.PENDING).aggregate(
        n=Count("pk"), oldest=Min("created_at")
    )
    failed = OutboxDelivery.objects.filter(state=OutboxDelivery.State.FAILED).count()
    last_run = cache_get("reconciler:last_run")  # None while Redis is away: the page shows "unknown"
    return {
        "pending": pending["n"],
        "oldest_pending": pending["oldest"],
        "failed_deliveries": failed,
        "reconciler_last_run": datetime.fromisoformat(last_run) if last_run else None,
    }


def recent_audit(principal: Principal, scope: Scope | None, limit: int = 10) -> list[AuditEvent]:
    return list(audit_queryset(principal, scope).order_by("-pk")[:limit])


def _short(value: float) -> str:
    """An activation for a label: two significant digits, plain up to 1e-3, powers of ten below."""
    return f"{value:.2g}" if value >= 1e-3 else f"{value:.1e}".replace("e-0", "e-")


def activation_histogram(principal: Principal, scope: Scope | None, bins: int = 24) -> dict:
    """Histogram of log10 activation of the memories a recall could use, over the range they occupy (and
    the cold threshold, so the line is always on the chart): equal log bins from the data's minimum to its
    maximum, rounded out to a tenth of a decade, each labelled with its bounds. One query: the values are
    computed once (a CTE over the covering index of migration 0005), their range taken, then bucketed."""
    ids = governed_scope_ids(principal, scope)
    now = timezone.now()
    threshold = settings.MEMORY_COLD_THRESHOLD
    t = math.log10(threshold)
    rows: list = []
    lo = hi = None
    if ids:
        # log10 A(t) = (log K − λ·t) / ln 10: plain arithmetic per row, no exp/log over the whole table.
        sql = (
            f"WITH v AS MATERIALIZED (SELECT ({log_activation_sql()}) / ln(10) AS x "
            "FROM governance_memory WHERE scope_id = ANY(%s) AND status = ANY(%s)), "
            "r AS (SELECT floor(least(min(x), %s) * 10) / 10 AS lo, "
            "ceil(greatest(max(x), %s) * 10) / 10 + 0.1 AS hi FROM v) "
            "SELECT r.lo, r.hi, width_bucket(v.x, r.lo, r.hi, %s) AS b, count(*) FROM v, r "
            "GROUP BY r.lo, r.hi, b"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [days(now), ids, ["active", "candidate", "proposed"], t - 0.1, t + 0.1, bins])
            rows = cursor.fetchall()
    if rows:
        lo, hi = float(rows[0][0]), float(rows[0][1])
    else:
        lo, hi = math.floor(t) - 1.0, math.ceil(t) + 1.0
    counts = [0] * bins
    for _, _, bucket, n in rows:
        counts[min(max(bucket, 1), bins) - 1] += n
    width = (hi - lo) / bins
    edges = [10 ** (lo + i * width) for i in range(bins + 1)]
    return {
        "edges": edges,
        "centers": [10 ** (lo + (i + 0.5) * width) for i in range(bins)],
        "labels": [f"{_short(edges[i])}–{_short(edges[i + 1])}" for i in range(bins)],
        "counts": counts,
        "range": [lo, hi],
        "threshold": threshold,
    }


# --- Turns --------------------------------------------------------------------------------------------


def turn_page(principal: Principal, scope: Scope | None, session: str = "", page: int | str = 1) -> Page:
    qs = Turn.objects.filter(scope_id__in=governed_scope_ids(principal, scope)).select_related(
        "scope", "principal"
    )
    if session:
        qs = qs.filter(session=session)
    return paginate(
        qs.defer("packet", "text", "trace", "request").order_by("-created_at", "-pk"), page, PAGE_SIZE
    )


def turn_for_reader(principal: Principal, turn_id: int) -> Turn:
    return resolve.turn_for_reader(principal, turn_id)


def previous_turn(turn: Turn) -> Turn | None:
    return (
        Turn.objects.filter(scope_id=turn.scope_id, session=turn.session, created_at__lt=turn.created_at)
        .order_by("-created_at", "-pk")
        .first()
    )


MEMORY_TURNS_LIMIT = 50

# Each block of the stored packet that names the memory, with the slot it sits in ("skipped" for one
# left out; its own "slot" key then says where it would have gone). Read in SQL, so the packets
# themselves never leave the database.
_BLOCKS_OF_MEMORY = """
    SELECT coalesce(jsonb_agg(b.value || jsonb_build_object('_slot', e.key)), '[]'::jsonb)
    FROM jsonb_each(CASE WHEN jsonb_typeof({table}.packet) = 'object' THEN {table}.packet ELSE '{{}}' END) e,
         jsonb_array_elements(CASE WHEN jsonb_typeof(e.value) = 'array' THEN e.value ELSE '[]' END) b
    WHERE jsonb_typeof(b.value) = 'object' AND b.value->>'memory_id' = %s
"""


def memory_turns(principal: Principal, memory_id: int, limit: int = MEMORY_TURNS_LIMIT) -> list[dict]:
    """The newest `limit` turns (among those the principal may see) that used or skipped the memory,
    each with the memory's slot, score and reason there: the "why / why not" of a memory. Three queries."""
    table = connection.ops.quote_name(Turn._meta.db_table)
    cited = TurnMemory.objects.filter(memory_id=memory_id).values("turn_id")
    turns = (
        Turn.objects.filter(pk__in=cited, scope_id__in=governed_scope_ids(principal, None))
        .annotate(
            blocks=RawSQL(_BLOCKS_OF_MEMORY.format(table=table), (str(memory_id),), output_field=JSONField())
        )
        .only("pk", "created_at", "query", "session", "scope__path")
        .select_related("scope")
        .order_by("-created_at", "-pk")[:limit]
    )
    rows = []
    for turn in turns:
        for b in turn.blocks or [{}]:
            skipped = b.get("_slot") == "skipped"
            rows.append(
                {
                    "turn": turn,
                    "used": not skipped and b.get("_slot") != "negative",
                    "skipped": skipped,
                    "slot": b.get("slot", b.get("_slot", "")) if skipped else b.get("_slot", ""),
                    "score": b.get("score"),
                    "reason": b.get("reason", ""),
                    "stage": b.get("stage", ""),
                }
            )
    return rows


def memory_states(memory_ids: set[int]) -> dict[int, dict]:
    """Today's status of memories cited by a packet (so a forgotten one is shown as such, without text)."""
    from governance.redaction.masking import memory_states as states

    return states(memory_ids)


def readable_scope_paths(principal: Principal, scope_ids: set[int]) -> dict[int, str]:
    """The paths of those scopes whose memories the principal may read (one query): the scope part of a
    packet block's label (memoryui/labels.py); a scope it may not read is left out, so its path never shows."""
    from governance.permissions import memory_readable_scopes

    if not scope_ids or principal is None:
        return {}
    return dict(memory_readable_scopes(principal).filter(pk__in=scope_ids).values_list("pk", "path"))


# --- Governance ---------------------------------------------------------------------------------------


def grants_in(principal: Principal, scope: Scope | None) -> list[Grant]:
    """Grants on the scopes the principal may read, for the grants table."""
    return list(
        Grant.objects.filter(scope_id__in=governed_scope_ids(principal, scope))
        .select_related("scope", "principal", "granted_by")
        .order_by("scope__path", "principal__name", "role")
    )


def tokens_in(principal: Principal, scope: Scope | None) -> list:
    """Unrevoked API tokens the principal may revoke (its own, and those bound inside a subtree it owns),
    within `scope`'s subtree when given (a token without a bound shows only to its own principal)."""
    qs = tokens_visible_to(principal).filter(revoked_at__isnull=True)
    if scope is not None:
        qs = qs.filter(scope__tree__descendant_of=scope.tree)
    return list(qs.order_by("-created_at", "-pk")[:200])


def token_to_revoke(principal: Principal, token_id: int):
    """An unrevoked API token the principal may revoke (the revoke confirm page); else NotFound, the same
    answer for an unknown token and one it may not see."""
    token = tokens_visible_to(principal).filter(pk=token_id, revoked_at__isnull=True).first()
    if token is None:
        raise NotFound()
    return token


def latest_evaluation():
    """The newest stored run of the site-wide replay suite, or None while it has stored none (or has no
    model). A workspace's uploaded-file runs are its own (governance/selectors/dashboard/evaluation.py)."""
    try:
        model = apps.get_model("governance", "EvaluationRun")
    except LookupError:
        return None
    return model.objects.filter(workspace__isnull=True, state="done").order_by("-created_at", "-pk").first()
