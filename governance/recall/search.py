"""Keyword search over Memory.lexical (words and CJK unigrams/bigrams, see governance/models/lexical.py):
PostgreSQL full text over its stored vector (governance.models.fulltext; GIN index memory_scope_lexical_tsv),
and a trigram word-similarity fallback that catches misspellings (a term of the query no visible memory
holds) when full text finds too little.

A match is scored by the share of the query's terms it holds, each term weighted by how rare it is among
the memories the caller may see (an IDF capped at DF_CAP rows, counted on the GIN index), plus a bonus for
the query's words in the query's order ("LGBTQ support group" as a phrase): a speaker's name or "go" on
every other turn must not outvote the one rare word the question is about."""

from __future__ import annotations

import math
from itertools import combinations

from governance.models import fulltext, lexical
from governance.recall.eligible import Eligibility
from governance.runtime.prepared import planned_cursor, prepared_cursor
from governance.runtime.replica import read_connection

MAX_QUERY_TERMS = 32
# Document frequencies are counted up to this many rows per term: past it a term is simply common, and the
# count stays a short index read whatever the size of the scope (1,000 measured the same recall on the
# seed-0 development set, 0.795 against 0.802, and reads five times as many index entries per term).
DF_CAP = 200
# Added to the coverage for the share of the query's adjacent word pairs the memory holds side by side.
PHRASE_BONUS = 0.25
# In a large scope a common word matches most turns, and every match is scored: "What do the kids like?"
# scored 30,390 of 113,665 turns. So the search first scores only what holds a rarer term (counted below
# DF_CAP) or two common ones, and keeps that list when its last row outscores a memory holding one common
# word alone (all it left out): then it is the whole search's list, exactly; otherwise it searches every
# match. One scope of 113,665 LongMemEval turns (the dev haystacks copied five times; `manage.py
# bench_keyword`), the same lists either way: 8 everyday questions, p50 148-157 -> 30-31 ms (at 6); the file's
# first 20 questions (longer), p50/p95 362/748 -> 107/495 ms. Not tried past this many common terms, whose
# pairs make the query (at 6: 439/740 -> 112/737 ms) ...
PRUNE_MAX_COMMON = 10
# ... nor in scopes smaller than this: there every match is scored in a millisecond or two, and the
# first search, when it is not enough, is one more (LoCoMo and LongMemEval dev, haystacks of ~500 turns:
# keyword_search p50 3.5 / 5.5 ms without it, 5.5 / 6.6 ms with it tried on every request).
PRUNE_FROM_ROWS = 5_000
# Both statements go scope by scope, a branch per visible scope with its id as a bigint constant
# (`m.scope_id = %s::bigint`): the GIN index memory_scope_lexical_tsv is over (scope_id, lexical_tsv), and
# a GIN index takes no `= ANY(array)` condition (nor, in btree_gin 1.3, a smallint one: psycopg sends a
# small id as one), so with the scope list as one condition it was read for the terms alone, every
# workspace's matches of a common word (5,269 rows for "like" against the 84 the scope holds), and the
# scope filtered after. LoCoMo dev import, the term counts of "What do Melanie's kids like?" 3.9 -> 1.1 ms
# (EXPLAIN ANALYZE, first written as a LATERAL); keyword_search p50 5.6 -> 3.5-4.2 ms on LoCoMo dev,
# 8.8 -> 5.5 ms on LongMemEval dev, the same matches in the same order for all 342 questions. (A LATERAL
# over the ids was no slower here, but is planned for an average scope: on the 113,665-turn one it read
# the scope index and tested every row.)


def query_terms(query: str) -> list[str]:
    """Distinct terms of the query. For Chinese, the bigrams carry the meaning and single characters
    match almost everything, so unigrams are dropped when the query has bigrams."""
    terms = lexical.terms(query)
    cjk_bigrams = {t for t in terms if len(t) == 2 and lexical._IS_CJK.match(t)}
    out: list[str] = []
    for term in terms:
        if cjk_bigrams and len(term) == 1 and lexical._IS_CJK.match(term):
            continue
        if term not in out:
            out.append(term)
    return out[:MAX_QUERY_TERMS]


