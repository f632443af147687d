"""Reads for the dashboard. Every function takes the acting principal and only returns what its grants
allow (the subtrees of its grants, as governance.permissions.readable_scopes says); list functions run a
fixed number of queries whatever the number of rows (tested with django_assert_max_num_queries)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.apps import apps
from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db import connection
from django.db.models import BigIntegerField, Count, Exists, Min, OuterRef, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from governance import lexical
from governance.activation import activation_sql, days
from governance.errors import InvalidInput, NotFound
from governance.models import (
    ROLE_RANK,
    AuditEvent,
    Grant,
    Memory,
    Outbox,
    OutboxDelivery,
    Principal,
    ReinforcementEvent,
    Relation,
    Role,
    Scope,
    Status,
    Turn,
)
from governance.permissions import ACTION_ROLES, Action, readable_scopes, require

PAGE_SIZE = 50
GRAPH_CHUNK = 5000
MAX_PAGE_SIZE = 200
BAD_PAGE = "page is a positive whole number."


# --- Scopes -------------------------------------------------------------------------------------------


def scope_for_path(principal: Principal, path: str | None) -> Scope | None:
    """The scope a page is focused on (None: everything the principal may read). Unknown or unreadable
    paths are the same NotFound, so a page never tells whether a scope it may not see exists."""
    if not path:
        return None
    scope = Scope.objects.filter(path=path.strip().strip("/")).first()
    if scope is None:
        raise NotFound()
    require(principal, scope, Action.READ)
    return scope


def visible_scopes(principal: Principal, scope: Scope | None = None) -> QuerySet[Scope]:
    """Scopes the principal may read, optionally only the subtree of `scope`."""
    scopes = readable_scopes(principal)
    if scope is not None:
        scopes = scopes.filter(tree__descendant_of=scope.tree)
    return scopes


def visible_scope_ids(principal: Principal, scope: Scope | None = None) -> list[int]:
    """Memoised on the principal object, which lives for one request: a page asks several times."""
    memo = principal.__dict__.setdefault("_dashboard_scope_ids", {})
    key = scope.pk if scope is not None else None
    if key not in memo:
        memo[key] = list(visible_scopes(principal, scope).values_list("pk", flat=True))
    return memo[key]


def scope_paths(principal: Principal) -> list[str]:
    """Readable scope paths in tree order (the header's scope picker: no counts, so no scan of memories)."""
    return list(visible_scopes(principal).order_by("path").values_list("path", flat=True))


def scope_tree(principal: Principal) -> list[dict]:
    """Readable scopes in tree order with their memory counts (for the sidebar and scope pickers)."""
    scopes = list(visible_scopes(principal).order_by("path").values("pk", "path", "name"))
    counts = dict(
        # count(*), not count(id): the (scope, status, kind) index then answers without the table.
        Memory.objects.filter(scope_id__in=[s["pk"] for s in scopes]).order_by().values_list("scope_id")
        .annotate(n=Count("*")).values_list("scope_id", "n")
    )
    for s in scopes:
        s["depth"] = s["path"].count("/")
        s["memories"] = counts.get(s["pk"], 0)
    return scopes


@dataclass
class MyRoles:
    """The principal's roles by scope, computed once per request from its grants (the same rule as
    governance.permissions.roles_at: a grant covers its scope's subtree)."""

    grants: list[tuple[str, str]] = field(default_factory=list)  # (scope tree, role)

    @classmethod
    def of(cls, principal: Principal) -> MyRoles:
        rows = Grant.objects.filter(principal_id__in=principal.principal_ids()).values_list("scope__tree", "role")
        return cls(grants=list(rows))

    def at(self, scope: Scope) -> set[str]:
        tree = str(scope.tree)
        return {role for t, role in self.grants if tree == t or tree.startswith(t + ".")}

    def can(self, scope: Scope, action: Action) -> bool:
        return bool(self.at(scope) & ACTION_ROLES[action])

    def rank(self, scope: Scope) -> int:
        return max((ROLE_RANK[Role(r)] for r in self.at(scope)), default=0)


# --- Memories -----------------------------------------------------------------------------------------


@dataclass
class MemoryFilters:
    status: str = ""
    kind: str = ""
    source: str = ""
    tier: str = ""
    q: str = ""
    cold: str = ""  # "cold" | "hot" | ""


def with_activation(qs: QuerySet[Memory], at: datetime | None = None) -> QuerySet[Memory]:
    return qs.annotate(activation=RawSQL(activation_sql(), [at or timezone.now()]))


def memory_queryset(principal: Principal, scope: Scope | None, filters: MemoryFilters) -> QuerySet[Memory]:
    qs = Memory.objects.filter(scope_id__in=visible_scope_ids(principal, scope))
    for name, column in (("status", "status"), ("kind", "kind"), ("source", "source_kind"), ("tier", "tier")):
        value = getattr(filters, name)
        if value:
            qs = qs.filter(**{column: value})
    if filters.q.strip():
        words = " ".join(lexical.terms(filters.q)) or filters.q.strip()
        # The expression matches the GIN index of migration 0002 (COALESCE would defeat it).
        qs = qs.extra(
            where=["to_tsvector('simple', governance_memory.lexical) @@ plainto_tsquery('simple', %s)"],
            params=[words],
        )
    if filters.cold in ("cold", "hot"):
        op = "<" if filters.cold == "cold" else ">="
        qs = qs.extra(where=[f"{activation_sql()} {op} %s"], params=[timezone.now(), settings.MEMORY_COLD_THRESHOLD])
    return qs


def memory_page(
    principal: Principal, scope: Scope | None, filters: MemoryFilters, page: int | str = 1, per_page: int = PAGE_SIZE
) -> Page:
    """One page of memories, newest first, with scope and activation, in three queries plus the scopes."""
    qs = with_activation(memory_queryset(principal, scope, filters)).select_related("scope").defer(
        "embedding", "lexical", "meta"
    ).order_by("-pk")
    return _page(qs, page, min(per_page, MAX_PAGE_SIZE))


def _page(qs, page, per_page) -> Page:
    try:
        number = int(page or 1)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(BAD_PAGE, field="page") from exc
    if number < 1:
        raise InvalidInput(BAD_PAGE, field="page")
    paginator = Paginator(qs, per_page)
    return paginator.get_page(number)


def memory_for_reader(principal: Principal, memory_id: int) -> Memory:
    memory = Memory.objects.select_related("scope", "created_by").defer("embedding").filter(pk=memory_id).first()
    if memory is None:
        raise NotFound()
    require(principal, memory.scope, Action.READ)
    return memory


def revision_chain(memory: Memory) -> list[Memory]:
    """Every revision of a keyed fact (oldest first); for an unkeyed memory, itself and its direct
    supersede neighbours."""
    if memory.key:
        return list(
            Memory.objects.filter(scope_id=memory.scope_id, key=memory.key).defer("embedding", "lexical")
            .order_by("revision", "pk")
        )
    ids = set(
        Relation.objects.filter(kind="supersedes").filter(Q(source=memory) | Q(target=memory))
        .values_list("source_id", "target_id")
    )
    flat = {i for pair in ids for i in pair} | {memory.pk}
    return list(Memory.objects.filter(pk__in=flat).defer("embedding", "lexical").order_by("created_at", "pk"))


def memory_relations(principal: Principal, memory: Memory) -> list[dict]:
    """Links in and out; the other end is named only when the principal may read its scope."""
    readable = set(visible_scope_ids(principal))
    rows = (
        Relation.objects.filter(Q(source=memory) | Q(target=memory))
        .select_related("source", "target", "actor").defer("source__embedding", "target__embedding")
        .order_by("-created_at")[:200]
    )
    out = []
    for rel in rows:
        outgoing = rel.source_id == memory.pk
        other = rel.target if outgoing else rel.source
        out.append({
            "relation": rel, "outgoing": outgoing, "other": other if other.scope_id in readable else None,
            "verb": rel.get_kind_display().lower() if outgoing else f"is {rel.kind.replace('_', ' ')} by"
            if rel.kind != "derived_from" else "is the origin of",
        })
    return out


def memory_reinforcements(memory: Memory, limit: int = 2000) -> list[ReinforcementEvent]:
    return list(memory.reinforcements.order_by("at")[:limit])


def memory_audit(memory: Memory, limit: int = 200) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(target_type="memory", target_id=str(memory.pk)).order_by("at", "pk")[:limit])


