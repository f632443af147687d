"""Stage 2, recall: candidate lists from each path (pgvector similarity, full text/trigram, the latest
turns, keyed facts in force), fused with reciprocal rank fusion, then fetched in one query that applies
the eligibility predicate again, so what is presented is what the database says right now."""

from __future__ import annotations

import dataclasses
import json

from governance.models import Kind, Status, activation, lexical
from governance.recall import dates, fusion, search, vector
from governance.recall.rank import named_spans, speakers_named
from governance.recall.state import Hit, RecallState
from governance.recall.strategies import LEXICAL, NAMED_TIME, NAMED_TIME_WORDS, SPEAKERS, VECTOR
from governance.runtime.prepared import prepared_cursor
from governance.runtime.replica import read_connection

# RRF: score = Σ w / (K + rank). With the usual K=60, rank 1 and rank 30 of a list differ by a factor of
# 1.5 only, so a turn both lists hold at rank 30 outscored either list's best hit: on the real LoCoMo
# conversations (dev file, 231 answerable questions) the keyword path alone found more than `full`
# (recall@10 0.599 against 0.617, recall@1 0.327 against 0.268). A small K keeps the ranks apart and the
# keyword path's better precision on conversations (names, objects, places) counts more: K=10 and the
# keyword weight 1.5 give 0.671 (recall@1 0.364); K 5/10/20 with weight 0.8 0.640/0.637/0.632, K=20 with
# 1.0/1.5 0.645/0.655 (docs/evaluation.md).
RRF_K = 10
PATH_WEIGHTS = {VECTOR: 1.0, LEXICAL: 1.5, SPEAKERS: 1.5, NAMED_TIME: 1.0, NAMED_TIME_WORDS: 1.0}
# The lists whose scores are keyword scores (a share of the query's terms), counted by their strength.
KEYWORD_PATHS = (LEXICAL, SPEAKERS, NAMED_TIME_WORDS)
# A keyword hit counts by its score (the rarity-weighted share of the query's terms, search.py). Squared
# when the share was unweighted (a common word counted as much as a rare one); linear since the weighting:
# on the seed-0 LoCoMo-style development set recall@10 0.759 squared, 0.795 linear, 0.780 square root.
LEXICAL_STRENGTH_POWER = 1.0
# A turn said again word for word (by the same speaker, in the same scope) takes one place in each list,
# its latest copy (fusion.py). On the LoCoMo-style development sets, where small-talk lines repeat dozens
# of times, recall@10 of `full` went from 0.802 / 0.789 (seeds 0 / 1) to 0.900 / 0.914.
COLLAPSE_REPEATS = True
# Depth of each search list: enough for fusion to work with, small enough that a filtered HNSW scan
# stays short (bench_context).
CANDIDATES_PER_PATH = 30
# The search within a named time: the turns of a day or a few, so a short list.
NAMED_TIME_CANDIDATES = 10
# The keyword lists go deeper, and so does the fused pool that ranking orders: they are read while the
# query is embedded (the vector list, after it, stays at CANDIDATES_PER_PATH), and a question whose answer
# is spread over many turns ("What has Melanie painted?") has evidence past the 30th keyword match. LoCoMo
# dev file, 231 answerable questions: recall@10 0.785 -> 0.792, multi-hop 0.440 -> 0.451, single-hop
# 0.842 -> 0.851; every list (the vector list too) at 40 / 50 / 60: 0.790 / 0.792 / 0.792, adversarial
# 0.873 -> 0.859 at 50; the keyword lists at 50 with the pool at 30: 0.787.
KEYWORD_CANDIDATES = 50
FUSED_POOL = 50
# The keyword searches leave out the words of a question's count-or-time frame ("How many months ago
# did I attend the photography workshop?": recall/dates.frame), which no memory about the workshop holds:
# as terms they ranked every turn saying "months ago" before it. LongMemEval dev, 20 questions, recall@10
# 0.762 -> 0.812, temporal-reasoning 0.750 -> 1.000; LoCoMo dev and the replay suite unchanged.
LEAVE_FRAME = True
RECENT_TURNS = 8
# With a session, the recent slot is the conversation's last rounds (a user turn and what answered it),
# not its last rows: a round of tool logs is many rows. At most RECENT_ROWS turns are read.
RECENT_ROUNDS = 4
RECENT_ROWS = 40
# The per-person search without the trigram fallback of the whole search (search.py), which runs whenever
# a search finds fewer matches than it asks for: narrowed to one person's turns it nearly always did, and
# the fallback reads the whole table's trigram index (~5 ms of the stage's 8, p50 on the LoCoMo dev
# import). The whole search keeps it, so a misspelt word is still found. LoCoMo dev and LongMemEval dev
# (40 questions): recall@1/@5/@10 the same in every category with and without it.
SPEAKER_FUZZY = False
KEYED_LIMIT = 200
CONSTRAINT_KINDS = (Kind.CONVENTION, Kind.STAGE_FACT, Kind.SEMANTIC, Kind.METHOD)

