"""Stage 3, adjudicate: read the relations between what was recalled.

- supersedes: the old version goes to negative context ("no longer in force: …, replaced by …"), never
  to the evidence, and an in-force fact brings the versions it replaced along as negative context;
- contradicts: both are flagged and the packet says which one wins and why (in force beats unconfirmed,
  then higher confidence, then the newer one); a contradiction a person linked by hand also brings its
  other end (when readable and active) when the query recalled only one, and its reason is quoted;
- supports: evidence is grouped (each block lists what supports it); with the relations stage, what a
  person said supports a recalled fact in force comes along with it, even when it shares no words with
  the question (the incident review behind a freeze rule): why the rule holds is evidence too.

With the relations stage (`full`), adjudication also reads provenance: an episode (a stored turn) whose
lesson is no longer in force — a memory extracted from it (`derived_from`) or citing it (its
`source_ref`) was superseded, retired or forgotten — or that a person marked as superseded/contradicted
by a later episode, goes to negative context with what replaced it, so the user's old message never
stands as a live instruction beside the rule that replaced it. One statement for all candidates.
"""

from __future__ import annotations

from governance.models import PrincipalKind, Relation, RelationKind, Status
from governance.recall.disputes import mark_disputes
from governance.recall.rank import KEYED_MATCH
from governance.recall.recall import fetch
from governance.recall.state import Hit, RecallState
from governance.recall.strategies import RELATIONS
from governance.runtime.replica import read_connection

MAX_CHAIN = 10


def _replacement(
    state: RecallState, old_id: int, edges: dict[int, list[int]], rows: dict[int, dict]
) -> dict | None:
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


def adjudicate(state: RecallState) -> tuple[int, int, dict]:
    pool: dict[int, Hit] = dict(state.hits)
    for hit in state.constraints + state.preferences:
        pool.setdefault(hit.id, hit)
    n_in = len(state.hits)  # the fused candidates; the keyed facts are checked beside them, not counted
    before = set(state.hits)
    outdated = _outdated_episodes(state) if RELATIONS in state.stages else []
    # Proposed contradictions no person has decided: both stay, marked in dispute (recall/disputes.py).
    mark_disputes(state, pool)
    relations = _pool_relations(pool)
    superseded_hits = [h for h in pool.values() if h.row["status"] == Status.SUPERSEDED]
    if not relations and not superseded_hits:
        state.negative = outdated
        return n_in, len(state.hits), _counts(state, before, len(pool) - n_in)  # nothing more to adjudicate
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
                _to_negative(
                    state, Hit(id=old["id"], row=old, paths={"superseded_by"}), newer_of, rows, negatives
                )
    state.negative = list(negatives.values()) + outdated
    _contradictions(state, relations, pool)
    _supports(state, relations, pool)
    if RELATIONS in state.stages:
        _bring_supporters(state, relations, pool)
    return n_in, len(state.hits), _counts(state, before, len(pool) - n_in)


def _counts(state: RecallState, before: set[int], keyed: int) -> dict:
    """What the trace says beside in/out, so the counts add up: candidates moved to the negative context
    (no longer in force), dropped otherwise, supporters brought in, keyed facts checked alongside."""
    negative = {h.id for h in state.negative}
    gone = before - set(state.hits)
    return {
        "keyed": keyed,
        "negative": len(state.negative),
        "to_negative": len(gone & negative),
        "dropped": len(gone - negative),
        "added": len(set(state.hits) - before),
        "ids": {"to_negative": sorted(gone & negative), "dropped": sorted(gone - negative)},
    }


ADJUDICATED = (RelationKind.SUPERSEDES, RelationKind.CONTRADICTS, RelationKind.SUPPORTS)


def _pool_relations(pool: dict[int, Hit]) -> list[dict]:
    """Relations of the ADJUDICATED kinds with either end in the pool, oldest first. Each row the search
    stages read carries its own (recall.COLUMNS), so this is no query; a row read without them (none
    today) is asked for here."""
    found: dict[int, dict] = {}
    unknown = []
    for hit in pool.values():
        relations = hit.row.get("relations")
        if relations is None:
            unknown.append(hit.id)
            continue
        found.update((rel["id"], rel) for rel in relations if rel["kind"] in ADJUDICATED)
    found.update((rel["id"], rel) for rel in _relations_touching(unknown, ADJUDICATED))
    return [found[i] for i in sorted(found)]


