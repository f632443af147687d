"""Synthetic data for bench_context, generated inside PostgreSQL (no multi-GB COPY stream from Python).

A `bench` workspace: 50 projects × 20 tasks. 5% of memories sit at the workspace root, 15% at project
level, 80% at task level, so a read in a task scope sees ≈5.4% of all memories (root + its project + its
task): the scope filter is selective enough that a post-filtered HNSW scan would starve, which is what
iterative scans are for. Vectors are clustered (256 random unit centroids plus noise) like real
embeddings; a query is a memory's vector plus noise. ~92% active, 3% candidate, 5% retired. Every second
memory has two passages (sentences embedded on their own) near its vector.

Vector indexes are the product's own: after a load, `vector_index.maintain` gives every scope over
RECALL_VECTOR_INDEX_MIN_ROWS its HNSW index (the root's 50,000 rows and, at the default threshold, each
project's 3,000 at 1M); task scopes are searched exactly."""

from __future__ import annotations

import time

from django.conf import settings
from django.db import connection, transaction

from governance.models import fulltext
from governance.models.activation import EPOCH
from governance.recall import vector_index
from governance.services.scope import scope_ensure

PROJECTS, TASKS = 50, 20
CENTROIDS = 256
# Migration 0052: the GIN indexes keep a short pending list (a rebuilt one must too, or the bench's later
# writes would pile up to 4 MB of entries every read scans).
_GIN = f"WITH (gin_pending_list_limit = {fulltext.GIN_PENDING_LIST_KB})"
INDEXES = {
    # Migration 0030's keyword index over the stored vector (governance.models.fulltext).
    fulltext.MEMORY_INDEX: f"CREATE INDEX {fulltext.MEMORY_INDEX} ON governance_memory "
    f"USING gin (scope_id, {fulltext.MEMORY_COLUMN}) {_GIN}",
    "memory_text_trgm": f"CREATE INDEX memory_text_trgm ON governance_memory USING gin (lexical gin_trgm_ops) {_GIN}",
    # Migration 0003 (a database migrated before it was added gets it here).
    "memory_recent_episodic": "CREATE INDEX memory_recent_episodic ON governance_memory (scope_id, occurred_at DESC) "
    "WHERE kind = 'episodic' AND status = 'active'",
}


def ensure_scopes() -> dict:
    root = scope_ensure(path="bench", actor=None)
    projects, tasks = [], []
    for p in range(PROJECTS):
        project = scope_ensure(path=f"bench/p{p}", actor=None)
        projects.append(project.pk)
        for t in range(TASKS):
            tasks.append(scope_ensure(path=f"bench/p{p}/t{t}", actor=None).pk)
    return {"root": root.pk, "projects": projects, "tasks": tasks}


def count(scopes: dict) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM governance_memory m JOIN governance_scope s ON s.id = m.scope_id "
            "WHERE s.path = 'bench' OR s.path LIKE 'bench/%%'"
        )
        return cursor.fetchone()[0]