def tsquery(terms: list[str]) -> str:
    # Terms are runs of letters/digits only (lexical._TOKEN), so quoting them is enough.
    return " | ".join(_quoted(t) for t in terms)


def term_counts(cursor, eligibility: Eligibility, terms: list[str]) -> dict[str, int]:
    """How many eligible memories hold each term, counted up to DF_CAP, scope by scope (the sum of each
    scope's capped count, capped: the same figure as one capped count)."""
    if not eligibility.scope_ids:
        return dict.fromkeys(terms, 0)
    where, params = eligibility.where("m", scope_bound=True)
    match = fulltext.memory_matches("m", fulltext.to_tsquery("quote_literal(t)"))
    count = (
        "(SELECT count(*) FROM (SELECT 1 FROM governance_memory m"
        f" WHERE m.scope_id = %s::bigint AND {where} AND {match} LIMIT %s) x)"
    )
    scope_ids = list(eligibility.scope_ids)
    cursor.execute(
        f"SELECT t, least(%s, {' + '.join(count for _ in scope_ids)}) FROM unnest(%s::text[]) AS t",
        [DF_CAP, *[x for s in scope_ids for x in (s, *params, DF_CAP)], terms],
    )
    return {t: int(df) for t, df in cursor.fetchall()}


def idf(df: int) -> float:
    return math.log(1.0 + DF_CAP / (1.0 + df))


def term_weights(cursor, eligibility: Eligibility, terms: list[str]) -> dict[str, float]:
    """An IDF per term, ln(1 + DF_CAP / (1 + df)), df counted among the eligible memories (term_counts)."""
    return {t: idf(df) for t, df in term_counts(cursor, eligibility, terms).items()}


# A long text holds many of any question's words somewhere; the one that answers it holds them together. A
# keyword match in a text longer than PROXIMITY_FROM characters keeps the share of its score that the most
# of the query's terms found within PROXIMITY_WINDOW characters of each other says, weighted
# PROXIMITY_WEIGHT: all of them together, its whole score; scattered over the text, down to
# 1 - PROXIMITY_WEIGHT of it. A shorter text is scored as it is (in a few windows' worth of words, where a
# word stands says little: LoCoMo's turns, every figure the same). LongMemEval-S dev, answerable (119),
# recall@1/@5/@10 of `full` 0.393/0.816/0.906 -> 0.411/0.823/0.911 (measured in terms: 20 terms, texts of
# 60 terms or more; the same region of 16-24 terms, weights 0.4-0.8, texts of 3-4 windows gave @1
# 0.406-0.419, @10 0.906-0.911), the keyword path alone 0.248/0.647/0.765 -> 0.311/0.698/0.815; LoCoMo dev
# the same (docs/evaluation.md).
PROXIMITY_WINDOW = 200
PROXIMITY_FROM = 3 * PROXIMITY_WINDOW
PROXIMITY_WEIGHT = 0.6


def near_together(found: list[tuple[int, float]], texts: dict[int, str], terms) -> list[tuple[int, float]]:
    """A keyword list (id, score) with the scores of its long texts weighed by how close together the
    query's `terms` stand in them (PROXIMITY_*), best first. `texts`: the searched text of each id."""
    wanted = set(terms)
    scored = []
    for memory_id, score in found:
        text = texts.get(memory_id) or ""
        if len(text) > PROXIMITY_FROM and len(wanted) > 1:
            score *= 1.0 - PROXIMITY_WEIGHT + PROXIMITY_WEIGHT * _together(lexical.terms_at(text, wanted))
        scored.append((memory_id, score))
    return sorted(scored, key=lambda item: -item[1])


