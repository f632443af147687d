"""Question → evidence retrieval on imported conversations: for each question {scope, question,
evidence_refs, category?}, recall the top 10 memories with each strategy and measure recall@k of the
evidence refs (the share of the annotated turns whose ref is among the first k results' source refs).
The conversations are imported first with `manage.py import_conversations` (refs are kept)."""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass

from governance.errors import DomainError
from governance.evaluation.conversations import ABSTENTION

KS = (1, 5, 10)
UNKNOWN_STRATEGY = "Unknown strategy; choose one of: {choices}, or all."
DEFAULT_CATEGORY = "uncategorised"


@dataclass(frozen=True)
class Question:
    line: int
    scope: str
    question: str
    evidence_refs: tuple[str, ...]
    category: str


def parse_questions(lines: list[str]) -> tuple[list[Question], list[str]]:
    """Questions and, for every bad line, a sentence naming the line and what is wrong with it."""
    out, errors = [], []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except ValueError as exc:
            errors.append(f"line {number}: not JSON ({exc.msg})")
            continue
        if not isinstance(data, dict):
            errors.append(f"line {number}: expected a JSON object")
            continue
        problem = _problem(data)
        if problem:
            errors.append(f"line {number}: {problem}")
            continue
        out.append(
            Question(
                line=number,
                scope=data["scope"].strip().strip("/"),
                question=data["question"],
                evidence_refs=tuple(data["evidence_refs"]),
                category=(data.get("category") or DEFAULT_CATEGORY),
            )
        )
    return out, errors


def _problem(data: dict) -> str:
    for name in ("scope", "question"):
        if not isinstance(data.get(name), str) or not data[name].strip():
            return f"`{name}` is required and must be a non-empty string"
    refs = data.get("evidence_refs")
    if not isinstance(refs, list) or not refs or not all(isinstance(r, str) and r for r in refs):
        return "`evidence_refs` must be a non-empty list of turn refs"
    if data.get("category") is not None and not isinstance(data["category"], str):
        return "`category` must be a string"
    return ""


def _recall_at(refs: tuple[str, ...], ranked_refs: list[str], k: int) -> float:
    top = set(ranked_refs[:k])
    return sum(1 for r in refs if r in top) / len(refs)


def evaluate_questions(questions: list[Question], strategies: list[str], principal=None) -> dict:
    """{"questions": n, "strategies": {name: {"all": {...}, "categories": {c: {"questions", "recall@k"}},
    "latency_ms_p50", "latency_ms_p95", "errors": [...]}}}"""
    from governance.recall import recall_memories

    out: dict = {"questions": len(questions), "strategies": {}}
    for strategy in strategies:
        per_q: list[tuple[Question, dict[int, float]]] = []
        times, errors = [], []
        for q in questions:
            started = time.perf_counter()
            try:
                results = recall_memories(
                    principal=principal, scope=q.scope, query=q.question, k=max(KS), strategy=strategy
                )
            except DomainError as exc:
                errors.append(f"line {q.line}: {exc.message}")
                per_q.append((q, dict.fromkeys(KS, 0.0)))
                continue
            times.append((time.perf_counter() - started) * 1000)
            ranked = [(r.get("source") or {}).get("ref") or "" for r in results]
            per_q.append((q, {k: _recall_at(q.evidence_refs, ranked, k) for k in KS}))
        categories = sorted({q.category for q in questions})
        out["strategies"][strategy] = {
            "all": _aggregate([r for _, r in per_q]),
            "categories": {c: _aggregate([r for q, r in per_q if q.category == c]) for c in categories},
            "latency_ms_p50": round(statistics.median(times), 1) if times else None,
            "latency_ms_p95": round(sorted(times)[min(len(times) - 1, round(0.95 * (len(times) - 1)))], 1)
            if times
            else None,
            "errors": errors,
        }
    return out


def _aggregate(rows: list[dict[int, float]]) -> dict:
    return {
        "questions": len(rows),
        **{f"recall@{k}": round(statistics.fmean(r[k] for r in rows), 4) if rows else None for k in KS},
    }


# --- Published benchmark files (LoCoMo, LongMemEval): every search path, a BM25 baseline, time order ------


def _percentile(times: list[float], q: float) -> float | None:
    """In ms to 0.01: plain BM25 over a small file answers in a few hundredths of a millisecond, which a
    rounding to 0.1 printed as 0.0."""
    if not times:
        return None
    ordered = sorted(times)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 2)


def search_paths() -> dict[str, frozenset[str]]:
    """`full` and each single search path, run through the same pipeline as /recall."""
    from governance.recall.strategies import LEXICAL, STRATEGIES, VECTOR

    return {"full": STRATEGIES["full"], "vector": frozenset({VECTOR}), "keyword": frozenset({LEXICAL})}


