"""Stage 4, rank: one score per recalled memory from how well it matches (the fused rank of the search
paths), how alive it is (activation, log K kept on the row), how recent it is and how important it was
said to be. The weights depend on the kind of task (`task.type`); see docs/api.md for why.

Without the activation stage (the `vector` and `structured_vector` ablations) only the match counts."""

from __future__ import annotations

import math

from django.conf import settings

from governance.models import Kind, Status
from governance.recall.state import Hit, RecallState
from governance.recall.strategies import ACTIVATION

# match, activation, recency, importance. Answering a question leans on the match; continuing a task on
# what just happened; planning on long-lived, often-used commitments.
WEIGHTS: dict[str, dict[str, float]] = {
    "default": {"match": 0.70, "activation": 0.12, "recency": 0.10, "importance": 0.08},
    "qa": {"match": 0.85, "activation": 0.05, "recency": 0.05, "importance": 0.05},
    "continue": {"match": 0.50, "activation": 0.15, "recency": 0.30, "importance": 0.05},
    "planning": {"match": 0.55, "activation": 0.20, "recency": 0.05, "importance": 0.20},
}
RECENCY_HALF_LIFE_DAYS = 3.0
# Activation is unbounded (reinforcement adds up); squash it to 0..1 for the weighted sum.
ACTIVATION_SCALE = 2.0
# A cold memory (activation below MEMORY_COLD_THRESHOLD) is out of the hot set: it only comes back as
# evidence when it is among this many best matches. Cold working memory never does: it is the scratch of
# a session that has ended, and must not turn into a standing rule of a later one.
COLD_STRONG_MATCH_RANK = 3


def weights_for(task_type: str) -> dict[str, float]:
    return WEIGHTS.get(task_type or "default", WEIGHTS["default"])


def recency(hit: Hit, state: RecallState) -> float:
    at = hit.row.get("occurred_at") or hit.row.get("created_at")
    if at is None:
        return 0.0
    age_days = max((state.at - at).total_seconds() / 86400.0, 0.0)
    return math.exp(-math.log(2) * age_days / RECENCY_HALF_LIFE_DAYS)


def score(hit: Hit, state: RecallState, weights: dict[str, float], use_activation: bool) -> float:
    match = hit.fused
    if not use_activation:
        return match
    act = 1.0 - math.exp(-hit.activation / ACTIVATION_SCALE)
    return (weights["match"] * match + weights["activation"] * act + weights["recency"] * hit.recency
            + weights["importance"] * float(hit.row.get("importance") or 0.0))


def rank(state: RecallState) -> tuple[int, int]:
    weights = weights_for(state.task_type)
    use_activation = ACTIVATION in state.stages
    everything = list(state.hits.values()) + state.recent + state.constraints + state.preferences + state.negative
    for hit in everything:
        hit.recency = recency(hit, state)
        hit.activation = float(hit.row.get("activation") or hit.activation or 0.0)
        if not hit.fused and hit.paths & {"recent", "keyed", "superseded_by", "call_partner"}:
            hit.fused = 0.5 if "keyed" in hit.paths else 0.0
        hit.score = round(score(hit, state, weights, use_activation), 6)
    state.evidence = _drop_overridden(state, sorted(state.hits.values(), key=lambda h: (-h.score, h.id)))
    if use_activation:
        state.evidence = _gate_cold(state, state.evidence)
    return len(everything), len(state.evidence)


def _drop_overridden(state: RecallState, evidence: list[Hit]) -> list[Hit]:
    """A keyed fact of an ancestor scope whose key a narrower scope sets again is not in force here: the
    keyed stage lists it as overridden, and it must not come back as evidence because search found it
    (an inherited "Export format: PPTX" next to the project's own "PDF")."""
    kept = []
    for hit in evidence:
        key, winner = hit.row.get("key"), state.keyed_winners.get(hit.row.get("key") or "")
        if (key and winner and winner[0] != hit.id and hit.row.get("status") == Status.ACTIVE
                and (hit.row.get("depth") or 0) < winner[1]):
            state.dropped.append((hit, "evidence", f"overridden by memory {winner[0]} in a narrower scope"))
            continue
        kept.append(hit)
    return kept


def _gate_cold(state: RecallState, evidence: list[Hit]) -> list[Hit]:
    threshold = settings.MEMORY_COLD_THRESHOLD
    by_match = sorted(evidence, key=lambda h: (-h.fused, h.id))
    strong = {h.id for h in by_match[:COLD_STRONG_MATCH_RANK] if h.fused > 0}
    kept = []
    for hit in evidence:
        if hit.activation >= threshold:
            kept.append(hit)
            continue
        cold = f"cold: activation {hit.activation:.3f} is below the threshold {threshold:g}"
        if hit.row.get("kind") == Kind.WORKING:
            state.dropped.append((hit, "evidence", f"{cold}; working memory of an ended session"))
        elif hit.id in strong:
            hit.flags.append("cold, kept for a strong match")
            kept.append(hit)
        else:
            state.dropped.append((hit, "evidence", f"{cold} and not among the best matches"))
    return kept
