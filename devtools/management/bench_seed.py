"""Bulk data for `manage.py bench_pages`: a `bench` workspace with N memories (COPY, not the services: the
point is volume, not the write path), revision chains with supersede relations, evidence links,
reinforcements, turns, an audit event per memory (a valid hash chain) and settled outbox rows."""

from __future__ import annotations

import json
import math
import random
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from governance.models import (
    DECAY_PER_DAY,
    AuditEvent,
    Kind,
    Memory,
    Outbox,
    OutboxDelivery,
    Role,
    Scope,
    SourceKind,
    activation,
    content_hash,
    lexical,
)
from governance.models.audit import GENESIS_HASH
from governance.services.audit import CHAIN_LOCK
from governance.services.principal import grant_add, user_ensure
from governance.services.scope import scope_ensure

WORKSPACE = "bench"
OWNER, REVIEWER = "bench-owner", "bench-reviewer"
WORDS = (
    "export deck slides pdf pptx client invoice refund payment report article style tone summary "
    "template review deadline budget meeting agenda draft chart table figure source policy test "
    "refactor api token cache queue worker schema index vector search recall memory"
).split()
KINDS = [k.value for k in Kind]
SOURCES = [s.value for s in SourceKind]
# Of the unkeyed memories: mostly active, some waiting for review, a few retired/forgotten/rejected.
STATUS_MIX = [
    ("active", 78),
    ("candidate", 9),
    ("proposed", 3),
    ("retired", 5),
    ("forgotten", 3),
    ("rejected", 2),
]


