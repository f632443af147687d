"""Keyword search over Memory.lexical (words and CJK unigrams/bigrams, see governance/lexical.py):
PostgreSQL full text with the `simple` configuration (the GIN index of migration 0002), and a trigram
word-similarity fallback that catches misspellings when full text finds too little."""

from __future__ import annotations

from django.db import connection

from governance import lexical
from governance.recall.eligible import Eligibility

MAX_QUERY_TERMS = 32


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
    return " | ".join(f"'{t}'" for t in terms)


def keyword_search(eligibility: Eligibility, query: str, limit: int) -> list[tuple[int, float]]:
    """Eligible memories matching the query's terms as (id, coverage), best first. Coverage is the share
    of the query's terms the memory contains: an absolute strength (ts_rank is only relative), so fusion
    can tell a memory holding the query's identifier apart from one sharing a single common word."""
    terms = query_terms(query)
    if not terms:
        return []
    where, params = eligibility.where("m")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.id, ts_rank(to_tsvector('simple', m.lexical), q, 1) AS r, m.lexical"
            " FROM governance_memory m, to_tsquery('simple', %s) q"
            f" WHERE {where} AND to_tsvector('simple', m.lexical) @@ q"
            " ORDER BY r DESC, m.id LIMIT %s",
            [tsquery(terms), *params, limit],
        )
        wanted = set(terms)
        scored = []
        for memory_id, rank, text in cursor.fetchall():
            coverage = len(wanted & set(text.split())) / len(wanted)
            scored.append((int(memory_id), coverage, float(rank)))
        scored.sort(key=lambda x: (-x[1], -x[2], x[0]))
        rows = [(i, c) for i, c, _ in scored]
        if len(rows) < limit:
            rows += _trigram(cursor, eligibility, " ".join(terms), limit - len(rows), {i for i, _ in rows})
    return rows


def _trigram(cursor, eligibility: Eligibility, text: str, limit: int, seen: set[int]) -> list[tuple[int, float]]:
    where, params = eligibility.where("m")
    cursor.execute(
        # A fuzzy match is weaker evidence than any exact term: scaled into 0..0.5.
        "SELECT m.id, word_similarity(%s, m.lexical) * 0.5 AS r FROM governance_memory m"
        f" WHERE {where} AND %s <%% m.lexical ORDER BY r DESC, m.id LIMIT %s",
        [text, *params, text, limit + len(seen)],
    )
    return [(int(i), float(r)) for i, r in cursor.fetchall() if int(i) not in seen][:limit]
