"""The cost of the near-duplicate check at write (governance/services/near_duplicate.py), for
`manage.py bench_write --near-duplicates N`: a scope holding N statements, then single writes of
statements timed with the check on and off (interleaved, each write rolled back so the scope stays at N),
the check's own time (its lock, the candidate query and the word comparison), and the query plan.

Probes: a third repeat a stored statement word for word (the check finds it), a third say a stored one
with fewer words (found too: all their words are in it), a third are new statements of common words
only, the hardest case for the candidate query (every word's posting list is long; nothing matches)."""

from __future__ import annotations

import os
import random
import statistics
import time

from django.db import connection, transaction
from django.test import override_settings
from django.utils import timezone

from devtools.benchmarks.stats import percentile
from governance.models import Memory
from governance.services.bulk import copy_insert
from governance.services.memory import MemoryInput, build_memory, memory_record
from governance.services.near_duplicate import CANDIDATES_SQL, MAX_CANDIDATES, TARGET_STATUSES
from governance.services.scope import scope_ensure

USERS = [
    "the client",
    "the designer",
    "the finance lead",
    "our editor",
    "the reviewer",
    "the PM",
    "legal",
    "ops",
]
WANTS = ["wants", "asked for", "prefers", "needs", "approved", "rejected", "expects", "requires"]
THINGS = [
    "the Q3 deck",
    "the payment module",
    "the daily report",
    "the brochure",
    "the export job",
    "the notes",
]
HOW = ["as PPTX", "in plain language", "with crop marks", "before Friday", "after legal review", "with tests"]
COMMON = ["client", "deck", "report", "review", "export", "module", "notes", "legal", "plain", "tests"]


class _Rollback(Exception):
    pass


def statements(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{rng.choice(USERS).capitalize()} {rng.choice(WANTS)} {rng.choice(THINGS)} {rng.choice(HOW)}, "
        f"per ticket {rng.randrange(10**6)}."
        for _ in range(n)
    ]