def _sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _vector(rng: random.Random, dims: int) -> str:
    values = [rng.gauss(0, 1) for _ in range(dims)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return "[" + ",".join(f"{v / norm:.4f}" for v in values) + "]"


def ensure_bench(
    *, memories: int, vectors: int, seed: int, log, turns: int = 10_000, vacuum: bool = True
) -> dict:
    """Create the bench workspace once (idempotent: an existing, big enough workspace is reused). `vacuum`
    off for callers inside a transaction (tests), where VACUUM cannot run."""
    owner = user_ensure(username=OWNER, password=None, actor=None)
    reviewer = user_ensure(username=REVIEWER, password=None, actor=None)
    root = scope_ensure(path=WORKSPACE, actor=None)
    scopes = [scope_ensure(path=f"{WORKSPACE}/p{p}/t{t}", actor=None) for p in range(10) for t in range(5)]
    grant_add(principal=owner, scope=root, role=Role.OWNER, actor=None)
    grant_add(
        principal=reviewer, scope=Scope.objects.get(path=f"{WORKSPACE}/p0"), role=Role.REVIEWER, actor=None
    )
    scope_ids = [s.pk for s in Scope.objects.filter(workspace=root.workspace).order_by("pk")]
    have = Memory.objects.filter(scope_id__in=scope_ids).count()
    if have >= memories:
        log(f"reusing the bench workspace: {have} memories")
        return {"owner": owner, "reviewer": reviewer, "root": root, "created": 0}
    rng = random.Random(seed)
    with transaction.atomic():
        ids = _copy_memories(rng, [s.pk for s in scopes], memories - have, vectors, owner.pk, log)
        _links_and_history(rng, ids, owner.pk, log, turns)
        _audit(ids, owner, log)
    if not vacuum:
        return {"owner": owner, "reviewer": reviewer, "root": root, "created": len(ids)}
    with connection.cursor() as cursor:
        # As autovacuum would: statistics for the planner and a visibility map for index-only counts.
        for table in (
            "governance_memory",
            "governance_auditevent",
            "governance_relation",
            "governance_turn",
            "governance_reinforcementevent",
        ):
            cursor.execute(f"VACUUM ANALYZE {table}")
    return {"owner": owner, "reviewer": reviewer, "root": root, "created": len(ids)}


def _copy_memories(rng, scope_ids, count, vectors, owner_id, log) -> dict:
    now = timezone.now()
    dims = Memory._meta.get_field("embedding").dimensions
    columns = [
        "scope_id",
        "kind",
        "key",
        "revision",
        "text",
        "lexical",
        "source_kind",
        "source_ref",
        "session",
        "speaker",
        "call_id",
        "task_type",
        "occurred_at",
        "status",
        "confidence",
        "importance",
        "tier",
        "content_hash",
        "embedding",
        "embedding_model",
        "embedding_hash",
        "activation_a0",
        "decay_rate",
        "activation_log_k",
        "last_reinforced_at",
        "reinforcement_count",
        "created_by_id",
        "meta",
        "created_at",
        "updated_at",
    ]
    chains = count // 20  # keyed facts with two revisions: r1 superseded, r2 active
    statuses = [s for s, w in STATUS_MIX for _ in range(w)]
    batch = f"b{now.timestamp() * 1e6:.0f}"  # distinct per call: a second call adds new keys
    sql = f"COPY governance_memory ({', '.join(columns)}) FROM STDIN"
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        for i in range(count):
            keyed = i < 2 * chains
            kind = "convention" if keyed else rng.choice(KINDS)
            text = _sentence(rng)
            days_ago = rng.uniform(0, 365)
            at = now - timedelta(days=days_ago)
            decay = DECAY_PER_DAY[kind]
            reinforced = rng.random() < 0.3
            log_k = activation.initial_log_k(1.0, decay, at)
            last = None
            if reinforced:
                last = now - timedelta(days=rng.uniform(0, min(days_ago, 30)))
                log_k = activation.reinforced_log_k(log_k, decay, 1.0, last)
            status = ("superseded" if i % 2 == 0 else "active") if keyed else rng.choice(statuses)
            digest = content_hash(text)
            vector = _vector(rng, dims) if i < vectors else None
            copy.write_row(
                [
                    scope_ids[(i // 2) % len(scope_ids)] if keyed else rng.choice(scope_ids),
                    kind,
                    f"fact_{batch}_{i // 2}" if keyed else None,
                    1 + i % 2 if keyed else 1,
                    text,
                    lexical.lexical_text(text),
                    rng.choice(SOURCES),
                    f"bench:{i}",
                    f"s{i % 500}",
                    "",
                    "",
                    "",
                    at,
                    status,
                    round(rng.random(), 3),
                    round(rng.random(), 3),
                    rng.choice(["short", "mid", "long"]),
                    digest,
                    vector,
                    "random" if vector else "",
                    digest if vector else "",
                    1.0,
                    decay,
                    log_k,
                    last,
                    1 if reinforced else 0,
                    owner_id,
                    json.dumps({"bench": batch}),
                    at,
                    at,
                ]
            )
            if i and i % 20000 == 0:
                log(f"  {i} memories copied")
    rows = (
        Memory.objects.filter(meta__bench=batch).order_by("pk").values_list("pk", "status", "key", "scope_id")
    )
    return {"rows": list(rows), "chains": chains}


def _links_and_history(rng, ids, owner_id, log, turns: int = 10_000) -> None:
    rows = ids["rows"]
    keyed = [r for r in rows if r[2]]
    now = timezone.now()
    relations = []
    for old, new in zip(keyed[0::2], keyed[1::2], strict=False):
        relations.append((new[0], old[0], "supersedes", "bench revision"))
    plain = [r for r in rows if not r[2]]
    for _ in range(len(rows) // 50):
        a, b = rng.sample(plain, 2)
        relations.append((a[0], b[0], rng.choice(["supports", "derived_from", "contradicts"]), "bench link"))
    with connection.cursor() as cursor:
        with cursor.cursor.copy(
            "COPY governance_relation (source_id, target_id, kind, reason, actor_id, created_at,"
            " by_hand) FROM STDIN"
        ) as copy:
            for s, t, kind, reason in dict.fromkeys(relations):
                copy.write_row([s, t, kind, reason, owner_id, now, False])
        with cursor.cursor.copy(
            "COPY governance_reinforcementevent (memory_id, at, weight, reason) FROM STDIN"
        ) as copy:
            for pk, status, _, _ in rows[: len(rows) // 2]:
                if status == "active":
                    for _ in range(rng.randint(0, 3)):
                        copy.write_row([pk, now - timedelta(days=rng.uniform(0, 60)), 1.0, "recall"])
        with cursor.cursor.copy(
            "COPY governance_turn (scope_id, session, query, strategy, request, packet, text, "
            "budget_limit, budget_used, token_counter, trace, created_at) FROM STDIN"
        ) as copy:
            for n in range(turns):
                cited = rng.sample(rows, 8)
                packet = {
                    "evidence": [
                        {
                            "memory_id": pk,
                            "kind": "semantic",
                            "key": key,
                            "revision": 1,
                            "status": st,
                            "text": "bench block",
                            "source": "user",
                            "score": round(rng.random(), 3),
                            "reason": "bench",
                        }
                        for pk, st, key, _ in cited[:6]
                    ],
                    "skipped": [
                        {"memory_id": pk, "text": "bench", "score": 0.1, "reason": "over budget"}
                        for pk, _, _, _ in cited[6:]
                    ],
                }
                # Queries of varied words, so the turn search by words has something to tell apart.
                copy.write_row(
                    [
                        cited[0][3],
                        f"s{n % 50}",
                        _sentence(rng, 8),
                        "full",
                        "{}",
                        json.dumps(packet),
                        "",
                        2000,
                        rng.randint(200, 2000),
                        "bench",
                        json.dumps({"stages": [{"name": "pack", "ms": 1.0, "in": 8, "out": 6}]}),
                        now - timedelta(minutes=n),
                    ]
                )
        # Which memories each turn cites (what the recall writes with a turn): the turn search's memory filter.
        cursor.execute(
            "INSERT INTO governance_turnmemory (turn_id, memory_id, slot, included)"
            " SELECT t.id, (b.value->>'memory_id')::bigint, e.key, e.key <> 'skipped'"
            " FROM governance_turn t, jsonb_each(t.packet) e, jsonb_array_elements(e.value) b"
            " WHERE t.token_counter = 'bench' AND NOT EXISTS (SELECT 1 FROM governance_turnmemory x WHERE x.turn_id = t.id)"
            " ON CONFLICT DO NOTHING"
        )
    recent = rows[-300:]
    outboxes = Outbox.objects.bulk_create(
        Outbox(topic="memory.created", memory_id=pk, payload={"memory_ids": [pk]}, state="done", done_at=now)
        for pk, _, _, _ in recent
    )
    OutboxDelivery.objects.bulk_create(
        OutboxDelivery(outbox=o, store=store, state="done", done_at=now)
        for o in outboxes
        for store in ("embedding", "cache")
    )
    log(f"  {len(relations)} relations, reinforcements, {turns} turns, {len(recent)} settled outbox rows")


def _audit(ids, owner, log) -> None:
    """One `memory.record` event per memory, appended to the real chain (so verification passes)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [CHAIN_LOCK])
    prev = AuditEvent.objects.order_by("-id").values_list("hash", flat=True).first() or GENESIS_HASH
    paths = dict(Scope.objects.values_list("pk", "path"))
    now = timezone.now()
    cols = [
        "at",
        "actor_id",
        "actor_name",
        "action",
        "target_type",
        "target_id",
        "scope_path",
        "before_status",
        "after_status",
        "reason",
        "data",
        "prev_hash",
        "hash",
    ]
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY governance_auditevent ({', '.join(cols)}) FROM STDIN") as copy,
    ):
        for pk, status, _, scope_id in ids["rows"]:
            event = AuditEvent(
                at=now,
                actor_name=owner.name,
                action="memory.record",
                target_type="memory",
                target_id=str(pk),
                scope_path=paths[scope_id],
                before_status="",
                after_status=status,
                reason="",
                data={"bench": True},
                prev_hash=prev,
            )
            event.hash = event.compute_hash()
            prev = event.hash
            copy.write_row(
                [
                    now,
                    owner.pk,
                    owner.name,
                    "memory.record",
                    "memory",
                    str(pk),
                    paths[scope_id],
                    "",
                    status,
                    "",
                    json.dumps({"bench": True}),
                    event.prev_hash,
                    event.hash,
                ]
            )
    log(f"  {len(ids['rows'])} audit events")
