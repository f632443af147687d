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

KS = (1, 5, 10)
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
        out.append(Question(line=number, scope=data["scope"].strip().strip("/"), question=data["question"],
                            evidence_refs=tuple(data["evidence_refs"]),
                            category=(data.get("category") or DEFAULT_CATEGORY)))
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
                results = recall_memories(principal=principal, scope=q.scope, query=q.question, k=max(KS),
                                          strategy=strategy)
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
            if times else None,
            "errors": errors,
        }
    return out


def _aggregate(rows: list[dict[int, float]]) -> dict:
    return {"questions": len(rows),
            **{f"recall@{k}": round(statistics.fmean(r[k] for r in rows), 4) if rows else None for k in KS}}