COLUMNS = (
    "m.id, m.scope_id, m.kind, m.key, m.revision, m.status, m.text, m.source_kind, m.source_ref, m.session,"
    " m.speaker, m.call_id, m.task_type, m.occurred_at, m.confidence, m.importance, m.meta, m.created_at,"
    # In force means confirmed by a person (docs/governance.md): an active row an agent wrote is not.
    " (m.confirmed_at IS NOT NULL) AS confirmed, m.confirmed_at,"
    # A correlated lookup, not a join: a hash join would scan the whole scope table on every request.
    " (SELECT nlevel(s.tree) FROM governance_scope s WHERE s.id = m.scope_id) AS depth,"
    # What adjudication reads about each row, read with it (two index probes each) so that adjudicating
    # the candidates needs no query after the search: the relations of the kinds it weighs touching the
    # row (and the derived_from links into it from a memory learned from this episode that is out of
    # force: one in force cannot outdate it), and, for an episode with a source ref, whether a memory
    # citing that ref is out of force. Only a row with one of these can be an outdated episode
    # (adjudicate._OUTDATED_SQL); the others are never sent to that query, which runs after the
    # embedding: on an import whose turns taught candidates still in force it is one round trip and
    # ~1 ms of planning less per request.
    " (SELECT coalesce(json_agg(json_build_array(r.id, r.source_id, r.target_id, r.kind, r.reason, r.by_hand)),"
    "  '[]'::json) FROM (SELECT id, source_id, target_id, kind, reason, by_hand FROM governance_relation"
    "  WHERE source_id = m.id AND kind IN ('supersedes', 'contradicts', 'supports') UNION ALL"
    # One scan of the target side, the learned memory's status probed only for a derived_from link: as a
    # third UNION branch (a join) the statement took twice the execution (EXPLAIN on the LoCoMo import).
    "  SELECT d.id, d.source_id, d.target_id, d.kind, d.reason, d.by_hand FROM governance_relation d"
    "  WHERE d.target_id = m.id AND (d.kind IN ('supersedes', 'contradicts', 'supports')"
    "  OR d.kind = 'derived_from' AND EXISTS (SELECT 1 FROM governance_memory l WHERE l.id = d.source_id"
    "  AND (l.status IN ('superseded', 'retired', 'forgotten') AND l.kind <> 'episodic'"
    # or a requirement the user replaced later in the conversation (services/requirements.py)
    "  OR l.meta->'requirement' ? 'replaced_by')))) r) AS relations,"
    " coalesce(m.kind = 'episodic' AND m.source_ref <> '' AND EXISTS (SELECT 1 FROM governance_memory c"
    "  WHERE c.scope_id = m.scope_id AND c.source_ref = m.source_ref"
    "  AND c.status IN ('superseded', 'retired', 'forgotten')), false) AS cited_by_stale,"
    # Whether a proposed dispute touches the row (recall/disputes.py): only then is the dispute read.
    " (EXISTS (SELECT 1 FROM governance_dispute d WHERE d.newer_id = m.id AND d.state = 'proposed')"
    "  OR EXISTS (SELECT 1 FROM governance_dispute d WHERE d.older_id = m.id AND d.state = 'proposed'))"
    " AS disputed"
)
RELATION_FIELDS = ("id", "source_id", "target_id", "kind", "reason", "by_hand")