def status_changes(memory_ids: list[int], since: datetime | None = None) -> dict[int, list[AuditEvent]]:
    """Audit events that changed the status of these memories, grouped by memory, oldest first."""
    qs = AuditEvent.objects.filter(target_type="memory", target_id__in=[str(i) for i in memory_ids]).exclude(
        after_status=""
    ).exclude(before_status="")
    if since is not None:
        qs = qs.filter(at__gte=since)
    grouped: dict[int, list[AuditEvent]] = {}
    for event in qs.order_by("at", "pk"):
        if event.before_status != event.after_status:
            grouped.setdefault(int(event.target_id), []).append(event)
    return grouped


# --- Overview -----------------------------------------------------------------------------------------


def overview_counts(principal: Principal, scope: Scope | None) -> dict:
    """Counts by status, kind and scope from one scan (an index-only scan of (scope, status, kind))."""
    ids = visible_scope_ids(principal, scope)
    rows = (
        Memory.objects.filter(scope_id__in=ids).order_by().values_list("scope_id", "status", "kind")
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
    from django.core.cache import cache

    pending = Outbox.objects.filter(state=Outbox.State.PENDING).aggregate(n=Count("pk"), oldest=Min("created_at"))
    failed = OutboxDelivery.objects.filter(state=OutboxDelivery.State.FAILED).count()
    last_run = cache.get("reconciler:last_run")
    return {
        "pending": pending["n"],
        "oldest_pending": pending["oldest"],
        "failed_deliveries": failed,
        "reconciler_last_run": datetime.fromisoformat(last_run) if last_run else None,
    }


def recent_audit(principal: Principal, scope: Scope | None, limit: int = 10) -> list[AuditEvent]:
    return list(audit_queryset(principal, scope).order_by("-pk")[:limit])


def activation_histogram(principal: Principal, scope: Scope | None, bins: int = 30) -> dict:
    """Histogram of log10 activation of the memories a recall could use, and the cold threshold."""
    ids = visible_scope_ids(principal, scope)
    lo, hi = -6.0, 1.0
    now = timezone.now()
    counts = [0] * bins
    if ids:
        # log10 A(t) = (log K − λ·t) / ln 10: plain arithmetic per row, no exp/log over the whole table.
        sql = (
            "SELECT width_bucket((activation_log_k - decay_rate * %s) / ln(10), %s, %s, %s) AS b, count(*) "
            "FROM governance_memory WHERE scope_id = ANY(%s) AND status = ANY(%s) GROUP BY b"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [days(now), lo, hi, bins, ids, ["active", "candidate", "proposed"]])
            for bucket, n in cursor.fetchall():
                counts[min(max(bucket, 1), bins) - 1] += n  # out-of-range values join the edge bins
    width = (hi - lo) / bins
    return {
        "edges": [10 ** (lo + i * width) for i in range(bins + 1)],
        "centers": [10 ** (lo + (i + 0.5) * width) for i in range(bins)],
        "counts": counts,
        "threshold": settings.MEMORY_COLD_THRESHOLD,
    }


# --- Timeline and graph -------------------------------------------------------------------------------


def top_memories(principal: Principal, scope: Scope | None, limit: int = 15) -> list[Memory]:
    now = timezone.now()
    # Rank by log A(t) = log K − λ·t (same order as A, no exp per row) reading only the covering index
    # of migration 0005; then fetch the few rows shown.
    log_a = RawSQL("activation_log_k - decay_rate * %s", [days(now)])
    ids = list(
        Memory.objects.filter(scope_id__in=visible_scope_ids(principal, scope), status=Status.ACTIVE)
        .order_by(log_a.desc(), "-pk").values_list("pk", flat=True)[:limit]
    )
    rows = {m.pk: m for m in with_activation(Memory.objects.filter(pk__in=ids), now).defer("embedding", "lexical", "meta")}
    return [rows[pk] for pk in ids if pk in rows]


def reinforcements_for(memory_ids: list[int]) -> dict[int, list[tuple[datetime, float]]]:
    grouped: dict[int, list[tuple[datetime, float]]] = {}
    rows = ReinforcementEvent.objects.filter(memory_id__in=memory_ids).order_by("at").values_list("memory_id", "at", "weight")
    for memory_id, at, weight in rows:
        grouped.setdefault(memory_id, []).append((at, weight))
    return grouped


def _by_ids(qs: QuerySet, ids) -> QuerySet:
    """`id = ANY('{…}'::bigint[])` with the array as one text parameter: an IN list, or a Python list
    adapted element by element, costs ~10 µs per id in Django and psycopg, which a graph pays by thousands."""
    return qs.extra(where=[f"{qs.model._meta.db_table}.id = ANY(%s::bigint[])"],
                    params=["{" + ",".join(str(int(i)) for i in ids) + "}"])


def relation_graph(principal: Principal, scope: Scope | None, *, max_edges: int = 2000) -> dict:
    """Relations between memories the principal may read (both ends), newest first, capped."""
    ids = set(visible_scope_ids(principal, scope))
    edges: list[tuple[int, int, str]] = []
    chunk: list = []
    if scope is None or scope.parent_id is None:
        # A whole workspace: the newest relations, with their ends looked up by id, are cheap whatever
        # the size of the memory table, and most of them are readable here.
        chunk = list(Relation.objects.order_by("-pk").values_list("source_id", "target_id", "kind")[:GRAPH_CHUNK])
        ends = {i for s, t, _ in chunk for i in (s, t)}
        scope_of = dict(_by_ids(Memory.objects.all(), ends).values_list("pk", "scope_id"))
        edges = [(s, t, k) for s, t, k in chunk if scope_of.get(s) in ids and scope_of.get(t) in ids]
    if len(edges) <= max_edges and (scope is not None and scope.parent_id is not None or len(chunk) == GRAPH_CHUNK):
        # A narrower scope: let PostgreSQL find its relations through the memories of its scopes.
        edges = list(
            Relation.objects.filter(
                Exists(Memory.objects.filter(pk=OuterRef("source_id"), scope_id__in=ids)),
                Exists(Memory.objects.filter(pk=OuterRef("target_id"), scope_id__in=ids)),
            ).order_by("-pk").values_list("source_id", "target_id", "kind")[: max_edges + 1]
        )
    truncated = len(edges) > max_edges
    edges = edges[:max_edges]
    node_ids = {e[0] for e in edges} | {e[1] for e in edges}
    nodes = list(
        _by_ids(Memory.objects.all(), node_ids).values("pk", "status", "kind", "key", "revision", "text", "scope__path")
    )
    return {"nodes": nodes, "edges": edges, "truncated": truncated}


# --- Turns --------------------------------------------------------------------------------------------


def turn_page(principal: Principal, scope: Scope | None, session: str = "", page: int | str = 1) -> Page:
    qs = Turn.objects.filter(scope_id__in=visible_scope_ids(principal, scope)).select_related("scope", "principal")
    if session:
        qs = qs.filter(session=session)
    return _page(qs.defer("packet", "text", "trace", "request").order_by("-created_at", "-pk"), page, PAGE_SIZE)


def turn_for_reader(principal: Principal, turn_id: int) -> Turn:
    turn = Turn.objects.select_related("scope", "principal").filter(pk=turn_id).first()
    if turn is None:
        raise NotFound()
    require(principal, turn.scope, Action.READ)
    return turn


def previous_turn(turn: Turn) -> Turn | None:
    return (
        Turn.objects.filter(scope_id=turn.scope_id, session=turn.session, created_at__lt=turn.created_at)
        .order_by("-created_at", "-pk").first()
    )


def memory_states(memory_ids: set[int]) -> dict[int, dict]:
    """Today's status of memories cited by a packet (so a forgotten one is shown as such, without text)."""
    return {
        row["pk"]: row
        for row in Memory.objects.filter(pk__in=memory_ids).values("pk", "status", "purged_at", "scope_id")
    }


# --- Governance ---------------------------------------------------------------------------------------


def grants_in(principal: Principal, scope: Scope | None) -> list[Grant]:
    """Grants on the scopes the principal may read, for the grants table."""
    return list(
        Grant.objects.filter(scope_id__in=visible_scope_ids(principal, scope))
        .select_related("scope", "principal", "granted_by").order_by("scope__path", "principal__name", "role")
    )


@dataclass
class AuditFilters:
    action: str = ""
    actor: str = ""
    target: str = ""


def audit_queryset(principal: Principal, scope: Scope | None, filters: AuditFilters | None = None) -> QuerySet:
    """Audit events of the scopes the principal may read (events carry the path of their scope)."""
    roots = [scope.path] if scope is not None else list(
        Grant.objects.filter(principal_id__in=principal.principal_ids()).values_list("scope__path", flat=True)
    )
    if not roots:
        return AuditEvent.objects.none()
    q = Q()
    for path in roots:
        q |= Q(scope_path=path) | Q(scope_path__startswith=path + "/")
    qs = AuditEvent.objects.filter(q)
    if filters:
        if filters.action:
            qs = qs.filter(action=filters.action)
        if filters.actor:
            qs = qs.filter(actor_name=filters.actor)
        if filters.target:
            qs = qs.filter(target_id=filters.target)
    return qs


class LightPage:
    """A page that knows whether there is a next one without counting every row: the audit log of a big
    workspace is long, and an exact count would cost more than the page itself."""

    def __init__(self, rows: list, number: int, per_page: int):
        self.object_list = rows[:per_page]
        self.number = number
        self._more = len(rows) > per_page

    def has_next(self) -> bool:
        return self._more

    def has_previous(self) -> bool:
        return self.number > 1

    def next_page_number(self) -> int:
        return self.number + 1

    def previous_page_number(self) -> int:
        return self.number - 1


def audit_page(principal: Principal, scope: Scope | None, filters: AuditFilters, page: int | str = 1) -> LightPage:
    try:
        number = int(page or 1)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(BAD_PAGE, field="page") from exc
    if not 1 <= number <= 10_000:
        raise InvalidInput(BAD_PAGE, field="page")
    # Id order is the chain's order (appends are serialised), and the primary key index serves it.
    qs = audit_queryset(principal, scope, filters).order_by("-pk")
    offset = (number - 1) * PAGE_SIZE
    return LightPage(list(qs[offset : offset + PAGE_SIZE + 1]), number, PAGE_SIZE)


def audit_actions() -> list[str]:
    return list(AuditEvent.objects.order_by("action").values_list("action", flat=True).distinct())


def recent_propagation(principal: Principal, scope: Scope | None, limit: int = 25) -> list[dict]:
    """The last changes carried to derived stores, with each store's delivery state."""
    ids = visible_scope_ids(principal, scope)
    since = timezone.now() - timedelta(days=7)
    rows = list(
        Outbox.objects.filter(created_at__gte=since)
        # a batch write names its memories only in the payload; its first one stands for the batch
        .annotate(first_memory=RawSQL("(governance_outbox.payload->'memory_ids'->>0)::bigint", [],
                                      output_field=BigIntegerField()))
        .filter(
            Q(memory__scope_id__in=ids)
            | Q(payload__scope_id__in=ids)
            | Q(memory__isnull=True, first_memory__in=Memory.objects.filter(scope_id__in=ids).values("pk"))
        )
        .prefetch_related("deliveries").order_by("-pk")[:limit]
    )
    return [
        {"outbox": row, "deliveries": sorted(row.deliveries.all(), key=lambda d: d.store)} for row in rows
    ]


def latest_evaluation():
    """The newest stored evaluation run, or None while the evaluation suite has stored none (or has no model)."""
    try:
        model = apps.get_model("governance", "EvaluationRun")
    except LookupError:
        return None
    return model.objects.order_by("-created_at", "-pk").first()