def _relations_touching(ids, kinds: tuple[str, ...]) -> list[dict]:
    """Relations of `kinds` with either end in `ids`, oldest first. Two index scans joined by UNION
    rather than `source IN … OR target IN …`: same rows, but the OR form made the planner weigh a
    BitmapOr over every index of the table, milliseconds of planning per request."""
    ids, kinds = list(ids), [str(k.value) if hasattr(k, "value") else str(k) for k in kinds]
    if not ids:
        return []
    names = ("id", "source_id", "target_id", "kind", "reason", "by_hand")
    columns = ", ".join(names)
    with read_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT {columns} FROM governance_relation WHERE kind = ANY(%s) AND source_id = ANY(%s)"
            f" UNION SELECT {columns} FROM governance_relation WHERE kind = ANY(%s) AND target_id = ANY(%s)"
            " ORDER BY id",
            [kinds, ids, kinds, ids],
        )
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


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
        more = Relation.objects.filter(kind=RelationKind.SUPERSEDES, target_id=hit.id).values_list(
            "source_id", flat=True
        )
        newer_of[hit.id] = list(more)
        missing = [n for n in newer_of[hit.id] if n not in rows]
        rows.update(fetch(state, missing, statuses=(Status.ACTIVE, Status.SUPERSEDED)))
    replacement = _replacement(state, hit.id, newer_of, rows)
    hit.extra["replaced_by"] = (
        {
            "memory_id": replacement["id"],
            "revision": replacement["revision"],
            "text": replacement["text"],
            "status": replacement["status"],
        }
        if replacement
        else None
    )
    negatives[hit.id] = hit


def _in_force(row: dict) -> bool:
    return row["status"] == Status.ACTIVE and row.get("confirmed") is not False


def _winner(a: dict, b: dict) -> tuple[dict, str]:
    if _in_force(a) != _in_force(b):
        return (a, "it is confirmed and in force") if _in_force(a) else (b, "it is confirmed and in force")
    if abs(a["confidence"] - b["confidence"]) > 1e-9:
        return (a, "higher confidence") if a["confidence"] > b["confidence"] else (b, "higher confidence")
    return (
        (a, "more recent")
        if (a["occurred_at"] or a["created_at"]) >= (b["occurred_at"] or b["created_at"])
        else (b, "more recent")
    )


def _hand_made_other_ends(state: RecallState, relations: list[dict], pool: dict[int, Hit]) -> dict[int, Hit]:
    """The other end of each hand-made contradiction of which only one end was recalled, when the caller
    may read it and it is active: a person said the two disagree, so the packet shows both and says
    which wins, even if the query matched only one. One query."""
    missing = {
        rel["target_id"] if rel["source_id"] in pool else rel["source_id"]
        for rel in relations
        if rel["kind"] == RelationKind.CONTRADICTS
        and rel.get("by_hand")
        and (rel["source_id"] in pool) != (rel["target_id"] in pool)
    }
    rows = fetch(state, sorted(missing), statuses=(Status.ACTIVE,)) if missing else {}
    return {i: Hit(id=i, row=row, paths={"contradicted_by_hand"}) for i, row in rows.items()}


def _contradictions(state: RecallState, relations: list[dict], pool: dict[int, Hit]) -> None:
    others = _hand_made_other_ends(state, relations, pool)
    for rel in relations:
        if rel["kind"] != RelationKind.CONTRADICTS:
            continue
        a = pool.get(rel["source_id"]) or others.get(rel["source_id"])
        b = pool.get(rel["target_id"]) or others.get(rel["target_id"])
        if a is None or b is None:
            continue
        winner, why = _winner(a.row, b.row)
        if rel.get("by_hand"):
            why = f"{why}; a person linked them: {rel['reason']}"
        loser = b if winner["id"] == a.id else a
        for hit in (a, b):
            hit.flags.append(f"contradicts {(b if hit is a else a).id}")
        loser.flags.append(f"loses to {winner['id']}: {why}")
        state.relations.append(
            {
                "memory_id": winner["id"],
                "kind": "contradicts",
                "key": winner["key"],
                "revision": winner["revision"],
                "status": winner["status"],
                "text": winner["text"],
                "source": {"kind": "relation", "ref": ""},
                "score": 1.0,
                "reason": f"memories {a.id} and {b.id} contradict each other; {winner['id']} wins: {why}",
                "contradicts": loser.id,
                # Each memory's text in a block of its own id (rendered "W (contradicts: L)"), so forgetting
                # either one redacts exactly its text (governance/propagation/turns.py).
                "contradicted": {
                    "memory_id": loser.id,
                    "revision": loser.row["revision"],
                    "status": loser.row["status"],
                    "text": loser.row["text"],
                },
            }
        )


