"""The governance tabs' reads: the audit log (filters, a date range, keyset pages) and propagation (outbox
lag, per-store delivery states, failed deliveries with their errors)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import BigIntegerField, Count, Max, Min, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from governance.models import AuditEvent, Memory, Outbox, OutboxDelivery, Principal, Scope
from governance.models.outbox import DERIVED_STORES
from governance.permissions import governed_scopes
from governance.runtime import cursor as codec
from governance.selectors.dashboard.common import PAGE_SIZE, governed_scope_ids

# --- Audit --------------------------------------------------------------------------------------------


@dataclass
class AuditFilters:
    action: str = ""
    actor: str = ""
    target: str = ""
    since: datetime | None = None  # inclusive
    until: datetime | None = None  # exclusive


def audit_queryset(
    principal: Principal, scope: Scope | None, filters: AuditFilters | None = None
) -> QuerySet:
    """Audit events of the scopes the principal governs, by the scope's identity (never its path: a path
    freed by a rename and taken again carries none of the old scope's history)."""
    scopes = Scope.objects.subtree_of(scope) if scope is not None else governed_scopes(principal)
    qs = AuditEvent.objects.filter(scope_id__in=scopes.values("pk"))
    if filters:
        if filters.action:
            qs = qs.filter(action=filters.action)
        if filters.actor:
            qs = qs.filter(actor_name=filters.actor)
        if filters.target:
            qs = qs.filter(target_id=filters.target)
        if filters.since is not None:
            qs = qs.filter(at__gte=filters.since)
        if filters.until is not None:
            qs = qs.filter(at__lt=filters.until)
    return qs


@dataclass
class AuditPage:
    """One page of the audit log, newest first, with keyset cursors: `older` is the `before=` of the next
    (older) page, `newer` the `after=` of the previous one; None when there is no such page."""

    object_list: list[AuditEvent]
    older: int | None
    newer: int | None


def audit_cursor(pk: int) -> str:
    """An audit page link's `before=` / `after=`: the event id, through the one cursor codec."""
    return codec.encode_id("audit", pk)


def audit_cursor_id(raw: str, field: str) -> int | None:
    """The event id of an `audit_cursor`, None when `raw` is empty; a 400 for anything else."""
    return codec.decode_id(raw, "audit", field)


def audit_page(
    principal: Principal,
    scope: Scope | None,
    filters: AuditFilters,
    *,
    before: int | None = None,
    after: int | None = None,
    per_page: int = PAGE_SIZE,
) -> AuditPage:
    """Keyset paging in id order (the chain's order: appends are serialised), so page 2,000 costs what
    page 1 does: `id < before ORDER BY id DESC` (or `id > after ORDER BY id` walking back), one query,
    served by the primary key or by the (action, id) / (actor_name, id) indexes of migration 0023; two more
    (one row each) with a date range."""
    qs = audit_queryset(principal, scope, filters)
    # A date range as an id range too: the first id with at >= since and the last with at < until bound
    # every match exactly (whatever the order of `at`), and as `at` grows with the id, each is one short
    # walk of the primary key; the page then walks the key from there instead of filtering its way down.
    if filters.since is not None:
        first = AuditEvent.objects.filter(at__gte=filters.since).aggregate(m=Min("pk"))["m"]
        qs = qs.filter(pk__gte=first) if first is not None else qs.none()
    if filters.until is not None:
        last = AuditEvent.objects.filter(at__lt=filters.until).aggregate(m=Max("pk"))["m"]
        qs = qs.filter(pk__lte=last) if last is not None else qs.none()
    if after is not None:
        rows = list(qs.filter(pk__gt=after).order_by("pk")[: per_page + 1])
        more_newer = len(rows) > per_page
        rows = rows[:per_page][::-1]
        return AuditPage(
            rows, older=rows[-1].pk if rows else None, newer=rows[0].pk if rows and more_newer else None
        )
    if before is not None:
        qs = qs.filter(pk__lt=before)
    rows = list(qs.order_by("-pk")[: per_page + 1])
    more_older = len(rows) > per_page
    rows = rows[:per_page]
    return AuditPage(
        rows,
        older=rows[-1].pk if rows and more_older else None,
        newer=rows[0].pk if rows and before is not None else None,
    )