def _decoded(row: dict) -> dict:
    # Django leaves jsonb undecoded on raw cursors.
    if isinstance(row.get("meta"), str):
        row["meta"] = json.loads(row["meta"])
    relations = row.get("relations")
    if isinstance(relations, str):
        relations = json.loads(relations)
    if relations is not None:
        row["relations"] = [dict(zip(RELATION_FIELDS, r, strict=True)) for r in relations]
    return row


def _rows(cursor) -> list[dict]:
    names = [c.name for c in cursor.description]
    return [_decoded(dict(zip(names, row, strict=True))) for row in cursor.fetchall()]


def row_columns(state: RecallState) -> tuple[str, list]:
    """The select list every stage reads a memory with (COLUMNS and the activation at the request time)."""
    return f"{COLUMNS}, {activation.activation_sql()} AS activation", [state.at]


def fetch(state: RecallState, ids: list[int], *, statuses: tuple[str, ...] | None = None) -> dict[int, dict]:
    """Rows of the given ids that are still eligible, with their activation at the request time."""
    if not ids:
        return {}
    where, params = state.eligibility.where("m", statuses)
    select, select_params = row_columns(state)
    with prepared_cursor(read_connection()) as cursor:
        cursor.execute(
            f"SELECT {select} FROM governance_memory m WHERE m.id = ANY(%s) AND {where}",
            [*select_params, list(ids), *params],
        )
        return {row["id"]: row for row in _rows(cursor)}


def _select(
    state: RecallState,
    extra_where: str,
    extra_params: list,
    order: str,
    limit: int,
    statuses: tuple[str, ...] | None = None,
) -> list[dict]:
    where, params = state.eligibility.where("m", statuses)
    with prepared_cursor(read_connection()) as cursor:
        cursor.execute(
            f"SELECT {COLUMNS}, {activation.activation_sql()} AS activation"
            f" FROM governance_memory m WHERE {where} AND {extra_where} ORDER BY {order} LIMIT %s",
            [state.at, *params, *extra_params, limit],
        )
        return _rows(cursor)


# A candidate is as near as the nearest of its whole text and its sentences (lexical.passage_texts: the
# sentences of a turn a person said, embedded on their own). The vector list's members and every memory
# another list found are scored so, and the vector list is re-cut by that score: a fact said in one
# sentence of a long message ("Also, by the way, I completed my undergrad in CS from UCLA") is found
# when the question asks about it, where the whole message's vector averages it away. LongMemEval-S dev
# answerable recall@1/@5/@10 0.411 / 0.816 / 0.908 -> 0.416 / 0.852 / 0.954 (knowledge-update 0.960 ->
# 0.988, single-session-user 0.895 -> 1.000), LoCoMo dev 0.434 / 0.704 / 0.808 -> 0.429 / 0.689 / 0.811
# (multi-hop 0.470 -> 0.486); a search of every passage (not only the candidates') and a list of its own
# measured and not kept (docs/evaluation.md).
NEAREST_PART = True


def vector_stage(state: RecallState) -> tuple[int, int, dict]:
    if state.query_vector is None:
        state.lists[VECTOR] = []
        return 0, 0, {}
    limit = max(CANDIDATES_PER_PATH, state.k)
    by_sentence = 0
    if NEAREST_PART:
        listed = [memory_id for ranked in state.lists.values() for memory_id, _ in ranked]
        found, parts = vector.nearest_and_passages(
            state.eligibility, state.query_vector, limit, listed, mode=state.vector_mode
        )
        found, by_sentence = _by_nearest_part(found, parts, limit)
    else:
        found = vector.nearest(state.eligibility, state.query_vector, limit, mode=state.vector_mode)
    state.lists[VECTOR] = found
    _fetch_missing(state, found)
    return 1, len(found), {"by_sentence": by_sentence}


def _by_nearest_part(found: list[tuple[int, float]], parts: dict[int, float], limit: int) -> tuple[list, int]:
    """`found` (the nearest whole texts) and the other candidates with passages, each scored by the nearer
    of its whole text and its nearest passage (`parts`), best first, cut at `limit`; and how many of those
    scores a passage gave."""
    best = dict(found)
    from_part = set()
    for memory_id, similarity in parts.items():
        if similarity > best.get(memory_id, -1.0):
            best[memory_id] = similarity
            from_part.add(memory_id)
    ranked = sorted(best.items(), key=lambda item: -item[1])[:limit]
    return ranked, sum(1 for memory_id, _ in ranked if memory_id in from_part)


