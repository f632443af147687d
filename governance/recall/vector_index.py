"""Vector indexes per scope: an HNSW index of its own for every scope big enough to need one.

Why not one HNSW index over the whole table: a read sees one scope and its ancestors, which at 1M
memories is a few percent of the rows. A global HNSW graph walks mostly through rows the filter then
throws away; even with pgvector's iterative scans, bench_context measured recall@10 of 0.72–0.90 against
exact search and p95 of 186–800 ms at 1M (docs/api.md, "Vector search"). The pgvector documentation's
answer for filtering on a column with a bounded set of hot values is a partial index per value; systems
built on HNSW do the same thing by size (an exact scan below a threshold, a graph above it).

So:
- a scope holding at least RECALL_VECTOR_INDEX_MIN_ROWS live memories gets a partial index
  `memory_vec_scope_<id> … WHERE scope_id = <id>` (the RECALL_VECTOR_INDEX_MAX largest, at most);
- every other scope is searched exactly (btree on scope_id, then a top-k sort), which is exact and
  cheap because such a scope is small;
- `governance.recall.vector.nearest` searches each indexed scope through its own index and the rest
  exactly, in one statement, and merges by distance.

PostgreSQL maintains a partial index inside the same transaction as the row, so these indexes are not
a derived store that can lag or resurrect anything: a retired memory is filtered by status in the
query, a forgotten one loses its vector in the forgetting transaction. What is maintained here, on
beat, is only *which* scopes have an index: built CONCURRENTLY (writes go on), invalid leftovers of an
interrupted build dropped, indexes of scopes that shrank below half the threshold dropped.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

log = logging.getLogger(__name__)

PREFIX = "memory_vec_scope_"
NAME_RE = re.compile(rf"^{PREFIX}(\d+)$")
# Rows that count towards a scope's size: what a read can return (the embedding backlog included, so
# an index exists by the time the worker has embedded a bulk import).
LIVE_STATUSES = ("active", "candidate", "proposed", "superseded")
# One maintainer at a time, across processes (beat, the command, an import).
ADVISORY_LOCK = 0x76656374  # "vect"


def index_name(scope_id: int) -> str:
    return f"{PREFIX}{int(scope_id)}"


def create_sql(scope_id: int, *, concurrently: bool) -> str:
    scope_id = int(scope_id)  # an id, never text: it is written into DDL
    ef = int(settings.RECALL_VECTOR_INDEX_EF_CONSTRUCTION)
    return (
        f"CREATE INDEX {'CONCURRENTLY ' if concurrently else ''}IF NOT EXISTS {index_name(scope_id)} "
        f"ON governance_memory USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = {ef}) "
        f"WHERE scope_id = {scope_id}"
    )


# Which scopes have a valid index, as this process last read it from the catalogue. A stale answer is
# safe: a scope whose index is gone is still searched correctly (the planner falls back to an exact
# sort), a scope whose index is new is searched exactly until the next read.
_known: dict = {"at": float("-inf"), "ids": frozenset(), "db": None}


def forget_known() -> None:
    _known["at"] = float("-inf")


def indexed_scope_ids(scope_ids=None) -> set[int]:
    """Scopes (of `scope_ids`, or all) whose partial index exists and is valid: safe to query. Read from
    the catalogue at most every RECALL_VECTOR_INDEX_CACHE_SECONDS per process and database."""
    now = time.monotonic()
    db = connection.settings_dict["NAME"]
    if now - _known["at"] > settings.RECALL_VECTOR_INDEX_CACHE_SECONDS or _known["db"] != db:
        _known.update(at=now, ids=frozenset(s for s, info in existing().items() if info.valid), db=db)
    known = _known["ids"]
    return set(known) if scope_ids is None else {int(s) for s in scope_ids if int(s) in known}


@dataclass(frozen=True)
class IndexInfo:
    scope_id: int
    name: str
    valid: bool
    bytes: int


def existing() -> dict[int, IndexInfo]:
    """Every per-scope vector index, valid or not (an interrupted CONCURRENTLY build leaves an invalid one)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid AND i.indisready, pg_relation_size(c.oid)"
            " FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE i.indrelid = 'governance_memory'::regclass AND c.relname LIKE %s",
            [PREFIX + "%"],
        )
        out = {}
        for name, valid, size in cursor.fetchall():
            match = NAME_RE.match(name)
            if match:
                out[int(match.group(1))] = IndexInfo(int(match.group(1)), name, bool(valid), int(size))
        return out


