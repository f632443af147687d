"""Stage 3, adjudicate: read the relations between what was recalled.

- supersedes: the old version goes to negative context ("no longer in force: …, replaced by …"), never
  to the evidence, and an in-force fact brings the versions it replaced along as negative context;
- contradicts: both are flagged and the packet says which one wins and why (in force beats unconfirmed,
  then higher confidence, then the newer one);
- supports: evidence is grouped (each block lists what supports it).
"""

from __future__ import annotations

from django.db import connection

from governance.models import Relation, RelationKind, Status
from governance.recall.recall import fetch
from governance.recall.state import Hit, RecallState

MAX_CHAIN = 10


def _replacement(state: RecallState, old_id: int, edges: dict[int, list[int]], rows: dict[int, dict]) -> dict | None:
    """Follow supersedes links from an old memory to the version now in force (or the newest one)."""
    current, seen = old_id, set()
    for _ in range(MAX_CHAIN):
        newer = [n for n in edges.get(current, []) if n in rows and n not in seen]
        if not newer:
            break
        seen.add(current)
        current = max(newer, key=lambda n: rows[n]["revision"])
        if rows[current]["status"] == Status.ACTIVE:
            break
    return rows.get(current) if current != old_id else None


def adjudicate(state: RecallState) -> tuple[int, int]:
    pool: dict[int, Hit] = dict(state.hits)
    for hit in state.constraints + state.preferences:
        pool.setdefault(hit.id, hit)
    n_in = len(pool)
    relations = _relations_touching(pool.keys(), (RelationKind.SUPERSEDES, RelationKind.CONTRADICTS,
                                                  RelationKind.SUPPORTS))
    superseded_hits = [h for h in pool.values() if h.row["status"] == Status.SUPERSEDED]
    if not relations and not superseded_hits:
        return n_in, len(state.hits)  # nothing to adjudicate: spare the fetches (the common case)
    supersedes = [r for r in relations if r["kind"] == RelationKind.SUPERSEDES]
    # New → old edges; walk from old to new needs old → [new].
    newer_of: dict[int, list[int]] = {}
    for rel in supersedes:
        newer_of.setdefault(rel["target_id"], []).append(rel["source_id"])
    chain_ids = _chain_ids(supersedes)
    rows = fetch(state, sorted(chain_ids | set(pool)), statuses=(Status.ACTIVE, Status.SUPERSEDED))
    negatives: dict[int, Hit] = {}
    for hit in superseded_hits:
        _to_negative(state, hit, newer_of, rows, negatives)
        state.hits.pop(hit.id, None)
    # An in-force fact we present brings the versions it replaced, so the agent knows what changed.
    for rel in supersedes:
        if rel["source_id"] in pool and pool[rel["source_id"]].row["status"] == Status.ACTIVE:
            old = rows.get(rel["target_id"])
            if old is not None and old["status"] == Status.SUPERSEDED and old["id"] not in negatives:
                _to_negative(state, Hit(id=old["id"], row=old, paths={"superseded_by"}), newer_of, rows, negatives)
    state.negative = list(negatives.values())
    _contradictions(state, relations, pool)
    _supports(state, relations, pool)
    return n_in, len(state.hits) + len(state.negative)


def _relations_touching(ids, kinds: tuple[str, ...]) -> list[dict]:
    """Relations of `kinds` with either end in `ids`, oldest first. Two index scans joined by UNION
    rather than `source IN … OR target IN …`: same rows, but the OR form made the planner weigh a
    BitmapOr over every index of the table, milliseconds of planning per request."""
    ids, kinds = list(ids), [str(k.value) if hasattr(k, "value") else str(k) for k in kinds]
    if not ids:
        return []
    columns = "id, source_id, target_id, kind, reason"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {columns} FROM governance_relation WHERE kind = ANY(%s) AND source_id = ANY(%s)"
            f" UNION SELECT {columns} FROM governance_relation WHERE kind = ANY(%s) AND target_id = ANY(%s)"
            " ORDER BY id",
            [kinds, ids, kinds, ids],
        )
        return [dict(zip(("id", "source_id", "target_id", "kind", "reason"), row, strict=True))
                for row in cursor.fetchall()]