def _fetch_missing(state: RecallState, found: list[tuple[int, float]]) -> None:
    """The rows of a vector list that the keyword stages did not read already (about half of them), in a
    second statement. In the search's own statement (a join on its top k) the select list's correlated
    lookups were planned again on every run, ~1 ms: the search and this prepared read (a generic plan, the
    one the keyword stages use) took 3.2 ms against 3.8 as one statement, p50 on the LoCoMo dev import,
    and 4.0-4.4 against 4.6-4.9 on the LongMemEval one (devtools' recall timing, back to back)."""
    state.rows.update(fetch(state, [memory_id for memory_id, _ in found if memory_id not in state.rows]))


def named_time_words_stage(state: RecallState) -> tuple[int, int, dict]:
    """The keyword search within the time the question names, as named_time_stage does by vector: "What did
    I do with Rachel on the Wednesday two months ago?" is answered by the turn of that Wednesday naming
    Rachel, which the whole history's keyword list ranks below other days' mentions of her and that day's
    nearest vectors leave out. It needs no vector, so it runs while the query is embedded; no query when
    the question names no time. LongMemEval-S dev, temporal-reasoning recall@10 0.775 -> 0.828, multi-session
    0.928 -> 0.915, answerable 0.902 -> 0.908; LoCoMo dev answerable @5 0.700 -> 0.704, @1 and @10 the same
    (weight 1.5: LoCoMo single-hop @1 0.421 -> 0.412; docs/evaluation.md)."""
    spans = named_spans(state)
    if not spans:
        state.lists[NAMED_TIME_WORDS] = []
        return 0, 0, {"unit": "spans named"}
    narrowed = dataclasses.replace(state.eligibility, said_within=tuple(spans))
    state.lists[NAMED_TIME_WORDS] = _keyword_list(state, narrowed, frame_terms(state), fuzzy=False)
    return 1, len(state.lists[NAMED_TIME_WORDS]), {"spans": len(spans)}


def named_time_stage(state: RecallState) -> tuple[int, int, dict]:
    """The time a question names ("the Wednesday two months ago", "a couple of days ago", "on October 13,
    2023": recall/dates.py) searched on its own: what was said then is few turns, and the one the
    question asks about may share no word with it and be outscored by the whole history's near
    neighbours ("cooking something for my friend" against "I'll also make some banana bread for the
    dinner"), so neither search path lists it for the date weight of rank.py to act on. The vector search
    again, narrowed to those spans (`Eligibility.said_within`, every other condition kept), its list fused
    with the others. No query when the question names no time."""
    spans = named_spans(state)
    if not spans or state.query_vector is None:
        state.lists[NAMED_TIME] = []
        return 0, 0, {"unit": "spans named"}
    narrowed = dataclasses.replace(state.eligibility, said_within=tuple(spans))
    found = vector.nearest(narrowed, state.query_vector, NAMED_TIME_CANDIDATES, mode=state.vector_mode)
    state.lists[NAMED_TIME] = found
    _fetch_missing(state, found)
    return 1, len(found), {"spans": len(spans)}


def pending_stage(state: RecallState) -> tuple[int, int, dict]:
    """How many eligible memories the vector search cannot see yet (their embedding is queued). It does
    not need the query vector, so it runs while the query is being embedded."""
    state.pending_vectors = vector.pending_vectors(state.eligibility)
    return 1, state.pending_vectors, {"unit": "waiting"}  # memories without a vector yet, not candidates


def frame_terms(state: RecallState) -> frozenset[str]:
    """The terms of the question's count-or-time frame (recall/dates.py), which no keyword search looks for."""
    if not LEAVE_FRAME:
        return frozenset()
    return frozenset(t for text in dates.frame(state.query) for t in lexical.terms(text))


