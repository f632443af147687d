"""Measurements for bench_context: end-to-end latency of /api/v1/context and /api/v1/recall through the
real view stack (token auth, serializers, JSON), per-stage times from the trace, exact vs HNSW, and
HNSW recall@10 against exact search under the scope filter."""

from __future__ import annotations

import random
import statistics
import time
from collections import defaultdict
from contextlib import nullcontext
from unittest.mock import patch

import numpy as np
from django.db import connection
from django.test import override_settings
from rest_framework.test import APIClient

from devtools.benchmarks.stats import percentile
from governance.embedding import get_embedder
from governance.embedding.cache import query_cache
from governance.evaluation.retrieval import AFTER_EMBEDDING
from governance.models import Scope
from governance.permissions import reading_scope_ids
from governance.recall.eligible import WITHOUT_SUPERSEDED, Eligibility
from governance.recall.vector import nearest
from governance.runtime.tracing import parse_server_timing


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


class DataDistributionEmbedder:
    """The real embedder, run for real on every query (its time is part of the request), whose answer is
    then swapped for a vector from the synthetic data's distribution (a visible memory's vector plus
    noise). The synthetic vectors are random clusters; a real model's query vector lies outside all of
    them, equally far from everything, which no real deployment sees (its memories are embedded by the
    same model as its queries) and which makes every nearest-neighbour list arbitrary."""

    def __init__(self, real) -> None:
        self.real, self.next_vector = real, None
        self.name, self.dimensions = real.name + "+bench-data-vectors", real.dimensions

    def embed_query(self, text: str):
        self.real.embed_query(text)
        return self.next_vector

    def embed_memories(self, texts):
        return self.real.embed_memories(texts)

    def use_threads_here(self, threads: int) -> None:
        self.real.use_threads_here(threads)


def data_vector(scope: Scope, rng: np.random.Generator) -> np.ndarray:
    """A query vector near the data a read in `scope` sees: a visible active memory's vector plus noise."""
    return _near(reading_scope_ids(None, scope), rng)


def e2e(client: APIClient, scopes: list[Scope], mode: str, seed: int, *, data_vectors: bool = True) -> dict:
    """Latency of POST /context and /recall in one vector mode; per-stage times from the trace. The
    query-vector cache is emptied before every request, so each one pays for its embedding. With
    `data_vectors`, the searched vector comes from the data's distribution (DataDistributionEmbedder);
    the model still embeds every query."""
    rnd, rng = random.Random(seed), np.random.default_rng(seed)
    out: dict = {
        "context": [],
        "recall": [],
        "stages": defaultdict(list),
        "context_split": defaultdict(list),
        "recall_split": defaultdict(list),
    }
    swap = DataDistributionEmbedder(get_embedder()) if data_vectors else None
    with (
        override_settings(RECALL_VECTOR_MODE=mode),
        patch("governance.recall.packet.get_embedder", lambda: swap) if swap else nullcontext(),
    ):
        for scope in scopes:
            q = query_text(rnd)
            if swap:
                swap.next_vector = data_vector(scope, rng)
            query_cache.clear()
            t = time.perf_counter()
            r = client.post(
                "/api/v1/context", {"scope": scope.path, "query": q, "budget_tokens": 1500}, format="json"
            )
            out["context"].append((time.perf_counter() - t) * 1000)
            assert r.status_code == 200, r.content[:300]
            for stage in r.json()["trace"]["stages"]:
                out["stages"][stage["name"]].append(stage["ms"])
            _split(out["context_split"], r)
            query_cache.clear()
            t = time.perf_counter()
            r = client.post("/api/v1/recall", {"scope": scope.path, "query": q, "k": 10}, format="json")
            out["recall"].append((time.perf_counter() - t) * 1000)
            assert r.status_code == 200, r.content[:300]
            _split(out["recall_split"], r)
    return out


