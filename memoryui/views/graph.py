"""Graph: the relations between a scope's memories (supersedes, contradicts, supports, derived_from), or
around one memory (`?memory=<id>&depth=1|2`); directed, parallel edges drawn apart, filtered by kind."""

from __future__ import annotations

import hashlib

from django.http import JsonResponse
from django.urls import reverse

from governance.errors import InvalidInput
from governance.models import RelationKind, Status
from governance.runtime.degraded import cache_get, cache_set
from governance.selectors import dashboard as sel
from memoryui.labels import memory_label
from memoryui.views.base import dashboard_view, page
from memoryui.views.layout import edge_geometry, layout

LAYOUT_CACHE_SECONDS = 3600
BAD_KIND = "kind is one of supersedes, contradicts, supports or derived_from."
BAD_MEMORY = "memory is a memory's number (a whole number)."
BAD_DEPTH = "depth is 1 or 2."


def _params(request) -> dict:
    """The graph's query: relation kinds to show (all when none), and the memory to centre on with a depth."""
    kinds = request.GET.getlist("kind")
    if any(k not in RelationKind.values for k in kinds):
        raise InvalidInput(BAD_KIND, field="kind")
    memory = request.GET.get("memory", "").strip()
    try:
        memory_id = int(memory) if memory else None
    except ValueError as exc:
        raise InvalidInput(BAD_MEMORY, field="memory") from exc
    depth = request.GET.get("depth", "1")
    if depth not in ("1", "2"):
        raise InvalidInput(BAD_DEPTH, field="depth")
    return {"kinds": kinds, "memory": memory_id, "depth": int(depth)}


@dashboard_view()
def graph(request):
    params = _params(request)
    centre = sel.memory_for_reader(request.principal, params["memory"]) if params["memory"] else None
    query = request.GET.copy()
    return page(
        request,
        "dashboard/graph.html",
        {
            "relation_kinds": RelationKind.choices,
            "statuses": Status.choices,
            "nav": "graph",
            "kinds": params["kinds"] or list(RelationKind.values),
            "centre": centre,
            "depth": params["depth"],
            "data_query": query.urlencode(),
        },
    )


def _cached_layout(node_ids: list[int], edges: list[tuple[int, int]]) -> dict[int, tuple[float, float]]:
    """The layout depends only on the graph's shape; the same shape is laid out once per hour."""
    digest = hashlib.sha256(repr((sorted(node_ids), sorted(edges))).encode()).hexdigest()
    key = f"dash:layout:{digest}"
    found = cache_get(key)
    if found is not None:
        return {int(k): tuple(v) for k, v in found.items()}
    positions = layout(node_ids, edges)
    cache_set(key, {str(k): v for k, v in positions.items()}, LAYOUT_CACHE_SECONDS)
    return positions


@dashboard_view(json=True)
def graph_json(request):
    params = _params(request)
    if params["memory"]:
        data = sel.memory_neighbourhood(
            request.principal, params["memory"], depth=params["depth"], kinds=params["kinds"]
        )
    else:
        data = sel.relation_graph(request.principal, request.scope, kinds=params["kinds"])
    node_ids = [n["pk"] for n in data["nodes"]]
    pairs = [(a, b) for a, b, _ in data["edges"]]
    positions = _cached_layout(node_ids, pairs)
    nodes = []
    # reverse() per node costs more than the whole layout lookup at a few thousand nodes.
    url = reverse("dashboard:memory", args=[0]).replace("/0/", "/{}/")
    for n in data["nodes"]:
        x, y = positions[n["pk"]]
        forgotten = n["status"] == Status.FORGOTTEN
        label = memory_label(
            pk=n["pk"],
            key=n["key"],
            revision=n["revision"],
            scope_path=n["scope__path"],
            text=n["text"],
            hidden=forgotten,
        )
        nodes.append(
            {
                "id": n["pk"],
                "x": x,
                "y": y,
                "status": n["status"],
                "kind": n["kind"],
                "label": label,
                "text": "(forgotten)" if forgotten else n["text"][:80],
                "scope": n["scope__path"],
                "url": url.format(n["pk"]),
            }
        )
    # One trace per kind (lines joined by gaps) with its arrowheads; `links` lists each edge's ends and bend.
    edges: dict[str, dict] = {}
    links = []
    for g in edge_geometry(data["edges"], positions):
        e = edges.setdefault(
            g["kind"], {"x": [], "y": [], "arrows": {"x": [], "y": [], "angle": []}, "count": 0}
        )
        e["x"] += [*g["x"], None]
        e["y"] += [*g["y"], None]
        for axis, value in zip(("x", "y", "angle"), g["arrow"], strict=True):
            e["arrows"][axis].append(value)
        e["count"] += 1
        links.append({"source": g["source"], "target": g["target"], "kind": g["kind"], "offset": g["offset"]})
    return JsonResponse(
        {
            "nodes": nodes,
            "edges": edges,
            "links": links,
            "truncated": data["truncated"],
            "edge_count": len(data["edges"]),
            "centre": data.get("centre"),
        }
    )
