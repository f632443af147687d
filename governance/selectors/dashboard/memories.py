"""Memories, their history, the timeline and the relation graph."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Exists, OuterRef, Q
from django.db.models.expressions import RawSQL
from django.utils import timezone

from governance.models import (
    AuditEvent,
    Memory,
    Principal,
    ReinforcementEvent,
    Relation,
    Scope,
    Status,
)
from governance.models.activation import days, log_activation_sql
from governance.permissions import resolve
from governance.selectors.dashboard.common import by_ids, governed_scope_ids, graph_memories
from governance.selectors.dashboard.memory_list import MemoryFilters, memory_queryset, with_activation  # noqa: F401

GRAPH_CHUNK = 5000

# --- Memories -----------------------------------------------------------------------------------------

# The other end of a relation, in words: "This memory is superseded by …", never "is supersedes by".
INVERSE_VERBS = {
    "supersedes": "is superseded by",
    "contradicts": "is contradicted by",
    "supports": "is supported by",
    "derived_from": "is the source of",
}


def memory_for_reader(principal: Principal, memory_id: int) -> Memory:
    # The API's rule (the one resolver): a memory of a scope above the reader's grant is part of what a
    # read in its subtree sees, so the dashboard shows it too (read-only, as the roles say).
    return resolve.memory_for_reader(principal, memory_id)


def revision_chain(memory: Memory) -> list[Memory]:
    """Every revision of a keyed fact (oldest first); for an unkeyed memory, itself and its direct
    supersede neighbours."""
    if memory.key:
        return list(
            Memory.objects.filter(scope_id=memory.scope_id, key=memory.key)
            .defer("embedding", "lexical")
            .order_by("revision", "pk")
        )
    ids = set(
        Relation.objects.filter(kind="supersedes")
        .filter(Q(source=memory) | Q(target=memory))
        .values_list("source_id", "target_id")
    )
    flat = {i for pair in ids for i in pair} | {memory.pk}
    return list(Memory.objects.filter(pk__in=flat).defer("embedding", "lexical").order_by("created_at", "pk"))


def memory_relations(principal: Principal, memory: Memory) -> list[dict]:
    """Links in and out; the other end is named only when the principal may read its scope."""
    readable = set(governed_scope_ids(principal))
    rows = (
        Relation.objects.filter(Q(source=memory) | Q(target=memory))
        .select_related("source", "target", "actor")
        .defer("source__embedding", "target__embedding")
        .order_by("-created_at")[:200]
    )
    out = []
    for rel in rows:
        outgoing = rel.source_id == memory.pk
        other = rel.target if outgoing else rel.source
        out.append(
            {
                "relation": rel,
                "outgoing": outgoing,
                "other": other if other.scope_id in readable else None,
                "verb": rel.get_kind_display().lower()
                if outgoing
                else INVERSE_VERBS.get(rel.kind, rel.kind)
                if rel.kind != "derived_from"
                else "is the origin of",
            }
        )
    return out


def memory_reinforcements(memory: Memory, limit: int = 2000) -> list[ReinforcementEvent]:
    return list(memory.reinforcements.order_by("at")[:limit])


def memory_audit(memory: Memory, limit: int = 200) -> list[AuditEvent]:
    return list(
        AuditEvent.objects.filter(target_type="memory", target_id=str(memory.pk)).order_by("at", "pk")[:limit]
    )


def status_changes(memory_ids: list[int], since: datetime | None = None) -> dict[int, list[AuditEvent]]:
    """Audit events that changed the status of these memories, grouped by memory, oldest first."""
    qs = (
        AuditEvent.objects.filter(target_type="memory", target_id__in=[str(i) for i in memory_ids])
        .exclude(after_status="")
        .exclude(before_status="")
    )
    if since is not None:
        qs = qs.filter(at__gte=since)
    grouped: dict[int, list[AuditEvent]] = {}
    for event in qs.order_by("at", "pk"):
        if event.before_status != event.after_status:
            grouped.setdefault(int(event.target_id), []).append(event)
    return grouped


# --- Timeline and graph -------------------------------------------------------------------------------


def top_memories(principal: Principal, scope: Scope | None, limit: int = 15) -> list[Memory]:
    now = timezone.now()
    # Rank by log A(t) = log K − λ·t (same order as A, no exp per row) reading only the covering index
    # of migration 0005; then fetch the few rows shown.
    log_a = RawSQL(log_activation_sql(), [days(now)])
    ids = list(
        Memory.objects.filter(scope_id__in=governed_scope_ids(principal, scope), status=Status.ACTIVE)
        .order_by(log_a.desc(), "-pk")
        .values_list("pk", flat=True)[:limit]
    )
    # The scope for each memory's label (memoryui/labels.py), in the same query.
    rows = {
        m.pk: m
        for m in Memory.objects.filter(pk__in=ids).with_activation(now).light().select_related("scope")
    }
    return [rows[pk] for pk in ids if pk in rows]


def reinforcements_for(memory_ids: list[int]) -> dict[int, list[tuple[datetime, float]]]:
    grouped: dict[int, list[tuple[datetime, float]]] = {}
    rows = (
        ReinforcementEvent.objects.filter(memory_id__in=memory_ids)
        .order_by("at")
        .values_list("memory_id", "at", "weight")
    )
    for memory_id, at, weight in rows:
        grouped.setdefault(memory_id, []).append((at, weight))
    return grouped


def relation_graph(
    principal: Principal, scope: Scope | None, *, max_edges: int = 2000, kinds: list[str] | None = None
) -> dict:
    """Relations between memories the principal may read (both ends), newest first, capped; only of
    `kinds` when given."""
    ids = set(governed_scope_ids(principal, scope))
    edges: list[tuple[int, int, str]] = []
    chunk: list = []
    relations = Relation.objects.filter(kind__in=kinds) if kinds else Relation.objects.all()
    if scope is None or scope.parent_id is None:
        # A whole workspace: the newest relations, with their ends looked up by id, are cheap whatever
        # the size of the memory table, and most of them are readable here.
        chunk = list(relations.order_by("-pk").values_list("source_id", "target_id", "kind")[:GRAPH_CHUNK])
        ends = {i for s, t, _ in chunk for i in (s, t)}
        scope_of = dict(by_ids(graph_memories(), ends).values_list("pk", "scope_id"))
        edges = [(s, t, k) for s, t, k in chunk if scope_of.get(s) in ids and scope_of.get(t) in ids]
    if len(edges) <= max_edges and (
        scope is not None and scope.parent_id is not None or len(chunk) == GRAPH_CHUNK
    ):
        # A narrower scope: let PostgreSQL find its relations through the memories of its scopes.
        edges = list(
            relations.filter(
                Exists(graph_memories().filter(pk=OuterRef("source_id"), scope_id__in=ids)),
                Exists(graph_memories().filter(pk=OuterRef("target_id"), scope_id__in=ids)),
            )
            .order_by("-pk")
            .values_list("source_id", "target_id", "kind")[: max_edges + 1]
        )
    truncated = len(edges) > max_edges
    edges = edges[:max_edges]
    node_ids = {e[0] for e in edges} | {e[1] for e in edges}
    nodes = list(
        by_ids(graph_memories(), node_ids)
        .order_by("-pk")
        .values("pk", "status", "kind", "key", "revision", "text", "scope__path")
    )
    return {"nodes": nodes, "edges": edges, "truncated": truncated}
