"""Measure the recall paths on a question → memory set (tests/data/retrieval/questions.json): each
single path and their fusion, through the same stages the API runs. Used by the fusion test and by
`bench_context --tuning`, which print recall@k per path and per question type."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from governance.embedding import get_embedder
from governance.models import Principal, Scope
from governance.propagation import embed_memories
from governance.recall import rank as rank_mod
from governance.recall import recall as recall_mod
from governance.recall.eligible import eligible
from governance.recall.packet import embed_question
from governance.recall.state import RecallState
from governance.recall.strategies import LEXICAL, STRATEGIES, VECTOR
from governance.services.memory import MemoryInput, memory_record_batch
from governance.services.scope import scope_ensure

DATA = Path(settings.BASE_DIR) / "tests" / "data" / "retrieval" / "questions.json"
PATHS: dict[str, frozenset[str]] = {
    "vector": frozenset({VECTOR}),
    "lexical": frozenset({LEXICAL}),
    "fused": frozenset({VECTOR, LEXICAL}),
    "full": STRATEGIES["full"],
}


def load(path: Path = DATA) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def seed(data: dict, *, project: str, sibling: str, other: str) -> dict[str, int]:
    """Write the set's memories (active, semantic) and decoys; returns label → memory id."""
    scopes = {
        "project": scope_ensure(path=project, actor=None),
        "sibling": scope_ensure(path=sibling, actor=None),
        "other_workspace": scope_ensure(path=other, actor=None),
    }
    rows = [("project", m) for m in data["memories"]] + [(d["scope"], d) for d in data["decoys"]]
    items = [
        MemoryInput(scope=scopes[where], kind="semantic", text=m["text"], source_kind="user", status="active")
        for where, m in rows
    ]
    created = memory_record_batch(items=items, actor=None)
    embed_memories([m.pk for m in created])
    return {m["id"]: c.pk for (_, m), c in zip(rows, created, strict=True)}


def ranked_ids(
    principal: Principal | None, scope: Scope, query: str, stages: frozenset[str], k: int, query_vector=None
) -> list[int]:
    state = RecallState(
        principal=principal,
        scope=scope,
        query=query,
        stages=stages,
        at=timezone.now(),
        k=k,
        query_vector=query_vector,
    )
    if VECTOR in stages and query_vector is None:
        embed_question(state)
    eligible(state)
    if VECTOR in stages:
        recall_mod.vector_stage(state)
    if LEXICAL in stages:
        recall_mod.lexical_stage(state)
    recall_mod.fuse_stage(state)
    rank_mod.rank(state)
    return [h.id for h in state.evidence[:k]]


def evaluate(
    data: dict,
    ids: dict[str, int],
    *,
    principal: Principal | None,
    scope: Scope,
    ks: tuple[int, ...] = (1, 3, 5),
) -> dict:
    """recall@k per path, overall and per question type, and how often a decoy was returned."""
    decoys = {ids[d["id"]] for d in data["decoys"]}
    hits: dict[str, dict[int, int]] = {p: defaultdict(int) for p in PATHS}
    by_type: dict[str, dict[str, list[int]]] = {p: defaultdict(lambda: [0, 0]) for p in PATHS}
    leaked = defaultdict(int)
    for q in data["questions"]:
        want = ids[q["answer"]]
        vector = get_embedder().embed_query(q["q"])  # once per question, shared by every path
        for name, stages in PATHS.items():
            got = ranked_ids(principal, scope, q["q"], stages, max(ks), query_vector=vector)
            leaked[name] += len(decoys & set(got))
            for k in ks:
                hits[name][k] += want in got[:k]
            by_type[name][q["type"]][0] += want in got[: ks[1] if len(ks) > 1 else ks[0]]
            by_type[name][q["type"]][1] += 1
    n = len(data["questions"])
    return {
        "questions": n,
        "recall": {p: {f"@{k}": round(hits[p][k] / n, 3) for k in ks} for p in PATHS},
        "by_type": {p: {t: f"{a}/{b}" for t, (a, b) in sorted(by_type[p].items())} for p in PATHS},
        "decoys_returned": dict(leaked),
    }