def _chain_ids(supersedes: list[dict]) -> set[int]:
    ids: set[int] = set()
    for rel in supersedes:
        ids.update((rel["source_id"], rel["target_id"]))
    # One more hop each way covers a chain r1 → r2 → r3 recalled at r1.
    for rel in _relations_touching(ids, (RelationKind.SUPERSEDES,)):
        ids.update((rel["source_id"], rel["target_id"]))
    return ids


def _to_negative(state: RecallState, hit: Hit, newer_of, rows, negatives: dict[int, Hit]) -> None:
    if hit.id not in newer_of:
        more = Relation.objects.filter(kind=RelationKind.SUPERSEDES, target_id=hit.id).values_list("source_id", flat=True)
        newer_of[hit.id] = list(more)
        missing = [n for n in newer_of[hit.id] if n not in rows]
        rows.update(fetch(state, missing, statuses=(Status.ACTIVE, Status.SUPERSEDED)))
    replacement = _replacement(state, hit.id, newer_of, rows)
    hit.extra["replaced_by"] = (
        {"memory_id": replacement["id"], "revision": replacement["revision"], "text": replacement["text"],
         "status": replacement["status"]}
        if replacement else None
    )
    negatives[hit.id] = hit


def _in_force(row: dict) -> bool:
    return row["status"] == Status.ACTIVE and row.get("confirmed") is not False


def _winner(a: dict, b: dict) -> tuple[dict, str]:
    if _in_force(a) != _in_force(b):
        return (a, "it is confirmed and in force") if _in_force(a) else (b, "it is confirmed and in force")
    if abs(a["confidence"] - b["confidence"]) > 1e-9:
        return (a, "higher confidence") if a["confidence"] > b["confidence"] else (b, "higher confidence")
    return (a, "more recent") if (a["occurred_at"] or a["created_at"]) >= (b["occurred_at"] or b["created_at"]) \
        else (b, "more recent")


def _contradictions(state: RecallState, relations: list[dict], pool: dict[int, Hit]) -> None:
    for rel in relations:
        if rel["kind"] != RelationKind.CONTRADICTS:
            continue
        a, b = pool.get(rel["source_id"]), pool.get(rel["target_id"])
        if a is None or b is None:
            continue
        winner, why = _winner(a.row, b.row)
        loser = b if winner["id"] == a.id else a
        for hit in (a, b):
            hit.flags.append(f"contradicts {(b if hit is a else a).id}")
        loser.flags.append(f"loses to {winner['id']}: {why}")
        state.relations.append({
            "memory_id": winner["id"], "kind": "contradicts", "key": winner["key"], "revision": winner["revision"],
            "status": winner["status"], "text": winner["text"],
            "source": {"kind": "relation", "ref": ""}, "score": 1.0,
            "reason": f"memories {a.id} and {b.id} contradict each other; {winner['id']} wins: {why}",
            "contradicts": loser.id,
            # Each memory's text in a block of its own id (rendered "W (contradicts: L)"), so forgetting
            # either one redacts exactly its text (governance/propagation/turns.py).
            "contradicted": {"memory_id": loser.id, "revision": loser.row["revision"], "status": loser.row["status"],
                             "text": loser.row["text"]},
        })


def _supports(state: RecallState, relations: list[dict], pool: dict[int, Hit]) -> None:
    for rel in relations:
        if rel["kind"] != RelationKind.SUPPORTS:
            continue
        supporter, supported = pool.get(rel["source_id"]), pool.get(rel["target_id"])
        if supported is not None:
            supported.extra.setdefault("supported_by", []).append(rel["source_id"])
        if supporter is not None and supported is not None:
            supporter.extra["supports"] = rel["target_id"]