def lexical_stage(state: RecallState) -> tuple[int, int]:
    state.lists[LEXICAL] = _keyword_list(state, state.eligibility, frame_terms(state))
    if COLLAPSE_REPEATS:  # and what fusion needs of them (fusion.repeat_keys)
        fusion.repeat_keys(state.rows, state.repeat_keys)
    return 1, len(state.lists[LEXICAL])


def _keyword_list(
    state: RecallState, eligibility, leave_out: frozenset[str], *, fuzzy: bool = True
) -> list[tuple[int, float]]:
    """The keyword search over `eligibility` (the request's, or narrowed to a speaker or a named time), its
    rows read now, while the query is still being embedded (fusion then fetches only what the vector
    search alone found, and that comes with the vector search itself), and its scores re-weighed by how
    close together the query's terms stand in its long texts (search.near_together, over the text the
    keyword index searched: the speaker's name in front)."""
    found = search.keyword_search(
        eligibility, state.query, max(KEYWORD_CANDIDATES, state.k), leave_out=leave_out, fuzzy=fuzzy
    )
    state.rows.update(fetch(state, [memory_id for memory_id, _ in found if memory_id not in state.rows]))
    texts = {
        memory_id: lexical.searchable_text(row.get("text") or "", row.get("speaker") or "")
        for memory_id, _ in found
        if (row := state.rows.get(memory_id))
    }
    terms = [t for t in search.query_terms(state.query) if t not in leave_out]
    return search.near_together(found, texts, terms)


def speaker_stage(state: RecallState) -> tuple[int, int, dict]:
    """Per-person search: a question naming a person of the conversation ("What does Melanie do to
    destress?") is answered by what that person said, spread over many sessions, and the person's name is
    in every one of their turns, so it ranks none of them. The keyword search runs again within the
    turns of each speaker the query names (a speaker of the keyword list's rows), their name left out of
    the terms, and its list is fused with the others. Seeded from the first keyword pass's rows, so it
    adds no query when no speaker is named; narrowed with the same eligibility predicate (one more
    condition, `Eligibility.speakers`), it can only find what the whole search may. It runs while the
    query is embedded, like the keyword stage.

    On the LoCoMo dev file (231 answerable questions, with the session relevance of rank.py) recall@10
    0.771 -> 0.781, temporal 0.968 -> 0.984, single-hop 0.816 -> 0.833, multi-hop 0.434 -> 0.440, recall@1
    0.382 -> 0.411; the same within the speaker's turns by vector too (a second vector search, after the
    embedding): 0.786, multi-hop 0.467, but adversarial 0.873 -> 0.754 (their questions name the other
    person) and another vector search after the embedding: not kept."""
    named = speakers_named(state.query, {(r.get("speaker") or "").strip() for r in state.rows.values()})
    if not named:
        state.lists[SPEAKERS] = []
        return 0, 0, {"unit": "speakers named"}
    narrowed = dataclasses.replace(state.eligibility, speakers=tuple(sorted(named)))
    names = frozenset(t for name in named for t in lexical.terms(name)) | frame_terms(state)
    state.lists[SPEAKERS] = _keyword_list(state, narrowed, names, fuzzy=SPEAKER_FUZZY)
    return 1, len(state.lists[SPEAKERS]), {"speakers": len(named)}


def recent_stage(state: RecallState) -> tuple[int, int]:
    """The last rounds of this session's conversation (a user turn and what answered it: the assistant,
    tool calls and their results), oldest first; without a session, the scope's latest turns."""
    if state.session:
        return _recent_rounds(state)
    return _recent_turns(state)