def _together(places: list[tuple[int, str]]) -> float:
    """The most distinct terms found within one PROXIMITY_WINDOW, over the distinct terms found (0..1)."""
    held = {term for _, term in places}
    if len(held) <= 1:
        return 1.0
    best, start, inside = 0, 0, {}
    for offset, term in places:
        inside[term] = inside.get(term, 0) + 1
        while offset - places[start][0] >= PROXIMITY_WINDOW:
            left = places[start][1]
            inside[left] -= 1
            if not inside[left]:
                del inside[left]
            start += 1
        best = max(best, len(inside))
    return best / len(held)


def match_score(terms: list[str], weights: dict[str, float], text: str) -> float:
    """Weighted coverage of the query's terms in a memory's lexical text (0..1), plus the phrase bonus.
    The definition keyword_search computes in SQL from the stored tsvector (a test holds them equal)."""
    words = text.split()
    present = set(words)
    total = sum(weights.get(t, 0.0) for t in terms) or 1.0
    coverage = sum(weights.get(t, 0.0) for t in terms if t in present) / total
    pairs = list(zip(terms, terms[1:], strict=False))
    if not pairs:
        return coverage
    adjacent = set(zip(words, words[1:], strict=False))
    return coverage + PHRASE_BONUS * sum(1 for p in pairs if p in adjacent) / len(pairs)


def keyword_search(
    eligibility: Eligibility,
    query: str,
    limit: int,
    *,
    leave_out: frozenset[str] = frozenset(),
    fuzzy: bool = True,
) -> list[tuple[int, float]]:
    """Eligible memories matching the query's terms as (id, score), best first. The score is the rarity-
    weighted share of the query's terms the memory contains (plus the phrase bonus): an absolute strength
    (ts_rank is only relative), so fusion can tell a memory holding the query's identifier apart from one
    sharing a single common word.

    The score (match_score's, computed in the query) is read from the stored tsvector of each match
    (migration 0030): a term is a lookup in it, an adjacent pair a phrase query on its positions. No text
    is parsed or sent back, so a long memory costs what a short one does (before, every match's text was
    parsed twice, for ts_rank and in Python: 287/606 ms p50/p95 on LongMemEval's long turns).
    `leave_out`: terms of the query not to search for (a speaker's name, when the search is narrowed to
    what that speaker said)."""
    terms = [t for t in query_terms(query) if t not in leave_out]
    if not terms or not eligibility.scope_ids:  # (a branch per scope: none to search)
        return []
    where, params = eligibility.where("m", scope_bound=True)
    pairs = list(zip(terms, terms[1:], strict=False))
    # The term counts keep one plan; the search and its fallback are planned with each run's scopes and
    # terms (runtime/prepared.py: a generic plan of either reads other workspaces' matches).
    with prepared_cursor(read_connection()) as cursor:
        counts = term_counts(cursor, eligibility, terms)
    weights = {t: idf(df) for t, df in counts.items()}
    with planned_cursor(read_connection()) as cursor:
        total = sum(weights.get(t, 0.0) for t in terms) or 1.0
        score = (
            "(SELECT coalesce(sum(t.w), 0) FROM unnest(%s::tsquery[], %s::float8[]) AS t(q, w)"
            f" WHERE {fulltext.memory_matches('m', 't.q')}) / %s"
            " + %s * (SELECT count(*) FROM unnest(%s::tsquery[]) AS p(q)"
            f" WHERE {fulltext.memory_matches('m', 'p.q')})"
        )
        score_params = [
            [_quoted(t) for t in terms],
            [weights.get(t, 0.0) for t in terms],
            total,
            PHRASE_BONUS / len(pairs) if pairs else 0.0,
            [f"{_quoted(a)} <-> {_quoted(b)}" for a, b in pairs],
        ]
        # `q` (every term) ranks ties (ts_rank); `wanted` decides which memories are scored.
        branch = (
            f"(SELECT m.id, {score} AS score, ts_rank(m.{fulltext.MEMORY_COLUMN}, q, 1) AS r"
            f" FROM governance_memory m, {fulltext.to_tsquery()} q, {fulltext.to_tsquery()} wanted"
            f" WHERE m.scope_id = %s::bigint AND {where} AND {fulltext.memory_matches('m', 'wanted')}"
            " ORDER BY score DESC, r DESC, m.id LIMIT %s)"
        )
        scope_ids = list(eligibility.scope_ids)

        def best(wanted: str) -> list[tuple[int, float]]:
            cursor.execute(
                f"SELECT f.id, f.score, f.r FROM ({' UNION ALL '.join(branch for _ in scope_ids)}) f"
                " ORDER BY f.score DESC, f.r DESC, f.id LIMIT %s",
                [
                    *[
                        x
                        for s in scope_ids
                        for x in (*score_params, tsquery(terms), wanted, s, *params, limit)
                    ],
                    limit,
                ],
            )
            return [(int(memory_id), float(score)) for memory_id, score, _ in cursor.fetchall()]

        rows = None
        pruned = _without_lone_common_terms(terms, counts)
        if pruned is not None and _holds_at_least(cursor, eligibility, PRUNE_FROM_ROWS):
            rows = best(pruned)
            # Exact only when the last row kept outscores any memory holding a single common term, all
            # that the pruned search leaves out (its score is that term's share; a lone term has no pair).
            alone = max(weights[t] for t in terms if counts.get(t, 0) >= DF_CAP) / total
            if len(rows) < limit or rows[-1][1] <= alone:
                rows = None
        if rows is None:
            rows = best(tsquery(terms))
        # The fallback is for misspellings: a term of the query that no visible memory holds. When each of
        # them is held somewhere, the terms have found what they can, and the trigram scan (its index covers
        # every scope: 27 ms a question on the LongMemEval dev import's 67,773 rows) added nothing: recall of
        # both real dev files the same with it and without it (docs/evaluation.md).
        if fuzzy and len(rows) < limit and any(counts.get(t, 0) == 0 for t in terms):
            rows += _trigram(cursor, eligibility, " ".join(terms), limit - len(rows), {i for i, _ in rows})
    return rows


