"""The relation graph around one memory: its neighbours to depth 1 or 2, only among memories the reader
may read (the memory itself is a 404 when it may not)."""

from __future__ import annotations

from django.db.models import Q

from governance.models import Principal, Relation
from governance.permissions import memory_readable_scopes
from governance.selectors.dashboard.common import by_ids, graph_memories
from governance.selectors.dashboard.memories import memory_for_reader

NEIGHBOURHOOD_MAX_EDGES = 500


def memory_neighbourhood(
    principal: Principal,
    memory_id: int,
    *,
    depth: int = 1,
    kinds: list[str] | None = None,
    max_edges: int = NEIGHBOURHOOD_MAX_EDGES,
) -> dict:
    """Relations reaching `depth` steps out from the memory (either direction), newest first, whose both ends
    the principal may read by id (permissions.memory_readable_scopes, the memory page's rule); capped at
    `max_edges`. The same shape as relation_graph, plus the centre. A fixed number of queries: the
    reader's access (4), two per step out, the nodes."""
    centre = memory_for_reader(principal, memory_id)
    readable = set(memory_readable_scopes(principal).values_list("pk", flat=True))
    relations = Relation.objects.filter(kind__in=kinds) if kinds else Relation.objects.all()
    scope_of: dict[int, int] = {centre.pk: centre.scope_id}
    seen_edges: dict[tuple[int, int, str], None] = {}
    frontier = visited = {centre.pk}
    truncated = False
    for _ in range(depth):
        rows = list(
            relations.filter(Q(source_id__in=frontier) | Q(target_id__in=frontier))
            .order_by("-pk")
            .values_list("source_id", "target_id", "kind")[: max_edges + 1]
        )
        unknown = {i for s, t, _ in rows for i in (s, t)} - scope_of.keys()
        if unknown:
            scope_of.update(by_ids(graph_memories(), unknown).values_list("pk", "scope_id"))
        reached = set()
        for s, t, k in rows:
            if scope_of.get(s) in readable and scope_of.get(t) in readable:
                if (s, t, k) not in seen_edges and len(seen_edges) >= max_edges:
                    truncated = True
                    break
                seen_edges.setdefault((s, t, k))
                reached |= {s, t}
        frontier = reached - visited
        visited = visited | reached
        if not frontier or truncated:
            break
    edges = list(seen_edges)
    node_ids = {centre.pk} | {e[0] for e in edges} | {e[1] for e in edges}
    nodes = list(
        by_ids(graph_memories(), node_ids)
        .order_by("-pk")
        .values("pk", "status", "kind", "key", "revision", "text", "scope__path")
    )
    return {"nodes": nodes, "edges": edges, "truncated": truncated, "centre": centre.pk}
