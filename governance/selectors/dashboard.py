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
from django.db.models import BigIntegerField, Count, Min, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from governance import lexical
from governance.activation import activation_sql
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


def scope_tree(principal: Principal) -> list[dict]:
    """Readable scopes in tree order with their memory counts (for the sidebar and scope pickers)."""
    scopes = list(visible_scopes(principal).order_by("path").values("pk", "path", "name"))
    counts = dict(
        Memory.objects.filter(scope_id__in=[s["pk"] for s in scopes]).values_list("scope_id")
        .annotate(n=Count("pk")).values_list("scope_id", "n")
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
    ids = visible_scope_ids(principal, scope)
    base = Memory.objects.filter(scope_id__in=ids)
    by_status = dict(base.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    by_kind = dict(base.values_list("kind").annotate(n=Count("pk")).values_list("kind", "n"))
    by_scope = list(
        base.values("scope__path").annotate(n=Count("pk")).order_by("-n", "scope__path")[:12]
    )
    return {
        "total": sum(by_status.values()),
        "by_status": [(s.label, s.value, by_status.get(s.value, 0)) for s in Status],
        "by_kind": sorted(by_kind.items(), key=lambda kv: -kv[1]),
        "by_scope": [(row["scope__path"], row["n"]) for row in by_scope],
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
    return list(audit_queryset(principal, scope).order_by("-at", "-pk")[:limit])


def activation_histogram(principal: Principal, scope: Scope | None, bins: int = 30) -> dict:
    """Histogram of log10 activation of the memories a recall could use, and the cold threshold."""
    ids = visible_scope_ids(principal, scope)
    lo, hi = -6.0, 1.0
    now = timezone.now()
    counts = [0] * bins
    if ids:
        sql = (
            f"SELECT width_bucket(log(GREATEST({activation_sql()}, 1e-12)), %s, %s, %s) AS b, count(*) "
            "FROM governance_memory WHERE scope_id = ANY(%s) AND status = ANY(%s) GROUP BY b"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [now, lo, hi, bins, ids, ["active", "candidate", "proposed"]])
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
    qs = with_activation(
        Memory.objects.filter(scope_id__in=visible_scope_ids(principal, scope), status=Status.ACTIVE)
    ).defer("embedding", "lexical", "meta")
    return list(qs.order_by("-activation", "-pk")[:limit])


def reinforcements_for(memory_ids: list[int]) -> dict[int, list[tuple[datetime, float]]]:
    grouped: dict[int, list[tuple[datetime, float]]] = {}
    rows = ReinforcementEvent.objects.filter(memory_id__in=memory_ids).order_by("at").values_list("memory_id", "at", "weight")
    for memory_id, at, weight in rows:
        grouped.setdefault(memory_id, []).append((at, weight))
    return grouped


def relation_graph(principal: Principal, scope: Scope | None, *, max_edges: int = 6000) -> dict:
    """Relations between memories the principal may read (both ends), newest first, capped."""
    ids = visible_scope_ids(principal, scope)
    edges = list(
        Relation.objects.filter(source__scope_id__in=ids, target__scope_id__in=ids)
        .order_by("-pk").values_list("source_id", "target_id", "kind")[: max_edges + 1]
    )
    truncated = len(edges) > max_edges
    edges = edges[:max_edges]
    node_ids = {e[0] for e in edges} | {e[1] for e in edges}
    nodes = list(
        Memory.objects.filter(pk__in=node_ids).values("pk", "status", "kind", "key", "revision", "text", "scope__path")
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


def audit_page(principal: Principal, scope: Scope | None, filters: AuditFilters, page: int | str = 1) -> Page:
    return _page(audit_queryset(principal, scope, filters).order_by("-at", "-pk"), page, PAGE_SIZE)


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
