"""Graph: the relations between a scope's memories (supersedes, contradicts, supports, derived_from)."""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from django.http import JsonResponse
from django.urls import reverse

from governance.models import RelationKind, Status
from governance.selectors import dashboard as sel
from memoryui.views.base import dashboard_view, page
from memoryui.views.layout import layout

LAYOUT_CACHE_SECONDS = 3600


@dashboard_view()
def graph(request):
    return page(request, "dashboard/graph.html", {
        "relation_kinds": RelationKind.choices, "statuses": Status.choices, "nav": "graph",
    })


def _cached_layout(node_ids: list[int], edges: list[tuple[int, int]]) -> dict[int, tuple[float, float]]:
    """The layout depends only on the graph's shape; the same shape is laid out once per hour."""
    digest = hashlib.sha256(repr((sorted(node_ids), sorted(edges))).encode()).hexdigest()
    key = f"dash:layout:{digest}"
    found = cache.get(key)
    if found is not None:
        return {int(k): tuple(v) for k, v in found.items()}
    positions = layout(node_ids, edges)
    cache.set(key, {str(k): v for k, v in positions.items()}, LAYOUT_CACHE_SECONDS)
    return positions


@dashboard_view(json=True)
def graph_json(request):
    data = sel.relation_graph(request.principal, request.scope)
    node_ids = [n["pk"] for n in data["nodes"]]
    pairs = [(a, b) for a, b, _ in data["edges"]]
    positions = _cached_layout(node_ids, pairs)
    nodes = []
    # reverse() per node costs more than the whole layout lookup at a few thousand nodes.
    url = reverse("dashboard:memory", args=[0]).replace("/0/", "/{}/")
    for n in data["nodes"]:
        x, y = positions[n["pk"]]
        forgotten = n["status"] == Status.FORGOTTEN
        label = f"{n['key']} r{n['revision']}" if n["key"] else f"#{n['pk']}"
        nodes.append({
            "id": n["pk"], "x": x, "y": y, "status": n["status"], "kind": n["kind"], "label": label,
            "text": "(forgotten)" if forgotten else n["text"][:80], "scope": n["scope__path"],
            "url": url.format(n["pk"]),
        })
    edges: dict[str, dict] = {}
    for a, b, kind in data["edges"]:
        (ax, ay), (bx, by) = positions[a], positions[b]
        e = edges.setdefault(kind, {"x": [], "y": []})
        e["x"] += [ax, bx, None]
        e["y"] += [ay, by, None]
    return JsonResponse({"nodes": nodes, "edges": edges, "truncated": data["truncated"],
                         "edge_count": len(data["edges"])})