def _recent_rounds(state: RecallState) -> tuple[int, int]:
    """The last RECENT_ROUNDS rounds: every turn of the session since its RECENT_ROUNDS-th latest user turn
    (at most RECENT_ROWS), so a round's logs never push its user turn out, and the last rows of a tool
    flood are not mistaken for the conversation. Two index ranges of memory_scope_session."""
    where, params = state.eligibility.where("m")
    starts_where, starts_params = state.eligibility.where("u")
    with prepared_cursor(read_connection()) as cursor:
        cursor.execute(
            f"SELECT {COLUMNS}, {activation.activation_sql()} AS activation FROM governance_memory m"
            " WHERE m.kind = 'episodic' AND m.status = 'active' AND m.session = %s AND m.occurred_at IS NOT NULL"
            f" AND {where} AND m.occurred_at >= coalesce(("
            "  SELECT min(u.occurred_at) FROM (SELECT u.occurred_at FROM governance_memory u"
            "   WHERE u.kind = 'episodic' AND u.status = 'active' AND u.session = %s AND u.source_kind = 'user'"
            f"    AND u.occurred_at IS NOT NULL AND {starts_where}"
            "   ORDER BY u.occurred_at DESC LIMIT %s) u), '-infinity'::timestamptz)"
            " ORDER BY m.occurred_at DESC, m.id DESC LIMIT %s",
            [
                state.at,
                state.session,
                *params,
                state.session,
                *starts_params,
                RECENT_ROUNDS,
                RECENT_ROWS,
            ],
        )
        rows = _rows(cursor)
    state.recent = [Hit(id=r["id"], row=r, paths={"recent"}) for r in reversed(rows)]
    return 1, len(state.recent)


def _recent_turns(state: RecallState) -> tuple[int, int]:
    """The latest turns of the scope (no session named), oldest first.
    One small index range per visible scope (LATERAL … LIMIT) instead of sorting every eligible turn:
    the cost stays flat as a workspace grows (indexes memory_scope_session / memory_recent_episodic)."""
    # Each lateral branch binds m.scope_id to one visible scope (v.sid), so the predicate leaves the scope
    # list out: with it the planner sorted every row of the scope (5.5 ms at 100k) instead of reading
    # eight from the partial index memory_recent_episodic (0.9 ms).
    where, params = state.eligibility.where("m", scope_bound=True)
    session_sql, session_params = ("AND m.session = %s", [state.session]) if state.session else ("", [])
    with prepared_cursor(read_connection()) as cursor:
        cursor.execute(
            f"SELECT {COLUMNS}, {activation.activation_sql()} AS activation"
            " FROM unnest(%s::bigint[]) AS v(sid) CROSS JOIN LATERAL ("
            "  SELECT * FROM governance_memory m"
            f"  WHERE m.scope_id = v.sid AND m.kind = 'episodic' AND m.status = 'active'"
            f"   AND m.occurred_at IS NOT NULL {session_sql} AND {where}"
            "  ORDER BY m.occurred_at DESC LIMIT %s) m"
            " ORDER BY m.occurred_at DESC, m.id DESC LIMIT %s",
            [
                state.at,
                list(state.eligibility.scope_ids),
                *session_params,
                *params,
                RECENT_TURNS,
                RECENT_TURNS,
            ],
        )
        rows = _rows(cursor)
    state.recent = [Hit(id=r["id"], row=r, paths={"recent"}) for r in reversed(rows)]
    return 1, len(state.recent)


def keyed_stage(state: RecallState) -> tuple[int, int]:
    """Facts in force: active keyed memories, conventions and preferences of the visible scopes that a
    person with the confirm right confirmed (or wrote active). Where a key is set at several levels, the
    narrowest scope wins and the others are listed as overridden; an unconfirmed row never pins or
    overrides anything (search may still bring it as evidence, marked unconfirmed)."""
    rows = _select(
        state,
        "(m.key IS NOT NULL OR m.kind = ANY(%s)) AND m.confirmed_at IS NOT NULL",
        [[Kind.CONVENTION, Kind.PREFERENCE, Kind.STAGE_FACT]],
        "depth DESC, m.importance DESC, m.id DESC",
        KEYED_LIMIT,
        statuses=(Status.ACTIVE,),
    )
    seen_keys: dict[str, int] = {}
    for row in rows:
        hit = Hit(id=row["id"], row=row, paths={"keyed"}, activation=float(row["activation"]))
        if row["key"] is not None:
            if row["key"] in seen_keys:
                state.dropped.append(
                    (hit, "constraints", f"overridden by memory {seen_keys[row['key']]} in a narrower scope")
                )
                continue
            seen_keys[row["key"]] = row["id"]
            state.keyed_winners[row["key"]] = (row["id"], row["depth"])
        if row["kind"] == Kind.PREFERENCE:
            state.preferences.append(hit)
        elif row["kind"] in CONSTRAINT_KINDS or row["key"] is not None:
            state.constraints.append(hit)
    return len(rows), len(state.constraints) + len(state.preferences)


