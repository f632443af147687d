"""The pgvector similarity query: the one place in the code base that asks for nearest memories.

HNSW with a filter: a plain HNSW scan returns the ef_search nearest rows and *then* applies the scope and
status filter, so a narrow scope can come back nearly empty. pgvector 0.8's iterative index scan keeps
walking the graph until LIMIT rows pass the filter (or hnsw.max_scan_tuples is reached). We use
`relaxed_order` (results may be slightly out of order, so we re-sort the materialised top-k, as the
pgvector docs advise) because `strict_order` has to discard more work. With ef_search=100, bench_context
measured recall@10 against exact search under the scope filter of 0.97 at 100k memories but 0.715 at 1M
(docs/api.md, "Measured"): raise RECALL_HNSW_EF_SEARCH and the index's ef_construction at that scale.

The planner still decides per query: when the visible scopes hold few rows, a btree scan on scope plus
an exact sort is cheaper and exact, and PostgreSQL picks it. `mode` lets the benchmark force either path.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.db import connection, transaction

from governance.recall.eligible import Eligibility

MODES = ("auto", "exact", "hnsw")


def vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


def nearest(
    eligibility: Eligibility, query_vector: Sequence[float], limit: int, *, mode: str = "auto",
    ef_search: int | None = None,
) -> list[tuple[int, float]]:
    """The `limit` eligible memories nearest to `query_vector` as (id, cosine similarity), best first."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    where, params = eligibility.where("m")
    vec = vector_literal(query_vector)
    sql = (
        "WITH nn AS MATERIALIZED ("
        " SELECT m.id, m.embedding <=> %s::vector AS distance FROM governance_memory m"
        f" WHERE {where} AND m.embedding IS NOT NULL"
        " ORDER BY m.embedding <=> %s::vector LIMIT %s)"
        " SELECT id, 1 - distance FROM nn ORDER BY distance, id"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        # SET LOCAL ends with this transaction (or savepoint's outer transaction): no leak to other queries.
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)",
                       [str(ef_search or settings.RECALL_HNSW_EF_SEARCH)])
        if mode == "exact":
            cursor.execute("SET LOCAL enable_indexscan = off")
        elif mode == "hnsw":
            # Make the ordered index scan the only cheap plan, to measure the HNSW path itself.
            cursor.execute("SET LOCAL enable_sort = off")
            cursor.execute("SET LOCAL enable_bitmapscan = off")
            cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(sql, [vec, *params, vec, limit])
        return [(int(i), float(s)) for i, s in cursor.fetchall()]