def _probes(stored: list[str], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        text = rng.choice(stored)
        if i % 3 == 0:
            out.append(text)
        elif i % 3 == 1:
            out.append(text.split(", per ticket")[0])
        else:
            out.append(" ".join(rng.sample(COMMON, 4)) + f" {rng.choice(['today', 'soon', 'again'])}")
    return out


def _fill(scope, agent, texts: list[str], status: str) -> None:
    """Rows copied in directly (no audit, outbox or conflict check per row, which would take hours at 100k),
    as the write path would have stored them. The fill is not what is measured."""
    now = timezone.now()
    for start in range(0, len(texts), 5000):
        items = [
            MemoryInput(scope=scope, kind="semantic", text=t, source_kind="user", status=status)
            for t in texts[start : start + 5000]
        ]
        copy_insert(Memory, [build_memory(item, agent, now) for item in items])


def bench_near_duplicates(out, scope, agent, *, memories: int, writes: int, elsewhere: int = 0) -> dict:
    """`elsewhere` active statements go to another scope, and one to the written scope, so that conflict
    detection's query runs as in an installation with rules in force (its plan depends on the table)."""
    out.write(
        f"near-duplicate check: {memories} statements in one scope ({elsewhere} active in another),"
        f" {writes} single writes on and off"
    )
    stored = statements(memories, seed=7)
    started = time.perf_counter()
    other = scope_ensure(path=f"{scope.path}-elsewhere", actor=None) if elsewhere else None
    try:
        _fill(scope, agent, stored, "candidate")
        _fill(scope, agent, statements(1, seed=5), "active")
        if other:
            _fill(other, agent, statements(elsewhere, seed=3), "active")
        with connection.cursor() as cursor:
            # As autovacuum leaves a table between bulk changes: an earlier run's 100k deleted rows would
            # otherwise stay in the GIN posting lists (measured: 676 buffers for 170 on one probe kind).
            cursor.execute("VACUUM (ANALYZE) governance_memory")
        out.write(f"  filled in {time.perf_counter() - started:.0f} s")
        return _measure(out, scope, agent, stored, memories=memories, writes=writes, elsewhere=elsewhere)
    finally:
        if other:
            Memory.objects.filter(scope=other).delete()
            other.delete()


def _measure(out, scope, agent, stored, *, memories: int, writes: int, elsewhere: int) -> dict:

    def write(text: str, on: bool) -> float:
        item = MemoryInput(scope=scope, kind="semantic", text=text, source_kind="user", status="candidate")
        with override_settings(MEMORY_NEAR_DUPLICATES=on):
            began = time.perf_counter()
            try:
                with transaction.atomic():
                    memory_record(item=item, actor=agent)
                    elapsed = time.perf_counter() - began
                    raise _Rollback
            except _Rollback:
                pass
        return elapsed * 1000

    def check(text: str) -> float:
        from governance.services.memory.record import find_repeat

        item = MemoryInput(scope=scope, kind="semantic", text=text, source_kind="user")
        began = time.perf_counter()
        with transaction.atomic():
            find_repeat(item)
        return (time.perf_counter() - began) * 1000

    probes = _probes(stored, writes, seed=11)
    for text in probes[:10]:  # warm caches and connections; not counted
        write(text, True), write(text, False)
    on, off, alone, server = [], [], [], []
    for text in probes:
        on.append(write(text, True))
        off.append(write(text, False))
        alone.append(check(text))
        server.append(server_ms(scope.pk, text))
    kinds = ("repeat", "fewer words", "new, common words")
    by_kind = {k: [server[i] for i in range(len(probes)) if i % 3 == j] for j, k in enumerate(kinds)}
    # The probes that are new statements (every third) are stored either way: on them the check's cost is
    # pure overhead; a repeat (the others) stores nothing with the check on.
    new_on, new_off = on[2::3], off[2::3]
    result = {
        "memories": memories,
        "active_elsewhere": elsewhere,
        "writes": writes,
        "new_on_p50_ms": statistics.median(new_on),
        "new_on_p95_ms": percentile(new_on, 95),
        "new_off_p50_ms": statistics.median(new_off),
        "new_off_p95_ms": percentile(new_off, 95),
        "write_on_p50_ms": statistics.median(on),
        "write_on_p95_ms": percentile(on, 95),
        "write_off_p50_ms": statistics.median(off),
        "write_off_p95_ms": percentile(off, 95),
        "check_p50_ms": statistics.median(alone),
        "check_p95_ms": percentile(alone, 95),
        "query_server_p50_ms": statistics.median(ms for ms, _ in server),
        "query_server_p95_ms": percentile([ms for ms, _ in server], 95),
        "query_buffers": {
            k: {"p50": statistics.median(b for _, b in v), "max": max(b for _, b in v)}
            for k, v in by_kind.items()
        },
        "query_ms_by_probe": {
            k: {"p50": statistics.median(ms for ms, _ in v), "p95": percentile([ms for ms, _ in v], 95)}
            for k, v in by_kind.items()
        },
        "load_avg_1m": os.getloadavg()[0],
    }
    result["added_p50_ms"] = result["new_on_p50_ms"] - result["new_off_p50_ms"]
    result["added_p95_ms"] = result["new_on_p95_ms"] - result["new_off_p95_ms"]
    out.write(
        f"  all probes, check on:  p50 {result['write_on_p50_ms']:.2f} ms, p95 {result['write_on_p95_ms']:.2f} ms\n"
        f"  all probes, check off: p50 {result['write_off_p50_ms']:.2f} ms, p95 {result['write_off_p95_ms']:.2f} ms\n"
        f"  new statements (stored either way), on: p50 {result['new_on_p50_ms']:.2f} ms, p95 "
        f"{result['new_on_p95_ms']:.2f} ms; off: p50 {result['new_off_p50_ms']:.2f} ms, p95 {result['new_off_p95_ms']:.2f} ms\n"
        f"  → added per stored write: p50 {result['added_p50_ms']:.2f} ms, p95 {result['added_p95_ms']:.2f} ms "
        f"(the check alone: p50 {result['check_p50_ms']:.2f} ms, p95 {result['check_p95_ms']:.2f} ms)\n"
        f"  → the candidate query in PostgreSQL (EXPLAIN ANALYZE, planning + execution): "
        f"p50 {result['query_server_p50_ms']:.3f} ms, p95 {result['query_server_p95_ms']:.3f} ms "
        f"(1-min load average {result['load_avg_1m']:.1f} on {os.cpu_count()} CPUs: wall-clock figures on a "
        "shared machine are mostly waiting for a core)"
    )
    for k in kinds:
        t, b = result["query_ms_by_probe"][k], result["query_buffers"][k]
        out.write(
            f"    {k:<18} query p50 {t['p50']:.3f} ms, p95 {t['p95']:.3f} ms; buffers p50 {b['p50']:.0f}, max {b['max']}"
        )
    for label, text in (("a repeat", probes[0]), ("common words, no match", probes[2])):
        result[f"plan_{label}"] = plan = explain(scope.pk, text)
        out.write(f"  EXPLAIN ANALYZE of the candidate query for {label} ({text!r}):")
        for line in plan:
            out.write(f"    {line}")
    return result


def server_ms(scope_id: int, text: str) -> tuple[float, int]:
    """Planning + execution time of the candidate query as PostgreSQL measures it (no client, no network),
    and the buffers it touched (the same on a busy or an idle machine)."""
    import json

    from governance.models import lexical

    words = " ".join(dict.fromkeys(lexical.terms(text)))
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + CANDIDATES_SQL,
            [scope_id, "semantic", "", list(TARGET_STATUSES), words, MAX_CANDIDATES],
        )
        raw = cursor.fetchone()[0]
    plan = (json.loads(raw) if isinstance(raw, str) else raw)[0]
    buffers = plan["Plan"].get("Shared Hit Blocks", 0) + plan["Plan"].get("Shared Read Blocks", 0)
    return float(plan["Planning Time"]) + float(plan["Execution Time"]), int(buffers)


def explain(scope_id: int, text: str) -> list[str]:
    from governance.models import lexical

    words = " ".join(dict.fromkeys(lexical.terms(text)))
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN (ANALYZE, BUFFERS) " + CANDIDATES_SQL,
            [scope_id, "semantic", "", list(TARGET_STATUSES), words, MAX_CANDIDATES],
        )
        return [row[0] for row in cursor.fetchall()]
