"""A server-side layout for relation graphs of up to a few thousand nodes.

Relation graphs of memory are many small components (a supersede chain, a claim with its evidence), so we
lay out each connected component on its own with a vectorised force-directed pass (cost grows with the
square of the component, not of the graph) and pack the components on shelves, largest first."""

from __future__ import annotations

import math

import numpy as np

ITERATIONS = 60
BIG_COMPONENT = 400  # above this the O(n²) force pass is replaced by a circle (still readable, bounded time)


def components(node_ids: list[int], edges: list[tuple[int, int]]) -> list[list[int]]:
    parent = {n: n for n in node_ids}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
    groups: dict[int, list[int]] = {}
    for n in node_ids:
        groups.setdefault(find(n), []).append(n)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def _force(n: int, pairs: np.ndarray, seed: int) -> np.ndarray:
    """Fruchterman–Reingold on one component; returns positions roughly in a disc of radius ~sqrt(n)."""
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-1, 1, size=(n, 2)) * math.sqrt(n)
    k = 1.0
    temp = math.sqrt(n)
    for _ in range(ITERATIONS):
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.sqrt((delta**2).sum(-1)) + 1e-9
        disp = (delta / dist[..., None] * (k * k / dist)[..., None]).sum(1)
        if len(pairs):
            d = pos[pairs[:, 0]] - pos[pairs[:, 1]]
            length = np.sqrt((d**2).sum(-1)) + 1e-9
            pull = d / length[:, None] * (length**2 / k)[:, None]
            np.add.at(disp, pairs[:, 0], -pull)
            np.add.at(disp, pairs[:, 1], pull)
        length = np.sqrt((disp**2).sum(-1)) + 1e-9
        pos += disp / length[:, None] * np.minimum(length, temp)[:, None]
        temp *= 0.92
    return pos - pos.mean(0)


def _component_positions(group: list[int], edges: list[tuple[int, int]]) -> np.ndarray:
    n = len(group)
    if n == 1:
        return np.zeros((1, 2))
    if n == 2:
        return np.array([[-0.6, 0.0], [0.6, 0.0]])
    if n > BIG_COMPONENT:
        angles = np.linspace(0, 2 * math.pi, n, endpoint=False)
        radius = n / (2 * math.pi) * 1.2
        return np.stack([np.cos(angles), np.sin(angles)], 1) * radius
    index = {node: i for i, node in enumerate(group)}
    pairs = np.array(
        [(index[a], index[b]) for a, b in edges if a in index and b in index], dtype=int
    ).reshape(-1, 2)
    return _force(n, pairs, seed=group[0])


def layout(node_ids: list[int], edges: list[tuple[int, int]]) -> dict[int, tuple[float, float]]:
    """Positions for every node: components laid out one by one and packed in rows."""
    by_component: dict[int, list[tuple[int, int]]] = {}
    groups = components(node_ids, edges)
    where = {n: gi for gi, g in enumerate(groups) for n in g}
    for a, b in edges:
        by_component.setdefault(where[a], []).append((a, b))
    placed: dict[int, tuple[float, float]] = {}
    row_width = max(20.0, math.sqrt(len(node_ids)) * 3.0)
    x = y = row_height = 0.0
    gap = 1.5
    for gi, group in enumerate(groups):
        pos = _component_positions(group, by_component.get(gi, []))
        lo, hi = pos.min(0), pos.max(0)
        w, h = hi - lo
        if x > 0 and x + w > row_width:
            x, y = 0.0, y - row_height - gap
            row_height = 0.0
        for node, (px, py) in zip(group, pos - lo, strict=True):
            placed[node] = (round(float(x + px), 3), round(float(y - py), 3))
        x += w + gap
        row_height = max(row_height, h)
    return placed


CURVE = 0.22  # the bend of each parallel edge: its apex sits offset × length off the straight line
CURVE_SAMPLES = 9
ARROW_AT = 0.72  # arrowheads sit this far along the edge, clear of the target's marker


def edge_geometry(edges: list[tuple[int, int, str]], positions: dict[int, tuple[float, float]]) -> list[dict]:
    """How to draw each directed edge: its points and its arrowhead (position, and angle clockwise from
    up, as Plotly's marker.angle reads it). Edges between the same two memories, in either direction,
    get distinct offsets (j − (n−1)/2)·CURVE about the straight line, so a `contradicts` and a
    `supersedes` between the same pair are two visible curves; a lone edge stays straight."""
    pairs: dict[tuple[int, int], list[int]] = {}
    for i, (a, b, _) in enumerate(edges):
        pairs.setdefault((min(a, b), max(a, b)), []).append(i)
    out: list[dict] = [{} for _ in edges]
    for (lo, hi), members in pairs.items():
        (x0, y0), (x1, y1) = positions[lo], positions[hi]
        # the normal of the pair's canonical direction, so opposite edges bend to opposite sides too
        nx, ny = -(y1 - y0), x1 - x0
        members.sort(key=lambda i: (edges[i][2], edges[i][0]))
        for j, i in enumerate(members):
            a, b, kind = edges[i]
            offset = (j - (len(members) - 1) / 2) * CURVE
            (ax, ay), (bx, by) = positions[a], positions[b]
            cx, cy = (ax + bx) / 2 + 2 * offset * nx, (ay + by) / 2 + 2 * offset * ny
            ts = [k / (CURVE_SAMPLES - 1) for k in range(CURVE_SAMPLES)] if offset else [0.0, 1.0]
            xs = [round((1 - t) ** 2 * ax + 2 * (1 - t) * t * cx + t * t * bx, 3) for t in ts]
            ys = [round((1 - t) ** 2 * ay + 2 * (1 - t) * t * cy + t * t * by, 3) for t in ts]
            t = ARROW_AT
            px, py = (
                (1 - t) ** 2 * ax + 2 * (1 - t) * t * cx + t * t * bx,
                (1 - t) ** 2 * ay + 2 * (1 - t) * t * cy + t * t * by,
            )
            tx, ty = 2 * (1 - t) * (cx - ax) + 2 * t * (bx - cx), 2 * (1 - t) * (cy - ay) + 2 * t * (by - cy)
            out[i] = {
                "source": a,
                "target": b,
                "kind": kind,
                "offset": round(offset, 3),
                "x": xs,
                "y": ys,
                "arrow": [round(px, 3), round(py, 3), round(math.degrees(math.atan2(tx, ty)), 1)],
            }
    return out