def scope_sizes(min_rows: int = 1) -> dict[int, int]:
    """Live memories per scope, for scopes holding at least `min_rows` (an index-only scan of
    memory_scope_status_kind)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT scope_id, count(*) FROM governance_memory WHERE status = ANY(%s)"
            " GROUP BY scope_id HAVING count(*) >= %s",
            [list(LIVE_STATUSES), max(1, int(min_rows))],
        )
        return {int(s): int(n) for s, n in cursor.fetchall()}


def wanted(sizes: dict[int, int], *, min_rows: int, max_indexes: int, have: set[int]) -> set[int]:
    """Which scopes should have an index: the largest at or above min_rows, at most max_indexes. A scope
    that has one keeps it until it falls below half of min_rows, so a scope near the line does not see its
    index built and dropped over and over."""
    keep_floor = max(1, min_rows // 2)
    eligible = [(n, s) for s, n in sizes.items() if n >= min_rows or (s in have and n >= keep_floor)]
    eligible.sort(key=lambda x: (-x[0], x[1]))
    return {s for _, s in eligible[: max(0, max_indexes)]}


def maintain(*, min_rows: int | None = None, max_indexes: int | None = None, dry_run: bool = False) -> dict:
    """Build the indexes big scopes lack, drop invalid or no-longer-wanted ones. Returns what it did.

    Outside a transaction the DDL runs CONCURRENTLY (writes to the table go on during a build); inside
    one (tests, a caller's atomic block) it runs plainly and rolls back with the transaction."""
    min_rows = int(settings.RECALL_VECTOR_INDEX_MIN_ROWS if min_rows is None else min_rows)
    max_indexes = int(settings.RECALL_VECTOR_INDEX_MAX if max_indexes is None else max_indexes)
    concurrently = not connection.in_atomic_block
    report: dict = {"built": [], "dropped": [], "dropped_invalid": [], "kept": [], "ms": {}, "skipped": None}
    with connection.cursor() as cursor:
        # In autocommit a session lock (released below); in a transaction one that ends with it.
        cursor.execute(
            "SELECT pg_try_advisory_lock(%s)" if concurrently else "SELECT pg_try_advisory_xact_lock(%s)",
            [ADVISORY_LOCK],
        )
        if not cursor.fetchone()[0]:
            report["skipped"] = "another maintainer is running"
            return report
        try:
            _maintain(
                cursor,
                report,
                min_rows=min_rows,
                max_indexes=max_indexes,
                dry_run=dry_run,
                concurrently=concurrently,
            )
        finally:
            forget_known()
            if concurrently:
                cursor.execute("RESET maintenance_work_mem")
                cursor.execute("SELECT pg_advisory_unlock(%s)", [ADVISORY_LOCK])
    return report


def _maintain(
    cursor, report: dict, *, min_rows: int, max_indexes: int, dry_run: bool, concurrently: bool
) -> None:
    have = existing()
    sizes = scope_sizes(max(1, min_rows // 2))
    target = wanted(
        sizes, min_rows=min_rows, max_indexes=max_indexes, have={s for s, i in have.items() if i.valid}
    )
    report["kept"] = sorted(s for s in target if s in have and have[s].valid)
    for scope_id, info in sorted(have.items()):
        if not info.valid:
            report["dropped_invalid"].append(scope_id)
        elif scope_id not in target:
            report["dropped"].append(scope_id)
    todo = sorted((s for s in target if s not in have or not have[s].valid), key=lambda s: (-sizes[s], s))
    if dry_run:
        report["built"] = todo
        return
    for scope_id in report["dropped_invalid"] + report["dropped"]:
        cursor.execute(
            f"DROP INDEX {'CONCURRENTLY ' if concurrently else ''}IF EXISTS {index_name(scope_id)}"
        )
        log.info("dropped vector index of scope %s", scope_id)
    if todo:
        cursor.execute(
            "SELECT set_config('maintenance_work_mem', %s, %s)",
            [settings.RECALL_VECTOR_INDEX_BUILD_MEMORY, not concurrently],
        )
    for scope_id in todo:
        start = time.perf_counter()
        cursor.execute(create_sql(scope_id, concurrently=concurrently))
        report["ms"][scope_id] = round((time.perf_counter() - start) * 1000)
        report["built"].append(scope_id)
        log.info(
            "built vector index of scope %s (%s rows) in %s ms",
            scope_id,
            sizes[scope_id],
            report["ms"][scope_id],
        )


def drop_all() -> list[int]:
    """Drop every per-scope vector index (before the vector column changes type, see reembed)."""
    dropped = []
    with connection.cursor() as cursor:
        for scope_id, info in sorted(existing().items()):
            cursor.execute(f"DROP INDEX IF EXISTS {info.name}")
            dropped.append(scope_id)
    forget_known()
    return dropped
