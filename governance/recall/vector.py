"""The pgvector similarity query: the one place in the code base that asks for nearest memories.

A read sees a short chain of scopes (the request scope and its ancestors). The search goes scope by
scope (governance/recall/vector_index.py says why), in one statement of `UNION ALL` branches:
- a scope with its own HNSW index (`memory_vec_scope_<id>`, a partial index built for big scopes) is
  one branch, an ordered scan of that index with pgvector's iterative index scan so that the status,
  validity and task-type filters cannot starve the result. `relaxed_order` may return rows slightly
  out of order, so the top-k is re-sorted, as the pgvector docs advise;
- the other scopes of the chain are small by construction and are one branch searched exactly
  (an index on scope_id, then a top-k sort);
- the branches are merged by distance.

Every branch carries the whole eligibility predicate, so a memory retired or forgotten a moment ago
is never returned, whatever state an index is in.

`mode="exact"` searches everything exactly (the benchmark's reference, and a switch for operators);
`mode="auto"` is the path above.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager

from django.conf import settings
from django.db import transaction

from governance.recall import vector_index
from governance.recall.eligible import Eligibility
from governance.runtime.prepared import prepared_cursor
from governance.runtime.replica import read_connection

MODES = ("auto", "exact")


def vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


def _statement(scope_sql: str, where: str, *, exact: bool = False) -> str:
    """One branch: the nearest rows of some scopes. The query vector is `q.v` of the WITH clause that
    `_query` puts in front: written once, not twice per branch (a 384-d literal is ~4 KB of SQL text to
    parse, and a branch per scope multiplied it). An HNSW index scan accepts it as its ordering key.
    An `exact` branch orders by the distance `+ 0`: an expression no vector index can produce in order,
    so it is always a scan of the scope's rows and a top-k sort, with no planner setting (and so no
    transaction and no extra round trip) needed to keep the HNSW index out."""
    order = "(m.embedding <=> (SELECT v FROM q)) + 0" if exact else "m.embedding <=> (SELECT v FROM q)"
    return (
        "SELECT m.id, m.embedding <=> (SELECT v FROM q) AS distance FROM governance_memory m"
        f" WHERE {scope_sql} AND {where} AND m.embedding IS NOT NULL"
        f" ORDER BY {order} LIMIT %s"
    )


def _query(
    branches: list[tuple[str, list]],
    vec: str,
    columns: tuple[str, list] | None = None,
    passages_of: list[int] | None = None,
) -> tuple[str, list]:
    union = " UNION ALL ".join(f"({b})" for b, _ in branches)
    branch_params = [x for _, params in branches for x in params]
    if passages_of is not None:
        # The nearest passage of each candidate (the given ids and the rows found), in the same statement:
        # rows of (id, distance or NULL when it has none, true), only passages of the memory's current text
        # (its content hash). One correlated lookup per candidate (the passages' memory_id index, the memory's primary key),
        # not a join: whatever the planner estimates, it cannot hash the whole memory table. As a join,
        # on a passage table not yet analyzed (a fresh load of 100k memories), it did, and the stage took
        # 36 ms instead of 5 (docs/benchmarks.md).
        return (
            "WITH q AS MATERIALIZED (SELECT %s::vector AS v), n AS MATERIALIZED (" + union + ")"
            " SELECT n.id, n.distance, false AS part FROM n UNION ALL"
            " SELECT c.id, (SELECT min(p.embedding <=> (SELECT v FROM q)) FROM governance_passage p"
            "  WHERE p.memory_id = c.id AND p.content_hash ="
            "  (SELECT pm.content_hash FROM governance_memory pm WHERE pm.id = c.id)), true"
            " FROM (SELECT DISTINCT unnest(%s::bigint[] || ARRAY(SELECT id FROM n))) AS c(id)",
            [vec, *branch_params, list(passages_of)],
        )
    if columns is None:
        return "WITH q AS MATERIALIZED (SELECT %s::vector AS v) " + union, [vec, *branch_params]
    # The found rows' columns in the same statement (a primary-key join on the top k of each branch):
    # the caller needs them next, and a second query would be one more round trip after the embedding.
    select, select_params = columns
    return (
        f"WITH q AS MATERIALIZED (SELECT %s::vector AS v) SELECT v.id, v.distance, {select}"
        f" FROM ({union}) v JOIN governance_memory m ON m.id = v.id",
        [vec, *select_params, *branch_params],
    )


# Planner settings for a search through scopes' own HNSW indexes, SET LOCAL (they end with the
# transaction: nothing leaks to other queries), sent in one round trip. A search with no indexed scope
# (every scope below the index threshold, the common case) needs none: one statement in autocommit.
HNSW_SETTINGS = {
    "enable_indexscan": "on",
    "hnsw.iterative_scan": "relaxed_order",
    # The ordered index scan is then the only plan without a sort of the whole scope.
    "enable_sort": "off",
    "enable_bitmapscan": "off",
    "enable_seqscan": "off",
}


def _set_local(values: dict[str, str]) -> tuple[str, list]:
    return (
        "SELECT " + ", ".join("set_config(%s, %s, true)" for _ in values),
        [x for item in values.items() for x in item],
    )


def nearest(
    eligibility: Eligibility,
    query_vector: Sequence[float],
    limit: int,
    *,
    mode: str = "auto",
    ef_search: int | None = None,
    plan: dict | None = None,
    columns: tuple[str, list] | None = None,
) -> list[tuple]:
    """The `limit` eligible memories nearest to `query_vector` as (id, cosine similarity), best first.
    `plan`, when given, is filled with how each scope was searched ({"hnsw": [...], "exact": [...]}).
    `columns` (a select list over `m` and its parameters): each result is (id, similarity, {column: value})
    with those columns of the row, read in the same statement."""
    found, _ = _search(eligibility, query_vector, limit, mode, ef_search, plan, columns, None)
    return found


def nearest_and_passages(
    eligibility: Eligibility,
    query_vector: Sequence[float],
    limit: int,
    candidates: list[int],
    *,
    mode: str = "auto",
) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """nearest(), and in the same statement (no second round trip after the query's embedding) the cosine
    similarity of the nearest passage of each memory that has passages among `candidates` and the memories
    found: the sentences of a turn a person said, embedded on their own (governance/models/passage.py).
    Only passages of the memory's current text count (their content hash is the memory's). The candidates
    are the caller's, found under the eligibility predicate already: a passage is read only through a
    memory the request may see."""
    return _search(eligibility, query_vector, limit, mode, None, None, None, sorted(set(candidates)))


def _search(eligibility, query_vector, limit, mode, ef_search, plan, columns, passages_of):
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    scope_ids = list(eligibility.scope_ids)
    if not scope_ids:
        return [], {}
    # The eligibility predicate carries scope_id = ANY(...) itself; each statement's scope condition
    # narrows it (written as a constant, so that the planner can match a partial index's predicate).
    where, params = eligibility.where("m")
    vec = vector_literal(query_vector)
    indexed = sorted(vector_index.indexed_scope_ids(scope_ids)) if mode == "auto" else []
    rest = [s for s in scope_ids if s not in indexed]
    # Every scope exact (the common case): one statement in autocommit, no planner settings. With indexed
    # scopes: their settings, SET LOCAL, then one statement, one round trip: an ordered scan of its own
    # index for each indexed scope, and one branch for the small scopes (no index matches them, so it can
    # only be a scan plus a sort).
    branches = [(_statement(f"m.scope_id = {int(s)}", where), [*params, limit]) for s in indexed]
    if rest:
        branches.append((_statement("m.scope_id = ANY(%s)", where, exact=True), [rest, *params, limit]))
    search, search_params = _query(branches, vec, columns, passages_of)
    if not indexed:
        with prepared_cursor(read_connection()) as cursor:
            cursor.execute(search, search_params)
            found, names = cursor.fetchall(), [c.name for c in cursor.description]
    else:
        local, local_params = _set_local(
            {**HNSW_SETTINGS, "hnsw.ef_search": str(max(ef_search or settings.RECALL_HNSW_EF_SEARCH, limit))}
        )
        connection = read_connection()
        if connection.in_atomic_block:  # inside a caller's transaction (a task, a test): as before
            with transaction.atomic(using=connection.alias), prepared_cursor(connection) as cursor:
                cursor.execute(local, local_params)
                cursor.execute(search, search_params)
                found, names = cursor.fetchall(), [c.name for c in cursor.description]
        elif settings.DB_PREPARED_STATEMENTS:
            # Autocommit (a request's read): the settings and the search sent together in psycopg's
            # pipeline mode. PostgreSQL runs the statements before one Sync as one implicit transaction,
            # so the SET LOCAL settings hold for the search and end with it, in one round trip; and each is
            # a statement of its own, so both are prepared (the search's text is the same for one set of
            # indexed scopes): no parse and no plan per request for the search of a big scope.
            # The cursor first: making it may run the connection's health check, which must not be sent
            # inside the pipeline.
            with prepared_cursor(connection) as cursor, _pipeline(connection):
                cursor.execute(local, local_params)
                cursor.execute(search, search_params)
                found, names = cursor.fetchall(), [c.name for c in cursor.description]
        else:
            # The same without prepared statements (a pooler in transaction mode): one message of two
            # statements, one implicit transaction. One round trip where BEGIN, settings, search and
            # COMMIT took four.
            with connection.cursor() as cursor:
                cursor.execute(f"{local}; {search}", [*local_params, *search_params])
                cursor.nextset()
                found, names = cursor.fetchall(), [c.name for c in cursor.description]
    if plan is not None:
        plan["hnsw"], plan["exact"] = indexed, rest
    parts: dict[int, float] = {}
    if passages_of is not None:
        parts = {int(r[0]): 1.0 - float(r[1]) for r in found if r[2] and r[1] is not None}
        found = [r[:2] for r in found if not r[2]]
    found.sort(key=lambda r: (r[1], r[0]))
    if columns is None:
        return [(int(r[0]), 1.0 - float(r[1])) for r in found[:limit]], parts
    rows = [(int(r[0]), 1.0 - float(r[1]), dict(zip(names[2:], r[2:], strict=True))) for r in found[:limit]]
    return rows, parts


@contextmanager
def _pipeline(connection):
    """psycopg's pipeline mode on `connection` (Django's wrapper, already connected: a cursor of it is
    open); an error it raises when it sends or syncs is translated as Django's own."""
    with connection.wrap_database_errors, connection.connection.pipeline():
        yield


PENDING_VECTORS_CAP = 10_000


def pending_vectors(eligibility: Eligibility) -> int:
    """How many eligible memories the vector search cannot see yet (no vector: the embedding queue has
    them), counted up to PENDING_VECTORS_CAP so a large import's backlog costs a bounded read. Uses
    the partial index memory_embedding_backlog, which holds only rows without a vector."""
    if not eligibility.scope_ids:
        return 0
    where, params = eligibility.where("m")
    with prepared_cursor(read_connection()) as cursor:
        cursor.execute(
            # Small talk never gets a vector (governance/services/small_talk.py): not pending.
            f"SELECT count(*) FROM (SELECT 1 FROM governance_memory m WHERE {where} AND m.embedding IS NULL"
            " AND NOT m.meta @> '{\"small_talk\": true}' LIMIT %s) AS pending",
            [*params, PENDING_VECTORS_CAP],
        )
        return int(cursor.fetchone()[0])