def audit_actions() -> list[str]:
    return list(AuditEvent.objects.order_by("action").values_list("action", flat=True).distinct())


# --- Propagation --------------------------------------------------------------------------------------


_FIRST_MEMORY = "(governance_outbox.payload->'memory_ids'->>0)::bigint"


def _readable_change(principal: Principal, scope: Scope | None, prefix: str = "") -> Q:
    """Outbox rows about memories (or scopes) the principal may read; `prefix` reaches them from a
    delivery ("outbox__"). Needs the `first_memory` annotation (a batch write names its memories only in
    the payload; its first one stands for the batch)."""
    ids = governed_scope_ids(principal, scope)
    return (
        Q(**{f"{prefix}memory__scope_id__in": ids})
        | Q(**{f"{prefix}payload__scope_id__in": ids})
        | Q(
            **{f"{prefix}memory__isnull": True},
            first_memory__in=Memory.objects.filter(scope_id__in=ids).values("pk"),
        )
    )


def _first_memory() -> RawSQL:
    return RawSQL(_FIRST_MEMORY, [], output_field=BigIntegerField())


def recent_propagation(principal: Principal, scope: Scope | None, limit: int = 25) -> list[dict]:
    """The last changes carried to derived stores, with each store's delivery state."""
    since = timezone.now() - timedelta(days=7)
    rows = list(
        Outbox.objects.annotate(first_memory=_first_memory())
        .filter(_readable_change(principal, scope), created_at__gte=since)
        .prefetch_related("deliveries")
        .order_by("-pk")[:limit]
    )
    return [
        {"outbox": row, "deliveries": sorted(row.deliveries.all(), key=lambda d: d.store)} for row in rows
    ]


def store_states() -> list[dict]:
    """Per derived store: deliveries still pending and failed, and since when the oldest open one waits.
    System-wide like the overview's backlog (counts and ages hold no memory content); reads only the open
    deliveries, through the partial index of migration 0023, so it stays small as history grows. Two
    queries: the counts with each store's oldest open change (lowest outbox id), then those changes' times."""
    now = timezone.now()
    open_rows = list(
        OutboxDelivery.objects.filter(state__in=[OutboxDelivery.State.PENDING, OutboxDelivery.State.FAILED])
        .order_by()
        .values_list("store", "state")
        .annotate(n=Count("*"), first=Min("outbox_id"))
    )
    created = dict(Outbox.objects.filter(pk__in={r[3] for r in open_rows}).values_list("pk", "created_at"))
    found: dict[str, dict] = {
        s: {"store": s, "pending": 0, "failed": 0, "oldest": None} for s in DERIVED_STORES
    }
    for store, state, n, first in open_rows:
        row = found.setdefault(store, {"store": store, "pending": 0, "failed": 0, "oldest": None})
        row[state] = n
        oldest = created.get(first)
        if oldest is not None and (row["oldest"] is None or oldest < row["oldest"]):
            row["oldest"] = oldest
    for row in found.values():
        row["lag"] = (now - row["oldest"]) if row["oldest"] else None
    return sorted(found.values(), key=lambda r: r["store"])


def outbox_lag() -> dict:
    """How far propagation is behind: pending outbox rows and the age of the oldest (partial index)."""
    pending = Outbox.objects.filter(state=Outbox.State.PENDING).aggregate(
        n=Count("pk"), oldest=Min("created_at")
    )
    oldest = pending["oldest"]
    return {"pending": pending["n"], "oldest": oldest, "lag": (timezone.now() - oldest) if oldest else None}


def failed_deliveries(principal: Principal, scope: Scope | None, limit: int = 50) -> list[OutboxDelivery]:
    """Failed deliveries of changes the principal may read, newest change first, with their errors."""
    # select_related joins governance_outbox under its own name, which the payload expression reads.
    return list(
        OutboxDelivery.objects.select_related("outbox")
        .annotate(first_memory=_first_memory())
        .filter(_readable_change(principal, scope, "outbox__"), state=OutboxDelivery.State.FAILED)
        .order_by("-outbox_id", "store")[:limit]
    )