def bm25_tokens(text: str) -> list[str]:
    """A plain baseline's tokens: lowercased words, nothing else (no stemming, no stopwords)."""
    import re

    return re.findall(r"\w+", text.lower())


class BM25Baseline:
    """Okapi BM25 (rank-bm25) over the episodic turns of each scope, indexed as "Speaker: text" like ours:
    the keyword baseline the issue compares with, computed here over the very rows that were imported."""

    def __init__(self) -> None:
        self._index: dict[str, tuple] = {}

    def _for(self, scope: str):
        if scope not in self._index:
            from rank_bm25 import BM25Okapi

            from governance.models import Memory
            from governance.models.lexical import searchable_text

            rows = list(
                Memory.objects.filter(scope__path=scope, kind="episodic", purged_at__isnull=True)
                .order_by("pk")
                .values_list("source_ref", "text", "speaker")
            )
            docs = [bm25_tokens(searchable_text(t, s)) for _, t, s in rows]
            self._index[scope] = (BM25Okapi(docs) if docs else None, [r for r, _, _ in rows])
        return self._index[scope]

    def ranked_refs(self, scope: str, question: str, k: int) -> list[str]:
        model, refs = self._for(scope)
        if model is None:
            return []
        scores = model.get_scores(bm25_tokens(question))
        order = sorted(range(len(refs)), key=lambda i: (-scores[i], i))[:k]
        return [refs[i] for i in order]


def first_per_category(questions: list, n: int) -> list:
    """The first `n` questions of each category (file order within a category), interleaved round-robin
    (the first of every category, then the second of every category, …): a stratified subset of a file
    too long to import whole, and one whose import, stopped part-way, has still covered every category."""
    by_category: dict[str, list] = {}
    for q in questions:
        picked = by_category.setdefault(q.category, [])
        if len(picked) < n:
            picked.append(q)
    rounds = [[picked[i] for picked in by_category.values() if i < len(picked)] for i in range(n)]
    return [q for round_ in rounds for q in round_]


def newer_first(q, ranked: list[str]) -> bool:
    """The newest session's evidence is found and ranks above every older evidence turn."""
    first_new = min((ranked.index(r) for r in q.newer_refs if r in ranked), default=None)
    if first_new is None:
        return False
    first_old = min((ranked.index(r) for r in q.older_refs if r in ranked), default=len(ranked))
    return first_new < first_old


def evaluate_loaded(
    questions: list,
    *,
    principal=None,
    paths: dict[str, frozenset[str]] | None = None,
    baseline: bool = True,
    progress=None,
    detail_path: str | None = None,
) -> dict:
    """recall@1/5/10 per category and overall, newer-evidence-first on knowledge updates, and recall
    latency p50/p95 (query embedding included), for each path and the BM25 baseline, on one question set.
    With `detail_path`, also "tasks": per question, what that path ranked first (its refs) and its recall."""
    from governance.embedding.cache import query_cache
    from governance.recall.packet import recall_with_stages

    paths = paths if paths is not None else search_paths()
    traces: dict[str, list[list[dict]]] = {name: [] for name in paths}
    scored: list[dict] = []  # the detail path's last hits: memory id and score beside each ref

    def recall_path(q, name: str, stages: frozenset[str]) -> list[str]:
        trace: list[dict] = []
        results = recall_with_stages(
            principal=principal,
            scope=q.scope,
            query=q.question,
            k=max(KS),
            stages=stages,
            trace=trace,
            as_of=q.asked_at,
        )
        traces[name].append(trace)
        if name == detail_path:
            scored[:] = [{"memory_id": r.get("memory_id"), "score": r.get("score")} for r in results]
        return [(r.get("source") or {}).get("ref") or "" for r in results]

    rankers: dict = {
        name: (lambda q, name=name, stages=stages: recall_path(q, name, stages))
        for name, stages in paths.items()
    }
    if baseline:
        bm25 = BM25Baseline()
        for scope in {q.scope for q in questions}:
            bm25._for(scope)  # index building is not query latency
        rankers["bm25"] = lambda q: bm25.ranked_refs(q.scope, q.question, max(KS))
    out: dict = {"questions": len(questions), "strategies": {}}
    categories = sorted({q.category for q in questions})
    tasks: list[dict] = []
    if detail_path is not None:
        out["tasks"] = tasks
    for name, ranker in rankers.items():
        per_q, times, errors, updates = [], [], [], []
        for i, q in enumerate(questions):
            query_cache.clear()  # every path pays for its query embedding, as a first-time /recall does
            started = time.perf_counter()
            try:
                ranked = ranker(q)
            except DomainError as exc:
                errors.append(f"{q.ident or q.scope}: {exc.message}")
                per_q.append((q, dict.fromkeys(KS, 0.0)))
                if name == detail_path:
                    tasks.append(
                        {
                            "id": q.ident or f"q{i + 1}",
                            "scope": q.scope,
                            "question": q.question,
                            "category": q.category,
                            "expected": list(q.evidence_refs),
                            "answer": getattr(q, "answer", ""),
                            "ranked": [],
                            "hits": [],
                            "error": exc.message,
                            **{f"recall@{k}": 0.0 for k in KS},
                        }
                    )
                continue
            times.append((time.perf_counter() - started) * 1000)
            per_q.append((q, {k: _recall_at(q.evidence_refs, ranked, k) for k in KS}))
            if name == detail_path:
                tasks.append(
                    {
                        "id": q.ident or f"q{i + 1}",
                        "scope": q.scope,
                        "question": q.question,
                        "category": q.category,
                        "expected": list(q.evidence_refs),
                        "answer": getattr(q, "answer", ""),
                        "ranked": ranked[: max(KS)],
                        "hits": scored[: max(KS)],
                        **{f"recall@{k}": per_q[-1][1][k] for k in KS},
                        # A knowledge update: whether the newer evidence came first (None: not one).
                        "newer_first": newer_first(q, ranked) if q.newer_refs and q.older_refs else None,
                    }
                )
            if q.newer_refs and q.older_refs:
                updates.append(newer_first(q, ranked))
            if progress is not None:
                progress(name, i + 1, len(questions))
        out["strategies"][name] = {
            "all": _aggregate([r for _, r in per_q]),
            "categories": {c: _aggregate([r for q, r in per_q if q.category == c]) for c in categories},
            "newer_first": {
                "questions": len(updates),
                "rate": round(sum(updates) / len(updates), 4) if updates else None,
            },
            "latency_ms_p50": _percentile(times, 0.5),
            "latency_ms_p95": _percentile(times, 0.95),
            "stages_ms": stage_split(traces.get(name, [])),
            "errors": errors,
        }
        if set(EXCLUDED_CATEGORIES) & set(categories):
            kept = [r for q, r in per_q if q.category not in EXCLUDED_CATEGORIES]
            out["strategies"][name]["answerable"] = _aggregate(kept)
        out["strategies"][name]["conversations"] = per_conversation(per_q)
    return out