def _supports(state: RecallState, relations: list[dict], pool: dict[int, Hit]) -> None:
    for rel in relations:
        if rel["kind"] != RelationKind.SUPPORTS:
            continue
        supporter, supported = pool.get(rel["source_id"]), pool.get(rel["target_id"])
        if supported is not None:
            supported.extra.setdefault("supported_by", []).append(rel["source_id"])
        if supporter is not None and supported is not None:
            supporter.extra["supports"] = rel["target_id"]


# Supporters come along for the rules pinned in force and the best few facts found: at most this many
# each, this many in all, ranked just below what they support. Only links a person (or the system) made count: an agent may link its own
# proposal to a popular rule, and that must not carry the proposal into every packet that holds the rule.
SUPPORT_ANCHORS = 10
SUPPORTERS_PER_FACT = 2
SUPPORTERS_MAX = 6
SUPPORT_SHARE = 0.9


def _bring_supporters(state: RecallState, relations: list[dict], pool: dict[int, Hit]) -> None:
    def in_force(hits):
        return [h for h in hits if h.row["status"] == Status.ACTIVE and h.row.get("confirmed") is not False]

    # Every pinned rule and preference in force (found by key, they have no search score to rank by), and
    # the best matches among the rest.
    pinned_ids = {h.id for h in state.constraints + state.preferences}
    pinned = in_force(pool[i] for i in pinned_ids if i in pool)  # the pool's hit: its search score, if found
    searched = sorted(
        in_force(h for h in pool.values() if h.id not in pinned_ids), key=lambda h: (-h.fused, h.id)
    )[:SUPPORT_ANCHORS]
    anchors = {h.id: h for h in pinned + searched}
    wanted: dict[int, Hit] = {}
    per_fact: dict[int, int] = {}
    for rel in relations:
        anchor = anchors.get(rel["target_id"])
        if (
            rel["kind"] != RelationKind.SUPPORTS
            or anchor is None
            or rel["source_id"] == anchor.id
            or rel["source_id"] in wanted
            or per_fact.get(anchor.id, 0) >= SUPPORTERS_PER_FACT
        ):
            continue
        per_fact[anchor.id] = per_fact.get(anchor.id, 0) + 1
        wanted[rel["source_id"]] = anchor
    if not wanted:
        return
    people = set(
        Relation.objects.filter(kind=RelationKind.SUPPORTS, source_id__in=list(wanted))
        .exclude(actor__kind=PrincipalKind.AGENT)
        .values_list("source_id", "target_id")
    )
    wanted = {sid: a for sid, a in wanted.items() if (sid, a.id) in people}
    # Eligible rows only (scope, grants, as-of): a supporter the caller may not read never comes in.
    rows = fetch(state, [sid for sid in wanted if sid not in pool], statuses=(Status.ACTIVE,))
    for sid, anchor in sorted(wanted.items(), key=lambda item: (-(item[1].fused or KEYED_MATCH), item[0]))[
        :SUPPORTERS_MAX
    ]:
        # A rule found by its key (the constraints slot) has no search score: rank gives it KEYED_MATCH.
        share = (anchor.fused or KEYED_MATCH) * SUPPORT_SHARE
        hit = pool.get(sid)
        if hit is None:  # not found by any search path: comes in with the fact it supports
            if sid not in rows:
                continue
            hit = state.hits[sid] = Hit(id=sid, row=rows[sid])
        elif hit.id not in state.hits or hit.row["status"] != Status.ACTIVE:
            continue  # a rule or preference itself, or not usable as evidence
        hit.fused = max(hit.fused, share)  # found weakly by search, it still ranks with the fact it supports
        hit.paths.add("supports")
        hit.extra["supports"] = anchor.id
        if sid not in anchor.extra.get("supported_by", []):
            anchor.extra.setdefault("supported_by", []).append(sid)


