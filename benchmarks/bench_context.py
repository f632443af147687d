"""Measurements for bench_context: end-to-end latency of /api/v1/context and /api/v1/recall through the
real view stack (token auth, serializers, JSON), per-stage times from the trace, exact vs HNSW, and
HNSW recall@10 against exact search under the scope filter."""

from __future__ import annotations

import random
import statistics
import time
from collections import defaultdict

import numpy as np
from django.db import connection
from django.test import override_settings
from rest_framework.test import APIClient

from benchmarks.stats import percentile
from governance.models import Scope
from governance.permissions import visible_scope_ids
from governance.recall.eligible import WITHOUT_SUPERSEDED, Eligibility
from governance.recall.vector import nearest


def pct(values: list[float], p: float) -> float:
    """Percentile p (0–100) of the measured values."""
    return percentile(values, p / 100)


def summary(values: list[float]) -> str:
    return f"p50 {pct(values, 50):7.1f}  p95 {pct(values, 95):7.1f}"


def task_scopes(n: int, seed: int) -> list[Scope]:
    rnd = random.Random(seed)
    paths = [f"bench/p{rnd.randrange(50)}/t{rnd.randrange(20)}" for _ in range(n)]
    return [Scope.objects.get(path=p) for p in paths]


def query_text(rnd: random.Random) -> str:
    return " ".join(f"w{rnd.randrange(3000)}" for _ in range(3)) + " what did we decide"


def e2e(client: APIClient, scopes: list[Scope], mode: str, seed: int) -> dict:
    """Latency of POST /context and /recall in one vector mode; per-stage times from the trace."""
    rnd = random.Random(seed)
    out: dict = {"context": [], "recall": [], "stages": defaultdict(list)}
    with override_settings(RECALL_VECTOR_MODE=mode):
        for scope in scopes:
            q = query_text(rnd)
            t = time.perf_counter()
            r = client.post("/api/v1/context", {"scope": scope.path, "query": q, "budget_tokens": 1500},
                            format="json")
            out["context"].append((time.perf_counter() - t) * 1000)
            assert r.status_code == 200, r.content[:300]
            for stage in r.json()["trace"]["stages"]:
                out["stages"][stage["name"]].append(stage["ms"])
            t = time.perf_counter()
            r = client.post("/api/v1/recall", {"scope": scope.path, "query": q, "k": 10}, format="json")
            out["recall"].append((time.perf_counter() - t) * 1000)
            assert r.status_code == 200, r.content[:300]
    return out


def hnsw_recall(scopes: list[Scope], seed: int, k: int = 10) -> dict:
    """recall@k against exact search under the scope and status filter, for queries near the data (a
    visible memory's vector plus noise): of the served path (`auto`: HNSW for scopes with their own index,
    exact for the rest, merged) and of each scope's HNSW index alone against exact search in that scope."""
    rng = np.random.default_rng(seed)
    res: dict = {"auto": [], "hnsw_alone": [], "ms_exact": [], "ms_auto": [], "eligible": [], "hnsw_scopes": [],
                 "exact_scopes": []}
    for scope in scopes:
        ids = visible_scope_ids(None, scope)
        elig = Eligibility(scope_ids=tuple(ids), statuses=WITHOUT_SUPERSEDED, at=_now())
        with connection.cursor() as cursor:
            cursor.execute("SELECT embedding FROM governance_memory WHERE scope_id = ANY(%s) AND status = 'active' "
                           "ORDER BY random() LIMIT 1", [ids])
            base = np.array(_parse(cursor.fetchone()[0]), dtype=np.float32)
            cursor.execute("SELECT count(*) FROM governance_memory WHERE scope_id = ANY(%s) AND status = ANY(%s)",
                           [ids, list(WITHOUT_SUPERSEDED)])
            res["eligible"].append(cursor.fetchone()[0])
        q = base + rng.normal(0, 0.03, size=base.shape).astype(np.float32)
        q /= np.linalg.norm(q)
        timed, plan = {}, {}
        for mode in ("exact", "auto"):
            t = time.perf_counter()
            timed[mode] = [i for i, _ in nearest(elig, q, k, mode=mode, plan=plan if mode == "auto" else None)]
            res[f"ms_{mode}"].append((time.perf_counter() - t) * 1000)
        truth = set(timed["exact"])
        res["auto"].append(len(truth & set(timed["auto"])) / max(len(truth), 1))
        res["hnsw_scopes"].append(len(plan["hnsw"]))
        res["exact_scopes"].append(len(plan["exact"]))
        for scope_id in plan["hnsw"]:  # each index alone, against exact search of its own scope
            one = Eligibility(scope_ids=(scope_id,), statuses=WITHOUT_SUPERSEDED, at=elig.at)
            exact_one = {i for i, _ in nearest(one, q, k, mode="exact")}
            hnsw_one = {i for i, _ in nearest(one, q, k)}
            res["hnsw_alone"].append(len(exact_one & hnsw_one) / max(len(exact_one), 1))
    return res


def _parse(value) -> list[float]:
    if isinstance(value, str):
        return [float(x) for x in value.strip("[]").split(",")]
    return list(value)


def _now():
    from django.utils import timezone

    return timezone.now()


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")