def per_conversation(per_q: list[tuple]) -> dict:
    """Recall per conversation (a question's scope) over its answerable questions: a change that helps one
    conversation and costs another shows here, where the file's mean hides it."""
    scopes = dict.fromkeys(q.scope for q, _ in per_q)
    return {
        scope: _aggregate([r for q, r in per_q if q.scope == scope and q.category not in EXCLUDED_CATEGORIES])
        for scope in scopes
    }


# LoCoMo's adversarial questions ask about what was never said (their "evidence" is a turn near the
# topic): the benchmark's recall figures, and the issue's, leave them aside. They are still measured and
# printed as a category of their own; "answerable" is every other question.
# LongMemEval's abstention questions likewise (conversations.ABSTENTION): what they ask was never said.
EXCLUDED_CATEGORIES = ("5 adversarial", ABSTENTION)
# Stages that run after the query embedding has arrived (the ones before it overlap the embedding).
AFTER_EMBEDDING = ("vector", "named_time", "fuse", "adjudicate", "session", "rank")


def stage_split(traces: list[list[dict]]) -> dict:
    """p50/p95 (ms) of each stage over the questions, of the query embedding (`embed`, its own time in the
    worker thread; `embed_wait`, what the request waited for it after the stages that overlap it), and of
    `after_embedding`: the sum of the stages that run once the vector is there."""
    if not traces:
        return {}
    by_stage: dict[str, list[float]] = {}
    for trace in traces:
        for entry in trace:
            by_stage.setdefault(entry["name"], []).append(entry["ms"])
        after = [e["ms"] for e in trace if e["name"] in AFTER_EMBEDDING]
        by_stage.setdefault("after_embedding", []).append(sum(after))
    return {
        name: {"p50": _percentile(ms, 0.5), "p95": _percentile(ms, 0.95)} for name, ms in by_stage.items()
    }


def recall_of(questions: list, ranked: list[list[str]]) -> dict:
    """recall@1/5/10 over `questions`, given each one's ranked refs (in the same order)."""
    return _aggregate(
        [
            {k: _recall_at(q.evidence_refs, refs, k) for k in KS}
            for q, refs in zip(questions, ranked, strict=True)
        ]
    )


def p50_p95(values: list[float]) -> dict:
    return {"p50": _percentile(values, 0.5), "p95": _percentile(values, 0.95)}


def all_strategies() -> tuple[str, ...]:
    from governance.recall import STRATEGIES

    return tuple(STRATEGIES)


def resolve_strategies(choice: str) -> list[str]:
    known = all_strategies()
    if choice == "all":
        # Weakest first, full last: the order of the ablation table.
        return sorted(known, key=lambda s: (s == "full", known.index(s)))
    if choice not in known:
        raise ValueError(UNKNOWN_STRATEGY.format(choices=", ".join(known)))
    return [choice]