# For each episode: the memories learned from it (extracted: derived_from; or citing its ref in its own
# scope) that are out of force, and the episodes a person marked as superseding or contradicting it that
# came later. For a superseded lesson, the active end of its supersedes chain (recursive, bounded) in a
# scope the request sees: its text is shown, never the text of the forgotten or retired one.
_OUTDATED_SQL = f"""
WITH RECURSIVE ep(id, ref, scope_id, at) AS (
  SELECT * FROM unnest(%(ids)s::bigint[], %(refs)s::text[], %(scopes)s::bigint[], %(ats)s::timestamptz[])
), learned(episode_id, memory_id, link) AS (
  SELECT ep.id, r.source_id, 'derived_from' FROM ep
    JOIN governance_relation r ON r.target_id = ep.id AND r.kind = 'derived_from'
  UNION
  SELECT ep.id, m.id, 'cites' FROM ep
    JOIN governance_memory m ON m.scope_id = ep.scope_id AND m.source_ref = ep.ref
     AND m.status IN ('superseded', 'retired', 'forgotten') AND m.source_ref <> ''
  WHERE ep.ref <> ''
), stale AS (
  SELECT l.episode_id, l.link, m.id, m.key, m.revision, m.status FROM learned l
    JOIN governance_memory m ON m.id = l.memory_id
  WHERE m.status IN ('superseded', 'retired', 'forgotten') AND m.kind <> 'episodic'
    AND m.scope_id = ANY(%(visible)s)
), chain(origin, id, depth) AS (
  SELECT DISTINCT id, id, 0 FROM stale WHERE status = 'superseded'
  UNION ALL
  SELECT c.origin, r.source_id, c.depth + 1 FROM chain c
    JOIN governance_relation r ON r.target_id = c.id AND r.kind = 'supersedes'
  WHERE c.depth < {MAX_CHAIN}
)
SELECT s.episode_id, s.link, s.id, s.key, s.revision, s.status, n.id, n.key, n.revision, n.text, n.source_ref,
       'active'
  FROM stale s LEFT JOIN LATERAL (
    SELECT m.id, m.key, m.revision, m.text, m.source_ref FROM chain c JOIN governance_memory m ON m.id = c.id
    WHERE c.origin = s.id AND c.depth > 0 AND m.status = 'active' AND m.purged_at IS NULL
      AND m.scope_id = ANY(%(visible)s)
    ORDER BY c.depth DESC LIMIT 1) n ON true
UNION ALL
SELECT ep.id, r.kind, later.id, later.key, later.revision, later.status, later.id, later.key, later.revision,
       later.text, later.source_ref, later.status
  FROM ep JOIN governance_relation r ON r.target_id = ep.id AND r.kind IN ('supersedes', 'contradicts')
  JOIN governance_memory later ON later.id = r.source_id
  WHERE later.kind = 'episodic' AND later.status = 'active' AND later.purged_at IS NULL
    AND later.scope_id = ANY(%(visible)s) AND later.occurred_at > ep.at
UNION ALL
SELECT ep.id, 'replaced', req.id, req.key, req.revision, req.status, later.id, later.key, later.revision,
       later.text, later.source_ref, later.status
  FROM ep JOIN governance_relation d ON d.target_id = ep.id AND d.kind = 'derived_from'
  JOIN governance_memory req ON req.id = d.source_id
  JOIN governance_relation c ON c.target_id = req.id AND c.kind = 'contradicts'
  JOIN governance_memory later ON later.id = c.source_id
  WHERE req.status IN ('candidate', 'proposed') AND req.meta->'requirement' ? 'replaced_by'
    AND later.status IN ('candidate', 'proposed', 'active') AND later.purged_at IS NULL
    AND later.meta ? 'requirement' AND later.source_kind = 'user'
    AND later.scope_id = ANY(%(visible)s) AND later.occurred_at > ep.at
"""
_OUTDATED_COLUMNS = (
    "episode_id",
    "link",
    "memory_id",
    "key",
    "revision",
    "status",
    "new_id",
    "new_key",
    "new_revision",
    "new_text",
    "new_ref",
    "new_status",
)


def _label(key: str | None, revision: int | None, memory_id: int) -> str:
    return f"{key} r{revision}" if key else f"memory {memory_id}"