def _without_lone_common_terms(terms: list[str], counts: dict[str, int]) -> str | None:
    """A tsquery matching the memories that hold a term below the count cap, or two of the common ones
    (counted at DF_CAP): every match but those holding one common term and nothing else of the query. None
    when that leaves nothing out (no common term) or would be a large query (many common terms)."""
    common = [t for t in terms if counts.get(t, 0) >= DF_CAP]
    if not common or len(common) > PRUNE_MAX_COMMON:
        return None
    rare = [_quoted(t) for t in terms if counts.get(t, 0) < DF_CAP]
    both = [f"{_quoted(a)} & {_quoted(b)}" for a, b in combinations(common, 2)]
    return " | ".join(rare + both) or None


def _holds_at_least(cursor, eligibility: Eligibility, rows: int) -> bool:
    """Whether the visible scopes hold at least `rows` memories (of any status: a size, not a read), counted
    on the scope index up to that many."""
    cursor.execute(
        "SELECT count(*) FROM (SELECT 1 FROM governance_memory m WHERE m.scope_id = ANY(%s::bigint[]) LIMIT %s) x",
        [list(eligibility.scope_ids), rows],
    )
    return int(cursor.fetchone()[0]) >= rows


def _quoted(term: str) -> str:
    # A term is a run of letters/digits (lexical._TOKEN): quoting makes it one lexeme of a tsquery.
    return f"'{term}'"


def _trigram(
    cursor, eligibility: Eligibility, text: str, limit: int, seen: set[int]
) -> list[tuple[int, float]]:
    where, params = eligibility.where("m")
    cursor.execute(
        # A fuzzy match is weaker evidence than any exact term: scaled into 0..0.5.
        "SELECT m.id, word_similarity(%s, m.lexical) * 0.5 AS r FROM governance_memory m"
        f" WHERE {where} AND %s <%% m.lexical ORDER BY r DESC, m.id LIMIT %s",
        [text, *params, text, limit + len(seen)],
    )
    return [(int(i), float(r)) for i, r in cursor.fetchall() if int(i) not in seen][:limit]
