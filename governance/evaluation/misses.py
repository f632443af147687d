"""The misses of an uploaded file's run, kept for study (governance.models.EvaluationMiss): built while the
run's own workspace still holds the imported turns, written with the run's figures, bounded in number
and in text, and never holding the words of a memory the run's workspace has forgotten."""

from __future__ import annotations

from governance.models import EvaluationMiss, EvaluationRun, Memory
from governance.propagation.misses import forgotten_words_in, holds, scrub_miss
from governance.propagation.turns import REDACTED

MISSES_KEPT = 300  # per run: a fair share of every category (round-robin), the rest counted
TURN_TEXT = 300  # characters kept of each quoted turn
QUESTION_TEXT = 1000  # characters kept of a question and of its gold answer


def missed(task: dict) -> bool:
    """A question is missed when not every evidence turn is among the first 10 (or its recall failed)."""
    return task.get("recall@10", 0) < 1.0 or bool(task.get("error"))


def kept_misses(tasks: list[dict], limit: int = MISSES_KEPT) -> list[dict]:
    """At most `limit` missed questions, taken round-robin over the categories (file order within one), so a
    category with many misses does not crowd out the others; listed by category, then file order."""
    by_category: dict[str, list[tuple[int, dict]]] = {}
    for index, task in enumerate(tasks):
        if missed(task):
            by_category.setdefault(str(task.get("category") or ""), []).append((index, task))
    kept: list[tuple[str, int, dict]] = []
    depth = 0
    while len(kept) < limit and any(depth < len(v) for v in by_category.values()):
        for category, rows in sorted(by_category.items()):
            if depth < len(rows) and len(kept) < limit:
                kept.append((category, *rows[depth]))
        depth += 1
    return [task for _, _, task in sorted(kept, key=lambda row: (row[0], row[1]))]


def _cut(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit], True)


def _turn(row: tuple | None, ref: str) -> dict:
    if row is None:  # a turn the import left out (too long to be one memory), or never in the file
        return {"ref": ref, "speaker": "", "text": "", "hash": "", "cut": False}
    speaker, text, digest = row
    kept, cut = _cut(text, TURN_TEXT)
    return {"ref": ref, "speaker": speaker, "text": kept, "hash": digest, "cut": cut}


def misses_build(run: EvaluationRun, tasks: list[dict]) -> list[EvaluationMiss]:
    """The (unsaved) misses of `tasks`, with the texts of their evidence and hits read from the run's own
    workspace (one query), before it is dropped; the words of memories the run's workspace has forgotten
    are redacted already."""
    chosen = kept_misses(tasks)
    wanted = {(t["scope"], ref) for t in chosen for ref in [*t["expected"], *t["ranked"]]}
    rows: dict[tuple[str, str], tuple] = {}
    if wanted:
        found = Memory.objects.filter(
            scope__workspace_id=run.sandbox_workspace_id,
            scope__path__in={s for s, _ in wanted},
            kind="episodic",
            source_ref__in={r for _, r in wanted},
        ).values_list("scope__path", "source_ref", "speaker", "text", "content_hash")
        rows = {(s, r): (sp or "", t, h) for s, r, sp, t, h in found}
    misses = []
    for position, task in enumerate(chosen):
        ranked = list(task.get("ranked") or [])
        scores = list(task.get("hits") or [])
        rank_of = {}
        for rank, ref in enumerate(ranked, start=1):
            rank_of.setdefault(ref, rank)
        evidence = [
            {**_turn(rows.get((task["scope"], ref)), ref), "rank": rank_of.get(ref)}
            for ref in task["expected"]
        ]
        expected = set(task["expected"])
        hits = [
            {
                **_turn(rows.get((task["scope"], ref)), ref),
                "rank": rank,
                "memory_id": (scores[rank - 1] if rank <= len(scores) else {}).get("memory_id"),
                "score": (scores[rank - 1] if rank <= len(scores) else {}).get("score"),
                "evidence": ref in expected,
            }
            for rank, ref in enumerate(ranked, start=1)
        ]
        question, _ = _cut(str(task.get("question") or ""), QUESTION_TEXT)
        answer, _ = _cut(str(task.get("answer") or ""), QUESTION_TEXT)
        misses.append(
            EvaluationMiss(
                run=run,
                position=position,
                question_id=str(task.get("id") or "")[:200],
                category=str(task.get("category") or "")[:100],
                question=question,
                answer=answer,
                error=str(task.get("error") or "")[:2000],
                recall={k: task.get(k) for k in ("recall@1", "recall@5", "recall@10")},
                evidence=evidence,
                hits=hits,
            )
        )
    return _without_forgotten(run, misses, tasks)


def _without_forgotten(
    run: EvaluationRun, misses: list[EvaluationMiss], tasks: list[dict]
) -> list[EvaluationMiss]:
    """A forget in the run's workspace before the misses are written (while the run measured, or long
    before: the file may hold words the team forgot) finds no miss to redact: redact them here, and the
    questions the results list."""
    if not run.workspace_id:
        return misses
    quotes = [str(t.get("question") or "") for t in tasks]
    hashes: list[str] = []
    for miss in misses:
        quotes += [miss.question, miss.answer]
        for turn in (*miss.evidence, *miss.hits):
            quotes.append(turn["text"])
            hashes.append(turn["hash"])
    pieces, found = forgotten_words_in(workspace_id=run.workspace_id, quotes=quotes, hashes=hashes)
    if pieces or found:
        for miss in misses:
            scrub_miss(miss, pieces, found)
        for task in tasks:
            if holds(str(task.get("question") or ""), pieces):
                task["question"] = REDACTED
    return misses