def fuse_stage(state: RecallState) -> tuple[int, int, dict]:
    """Every listed row (read with the searches), repeated turns collapsed (fusion.py), then reciprocal
    rank fusion of the search paths."""
    fused: dict[int, float] = {}
    scores: dict[int, dict[str, float]] = {}
    # Every listed row (a vector list of CANDIDATES_PER_PATH, keyword lists of KEYWORD_CANDIDATES), so that
    # repeated turns are collapsed before the ranks are counted. The searches read them (each under the
    # eligibility predicate, milliseconds ago: the keyword list's while the query was embedded, the vector
    # list's with the search); a row read no other way is fetched here, under the same predicate.
    listed = sorted({memory_id for ranked in state.lists.values() for memory_id, _ in ranked})
    rows = {i: state.rows[i] for i in listed if i in state.rows}
    rows.update(fetch(state, [i for i in listed if i not in rows]))
    lists = fusion.collapse_repeats(state.lists, rows, state.repeat_keys) if COLLAPSE_REPEATS else state.lists
    # Vector first whatever order the stages ran in: the float sums (and so the ties) stay the same.
    paths = sorted(lists, key=lambda p: (p != VECTOR, p != LEXICAL, p))
    for path in paths:
        ranked = lists[path]
        weight = PATH_WEIGHTS.get(path, 1.0)
        for rank, (memory_id, score) in enumerate(ranked, start=1):
            # Keyword hits count by how much of the query they hold, so a list of weak one-word matches
            # (the keyword path finding nothing real) cannot outvote the vector path's best hit.
            strength = min(score, 1.0) ** LEXICAL_STRENGTH_POWER if path in KEYWORD_PATHS else 1.0
            fused[memory_id] = fused.get(memory_id, 0.0) + weight * strength / (RRF_K + rank)
            scores.setdefault(memory_id, {})[path] = score
    ordered = sorted(fused, key=lambda i: (-fused[i], i))
    top = ordered[: max(FUSED_POOL, state.k * 3)]
    best = max(fused.values(), default=1.0)
    for memory_id in top:
        row = rows.get(memory_id)
        if row is None:  # changed status between the search and the fetch: the fetch wins
            continue
        got = scores[memory_id]
        state.hits[memory_id] = Hit(
            id=memory_id,
            row=row,
            semantic=got.get(VECTOR, got.get(NAMED_TIME)),  # the same cosine, from the narrowed search
            lexical=got.get(LEXICAL),
            fused=fused[memory_id] / best,
            activation=float(row["activation"]),
            paths=set(got),
        )
    before_partners = len(state.hits)
    _add_call_partners(state)
    # So the trace adds up: what came from each path, and how many were one memory found by two paths,
    # repeated turns folded into one, below the fused cut, or no longer eligible when read (`ids` names them).
    ids = fusion.dropped_ids(state.lists, rows, fused, ordered, len(top), state.hits)
    return (
        sum(len(v) for v in state.lists.values()),
        len(state.hits),
        {
            "from": {path: len(ranked) for path, ranked in state.lists.items()},
            "found_twice": sum(len(v) for v in state.lists.values()) - len(listed),
            "collapsed": len(ids["collapsed"]),
            "cut": len(fused) - len(top),
            "changed": len(ids["changed"]),
            "added": len(state.hits) - before_partners,
            "ids": ids,
        },
    )


def _add_call_partners(state: RecallState) -> None:
    """A tool call and its result travel together: fetch the other half of every pair we hold."""
    held = list(state.hits.values()) + state.recent
    call_ids = sorted({h.row["call_id"] for h in held if h.row.get("call_id")})
    if not call_ids:
        return
    known = {h.id for h in held}
    rows = _select(state, "m.call_id = ANY(%s)", [call_ids], "m.occurred_at, m.id", 4 * len(call_ids))
    for row in rows:
        if row["id"] not in known:
            partner = Hit(id=row["id"], row=row, paths={"call_partner"}, activation=float(row["activation"]))
            state.hits[row["id"]] = partner