def _split(into: dict, response) -> None:
    """The response's Server-Timing (governance.runtime.tracing) per part, with `after_embedding` (the
    stages after the vector) and `middleware_auth_rendering` (the request inside Django beyond the
    service call and the access check: middleware, token authentication, parsing, JSON rendering)."""
    parts = parse_server_timing(response["Server-Timing"])
    parts["after_embedding"] = sum(parts.get(s, 0.0) for s in AFTER_EMBEDDING)
    parts["middleware_auth_rendering"] = parts["app"] - parts.get("service", 0.0) - parts.get("access", 0.0)
    for name, ms in parts.items():
        into[name].append(ms)


def hnsw_recall(scopes: list[Scope], seed: int, k: int = 10) -> dict:
    """recall@k against exact search under the scope and status filter, for queries near the data (a
    visible memory's vector plus noise): of the served path (`auto`: HNSW for scopes with their own index,
    exact for the rest, merged), and of each scope's HNSW index alone against exact search in that scope:
    once with the same query (`hnsw_alone_any`: it may come from another scope's data, far from everything
    in this one; the generator gives the root only a quarter of the clusters, so this happens) and once
    with a query near that scope's own data (`hnsw_alone`)."""
    rng = np.random.default_rng(seed)
    res: dict = {
        "auto": [],
        "hnsw_alone": [],
        "hnsw_alone_any": [],
        "ms_exact": [],
        "ms_auto": [],
        "eligible": [],
        "hnsw_scopes": [],
        "exact_scopes": [],
    }
    for scope in scopes:
        ids = reading_scope_ids(None, scope)
        elig = Eligibility(scope_ids=tuple(ids), statuses=WITHOUT_SUPERSEDED, at=_now())
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM governance_memory WHERE scope_id = ANY(%s) AND status = ANY(%s)",
                [ids, list(WITHOUT_SUPERSEDED)],
            )
            res["eligible"].append(cursor.fetchone()[0])
        q = _near(ids, rng)
        timed, plan = {}, {}
        for mode in ("exact", "auto"):
            t = time.perf_counter()
            timed[mode] = [
                i for i, _ in nearest(elig, q, k, mode=mode, plan=plan if mode == "auto" else None)
            ]
            res[f"ms_{mode}"].append((time.perf_counter() - t) * 1000)
        truth = set(timed["exact"])
        res["auto"].append(len(truth & set(timed["auto"])) / max(len(truth), 1))
        res["hnsw_scopes"].append(len(plan["hnsw"]))
        res["exact_scopes"].append(len(plan["exact"]))
        for scope_id in plan["hnsw"]:  # each index alone, against exact search of its own scope
            one = Eligibility(scope_ids=(scope_id,), statuses=WITHOUT_SUPERSEDED, at=elig.at)
            own = _near([scope_id], rng)
            for key, query in (("hnsw_alone_any", q), ("hnsw_alone", own)):
                exact_one = {i for i, _ in nearest(one, query, k, mode="exact")}
                hnsw_one = {i for i, _ in nearest(one, query, k)}
                res[key].append(len(exact_one & hnsw_one) / max(len(exact_one), 1))
    return res


def _near(scope_ids: list[int], rng: np.random.Generator) -> np.ndarray:
    """A random active memory's vector of `scope_ids`, plus noise, normalised."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT embedding FROM governance_memory WHERE scope_id = ANY(%s) AND status = 'active' "
            "ORDER BY random() LIMIT 1",
            [scope_ids],
        )
        base = np.array(_parse(cursor.fetchone()[0]), dtype=np.float32)
    q = base + rng.normal(0, 0.03, size=base.shape).astype(np.float32)
    return q / np.linalg.norm(q)


def _parse(value) -> list[float]:
    if isinstance(value, str):
        return [float(x) for x in value.strip("[]").split(",")]
    return list(value)


def _now():
    from django.utils import timezone

    return timezone.now()


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")