def _outdated_episodes(state: RecallState) -> list[Hit]:
    """Episodes whose lesson is out of force leave the evidence and the recent turns; they are returned
    for negative context, flagged with what replaced them (Hit.extra["outdated"], rendered "OUTDATED: …")."""
    episodes = {
        h.id: h
        for h in [*state.hits.values(), *state.recent]
        if h.row["kind"] == "episodic" and h.row["status"] == Status.ACTIVE and _may_be_outdated(h)
    }
    if not episodes:
        return []
    eps = list(episodes.values())
    with read_connection().cursor() as cursor:
        cursor.execute(
            _OUTDATED_SQL,
            {
                "ids": [h.id for h in eps],
                "refs": [h.row["source_ref"] or "" for h in eps],
                "scopes": [h.row["scope_id"] for h in eps],
                "ats": [h.row["occurred_at"] or h.row["created_at"] for h in eps],
                "visible": list(state.eligibility.scope_ids),
            },
        )
        rows = [dict(zip(_OUTDATED_COLUMNS, row, strict=True)) for row in cursor.fetchall()]
    if not rows:
        return []
    by_episode: dict[int, list[dict]] = {}
    for row in rows:
        episode = episodes[row["episode_id"]]
        if (
            row["link"] in ("derived_from", "cites")
            and row["new_ref"]
            and row["new_ref"] == episode.row["source_ref"]
        ):
            continue  # the rule now in force cites this very turn: it is where the change came from
        by_episode.setdefault(row["episode_id"], []).append(row)
    recent_ids = {h.id for h in state.recent}
    out = []
    for episode_id, found in by_episode.items():
        # A replaced lesson says most (it names the new rule); then a later episode; then a retired one.
        found.sort(
            key=lambda r: (
                r["new_id"] is None,
                r["link"] in ("supersedes", "contradicts", "replaced"),
                r["memory_id"],
            )
        )
        best = found[0]
        hit = episodes[episode_id]
        hit.extra["outdated"] = _outdated(best)
        hit.extra["replaced_by"] = hit.extra["outdated"]["replaced_by"]
        hit.flags.append(f"outdated: {hit.extra['outdated']['why']}")
        state.hits.pop(episode_id, None)
        if episode_id in recent_ids:
            state.recent = [h for h in state.recent if h.id != episode_id]
        out.append(hit)
    return out


def _may_be_outdated(hit: Hit) -> bool:
    """Whether _OUTDATED_SQL can find anything for this episode, from what its row was read with: a
    memory out of force derived from it (recall.COLUMNS reads only those derived_from links), a later
    episode superseding or contradicting it, or a memory out of force citing its ref. Without them (a row
    read some other way) it is asked."""
    relations, cited = hit.row.get("relations"), hit.row.get("cited_by_stale")
    if relations is None or cited is None:
        return True
    return bool(cited) or any(rel["target_id"] == hit.id and rel["kind"] in OUTDATING for rel in relations)


OUTDATING = (RelationKind.DERIVED_FROM, RelationKind.SUPERSEDES, RelationKind.CONTRADICTS)


def _outdated(row: dict) -> dict:
    replaced = None
    if row["new_id"] is not None:
        replaced = {
            "memory_id": row["new_id"],
            "key": row["new_key"],
            "revision": row["new_revision"],
            "text": row["new_text"],
            "status": row.get("new_status") or Status.ACTIVE,
        }
    if row["link"] == "replaced":
        waiting = "" if row.get("new_status") == Status.ACTIVE else ", awaiting a reviewer"
        why = (
            f"the user replaced what it asked for later in the conversation (memory {row['new_id']}{waiting})"
        )
    elif row["link"] in ("supersedes", "contradicts"):
        why = f"a later message (memory {row['new_id']}) {'replaced' if row['link'] == 'supersedes' else 'contradicts'} it"
    else:
        learned = _label(row["key"], row["revision"], row["memory_id"])
        verb = {"superseded": "was superseded", "retired": "was retired", "forgotten": "was forgotten"}[
            row["status"]
        ]
        why = f"what it asked for ({learned}) {verb}"
        if replaced:
            why += f"; replaced by {_label(replaced['key'], replaced['revision'], replaced['memory_id'])}"
    return {
        "why": why,
        "link": row["link"],
        "memory_id": row["memory_id"],
        "key": row["key"],
        "revision": row["revision"],
        "status": row["status"],
        "replaced_by": replaced,
    }
