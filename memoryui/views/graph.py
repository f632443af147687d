"""Graph: the relations between a scope's memories (supersedes, contradicts, supports, derived_from), or
around one memory (`?memory=<id>&depth=1|2`); directed, parallel edges drawn apart, filtered by kind."""

from __future__ import annotations

import hashlib
from urllib.parse import urlencode

from django.http import JsonResponse
from django.urls import reverse

from governance.models import RelationKind, Status
from governance.runtime.degraded import cache_get, cache_set
from governance.selectors import dashboard as sel
from memoryui.forms.graph import BAD_DEPTH, BAD_KIND, BAD_MEMORY, GraphForm  # noqa: F401  (where they were)
from memoryui.labels import memory_label
from memoryui.views.base import cleaned, dashboard_view, page
from memoryui.views.layout import edge_geometry, layout

LAYOUT_CACHE_SECONDS = 3600


def _params(request) -> dict:
    """The graph's query: relation kinds to show (all when none), and the memory to centre on with a depth."""
    data = cleaned(GraphForm(request.GET))
    return {"kinds": data["kind"], "memory": data["memory"], "depth": data["depth"]}


def _data_query(request, params: dict) -> str:
    """The page's own query again, for the chart's data URL: the focused scope and the graph's parameters."""
    pairs = [("scope", request.scope.path)] if request.scope else []
    pairs += [("kind", kind) for kind in params["kinds"]]
    if params["memory"]:
        pairs += [("memory", params["memory"]), ("depth", params["depth"])]
    return urlencode(pairs)


@dashboard_view()
def graph(request):
    params = _params(request)
    centre = sel.memory_for_reader(request.principal, params["memory"]) if params["memory"] else None
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
            "data_query": _data_query(request, params),
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
