"""How the fuse stage combines the search paths' lists: repeated turns collapsed to one entry per list, then
reciprocal rank fusion. Kept apart from the stages (recall.py) so the rules can be read and tested alone."""

from __future__ import annotations

from governance.models import Kind


def repeat_key(row: dict) -> tuple | None:
    """What makes two turns the same thing said again: one scope, one speaker, the same words (case and
    spacing aside). Only turns: a keyed fact or a rule stated again is a version, which adjudication reads."""
    if row.get("kind") != Kind.EPISODIC:
        return None
    text = " ".join((row.get("text") or "").lower().split())
    return (row.get("scope_id"), (row.get("speaker") or "").strip().lower(), text) if text else None


def repeat_keys(rows: dict[int, dict], known: dict[int, tuple | None]) -> dict[int, tuple | None]:
    """`known` with the repeat key of every row it lacks added. A key reads the whole text (a long turn is
    thousands of characters) and depends only on what a row never changes (its scope, speaker and text),
    so the recall computes the keys of the keyword stages' rows while the query is embedded and fusion,
    after it, only those of the rows the vector search alone found."""
    for memory_id, row in rows.items():
        if memory_id not in known:
            known[memory_id] = repeat_key(row)
    return known


def collapse_repeats(
    lists: dict[str, list[tuple[int, float]]],
    rows: dict[int, dict],
    keys: dict[int, tuple | None] | None = None,
) -> dict[str, list[tuple[int, float]]]:
    """Each list with every repeated turn collapsed into one entry, at the best rank any of its copies had
    in that list. A line said twenty times ("How are the kids doing?") then takes one place in a list
    instead of twenty, and the turns below it move up. The copy kept is the latest one said (the same in
    every list, so fusion adds up its paths). Ids without a row (no longer eligible) are left out."""
    keep: dict[tuple, int] = {}
    # Each row's key once (repeat_keys), those computed before reused.
    keys = repeat_keys(rows, {} if keys is None else keys)
    for memory_id, row in rows.items():
        key = keys[memory_id]
        if key is None:
            continue
        held = keep.get(key)
        if held is None or _said(row, memory_id) > _said(rows[held], held):
            keep[key] = memory_id
    out: dict[str, list[tuple[int, float]]] = {}
    for path, ranked in lists.items():
        seen: set[int] = set()
        collapsed = []
        for memory_id, score in ranked:
            row = rows.get(memory_id)
            if row is None:
                continue
            key = keys[memory_id]
            kept = keep[key] if key is not None else memory_id
            if kept in seen:
                continue
            seen.add(kept)
            collapsed.append((kept, score))
        out[path] = collapsed
    return out


def dropped_ids(lists: dict, rows: dict, fused: dict, ordered: list[int], kept: int, hits: dict) -> dict:
    """What the fuse stage left out, by reason, as memory ids (the trace's counts["fuse"]["ids"]): found by
    more than one path (counted once, still in), a repeated turn folded into its latest copy, below the cut
    (`ordered` past `kept`: the nearest misses first), and no longer eligible when read."""
    paths_of: dict[int, int] = {}
    for ranked in lists.values():
        for memory_id, _ in ranked:
            paths_of[memory_id] = paths_of.get(memory_id, 0) + 1
    listed = sorted(paths_of)
    return {
        "found_twice": [i for i in listed if paths_of[i] > 1],
        "collapsed": [i for i in listed if i in rows and i not in fused],
        "cut": ordered[kept:],
        "changed": [i for i in listed if i not in rows and i not in fused]
        + [i for i in ordered[:kept] if i not in hits],
    }


def _said(row: dict, memory_id: int) -> tuple:
    at = row.get("occurred_at") or row.get("created_at")
    return (at.timestamp() if at is not None else 0.0, memory_id)