def load(scopes: dict, start: int, stop: int, log) -> dict:
    """Add memories number start..stop-1; drops and rebuilds the search indexes around the load."""
    timings = {}
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '2GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 2")
        t = time.perf_counter()
        for name in INDEXES:
            cursor.execute(f"DROP INDEX IF EXISTS {name}")
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS bench_centroid AS SELECT i, l2_normalize(ARRAY(SELECT random() - 0.5 + 0 * i "
            f"FROM generate_series(1, {settings.EMBEDDING_DIMENSIONS}))::vector) AS v FROM generate_series(0, {CENTROIDS - 1}) i"
        )
        step = 50_000
        for lo in range(start, stop, step):
            hi = min(lo + step, stop)
            _insert(cursor, scopes, lo, hi)
            log(f"    inserted {hi - start}/{stop - start} rows ({time.perf_counter() - t:.0f} s)")
        timings["insert_s"] = round(time.perf_counter() - t, 1)
        t = time.perf_counter()
        _passages(cursor, start, stop)
        timings["passages_s"] = round(time.perf_counter() - t, 1)
        log(f"    passages for every second row in {timings['passages_s']} s")
        for name, sql in INDEXES.items():
            _build(cursor, name, sql, timings, log, "built")
        cursor.execute("ANALYZE governance_memory")
    timings.update(build_vector_indexes(log))
    return timings


def build_vector_indexes(log) -> dict:
    """The per-scope HNSW indexes, as the beat task would build them (here in one transaction: no
    CONCURRENTLY, one table scan each instead of two; nobody else writes to the bench database)."""
    t = time.perf_counter()
    with transaction.atomic():
        report = vector_index.maintain()
    if report["built"] or report["dropped"] or report["dropped_invalid"]:
        log(
            f"    vector indexes: built {len(report['built'])}, dropped {len(report['dropped'])} "
            f"in {time.perf_counter() - t:.0f} s"
        )
    return {
        "vector_indexes_built": len(report["built"]),
        "vector_indexes_s": round(time.perf_counter() - t, 1),
    }


# What a read touches: the table, the vector indexes (memory_vec_scope_*) and the indexes of the read path.
# Not the trigram index (a fallback), so that it all fits in the shared buffers.
PREWARM_SKIP = ("memory_text_trgm",)


def prewarm(log) -> dict:
    """Load the memory table and the indexes a read uses into shared buffers (pg_prewarm), as they are on
    a server in use: otherwise the first touch of each of the 1,000 task scopes reads its rows from disk,
    and the benchmark measures the disk, not the read path. `bench_context --cold` skips this."""
    t = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        cursor.execute(
            "SELECT coalesce(sum(pg_prewarm(c.oid)), 0), count(*) FROM pg_class c"
            " WHERE (c.oid = 'governance_memory'::regclass OR c.oid IN"
            "  (SELECT indexrelid FROM pg_index WHERE indrelid = 'governance_memory'::regclass))"
            " AND c.relname <> ALL(%s)",
            [list(PREWARM_SKIP)],
        )
        blocks, relations = cursor.fetchone()
        cursor.execute("SHOW shared_buffers")
        buffers = cursor.fetchone()[0]
    seconds = round(time.perf_counter() - t, 1)
    log(
        f"    prewarmed {relations} relations, {int(blocks) * 8 // 1024:,} MB, into shared buffers of {buffers} "
        f"in {seconds} s"
    )
    return {"prewarm_mb": int(blocks) * 8 // 1024, "prewarm_s": seconds, "shared_buffers": buffers}


def ensure_indexes(log) -> dict:
    """Build any search index a previous, interrupted load left dropped."""
    timings = {}
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '2GB'")
        for name, sql in INDEXES.items():
            cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [name])
            if cursor.fetchone() is None:
                _build(cursor, name, sql, timings, log, "rebuilt")
        cursor.execute("ANALYZE governance_memory")
    timings.update(build_vector_indexes(log))
    return timings


def _build(cursor, name: str, sql: str, timings: dict, log, verb: str) -> None:
    t = time.perf_counter()
    cursor.execute(sql)
    timings[f"{name}_s"] = round(time.perf_counter() - t, 1)
    log(f"    {verb} {name} in {timings[f'{name}_s']} s")


# Every second memory is a person's turn of several sentences with PASSAGES of them embedded on their own
# (governance/models/passage.py; about two a turn on the LongMemEval-S dev import), their vectors near
# the turn's: the vector stage reads the nearest passage of each candidate, so its cost is in the figure.
PASSAGES = 2


def _passages(cursor, lo: int, hi: int) -> None:
    cursor.execute(
        f"""
        INSERT INTO governance_passage (memory_id, content_hash, embedding)
        SELECT m.id, m.content_hash, l2_normalize(m.embedding + ARRAY(SELECT (random() - 0.5) * 0.12 + 0 * k
                                     FROM generate_series(1, {settings.EMBEDDING_DIMENSIONS}))::vector)
        FROM governance_memory m CROSS JOIN generate_series(1, {PASSAGES}) k
        WHERE m.source_ref LIKE 'bench:%%' AND substr(m.source_ref, 7)::bigint BETWEEN %s AND %s
          AND substr(m.source_ref, 7)::bigint %% 2 = 0 AND m.embedding IS NOT NULL
        """,
        [lo, hi - 1],
    )


def _insert(cursor, scopes: dict, lo: int, hi: int) -> None:
    root, projects, tasks = scopes["root"], scopes["projects"], scopes["tasks"]
    # Where a row lives: g %% 20 == 0 → root (5%), 1..3 → a project (15%), else a task (80%).
    cursor.execute(
        f"""
        INSERT INTO governance_memory (scope_id, kind, key, revision, text, lexical, source_kind, source_ref,
            session, speaker, call_id, task_type, occurred_at, status, confidence, importance, tier,
            content_hash, embedding, embedding_model, embedding_hash, activation_a0, decay_rate,
            activation_log_k, reinforcement_count, meta, created_at, updated_at)
        SELECT CASE WHEN g %% 20 = 0 THEN %s
                    WHEN g %% 20 < 4 THEN (%s::bigint[])[1 + (g / 20) %% {PROJECTS}]
                    ELSE (%s::bigint[])[1 + (g / 20) %% {PROJECTS * TASKS}] END,
               'episodic', NULL, 1, w.words, w.words, 'user', 'bench:' || g, 'bench', '', '', '',
               ts, CASE WHEN g %% 100 < 92 THEN 'active' WHEN g %% 100 < 95 THEN 'candidate' ELSE 'retired' END,
               0.5, 0.5, 'short', md5(w.words), v.vec, 'bench/random-clustered', md5(w.words), 1.0, 0.1,
               0.1 * (extract(epoch from ts - '{EPOCH.isoformat()}'::timestamptz) / 86400.0), 0, '{{}}'::jsonb,
               now(), now()
        FROM generate_series(%s, %s) g
        CROSS JOIN LATERAL (SELECT now() - (random() * interval '90 days') - 0 * g * interval '1 second' AS ts) t
        CROSS JOIN LATERAL (SELECT 'bench memory ' || g || ' ' || string_agg('w' || (random() * 3000)::int, ' ')
                            AS words FROM generate_series(1, 8 + 0 * g)) w
        CROSS JOIN LATERAL (SELECT l2_normalize(c.v + ARRAY(SELECT (random() - 0.5) * 0.12 + 0 * g
                            FROM generate_series(1, {settings.EMBEDDING_DIMENSIONS}))::vector) AS vec
                            FROM bench_centroid c WHERE c.i = (g::bigint * 7919) %% {CENTROIDS}) v
        """,
        [root, projects, tasks, lo, hi - 1],
    )
