"""What flows through the stages of one recall or context request, and the per-stage trace."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from governance.models import Principal, Scope
from governance.runtime import tracing

# The ids a stage records of what it dropped (the trace's counts[stage]["ids"][reason]): at most this many per
# reason, in the stage's own order (the nearest misses first), so a stored turn's trace stays bounded; the
# count beside them is always the whole number.
DROP_IDS_CAP = 100


@dataclass
class Hit:
    """One memory as the pipeline sees it: its row, the scores each path gave it and where it goes."""

    id: int
    row: dict
    semantic: float | None = None
    lexical: float | None = None
    fused: float = 0.0
    activation: float = 0.0
    recency: float = 0.0
    score: float = 0.0
    paths: set[str] = field(default_factory=set)
    flags: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        # Row columns read like attributes (hit.status, hit.key) without copying them onto the hit.
        row = self.__dict__.get("row")
        if row is not None and name in row:
            return row[name]
        raise AttributeError(name)


@dataclass
class RecallState:
    principal: Principal | None
    scope: Scope
    query: str
    stages: frozenset[str]
    at: datetime
    as_of: datetime | None = None
    k: int = 10
    session: str = ""
    task: dict | None = None
    task_type: str = ""
    query_vector: Any = None
    eligibility: Any = None
    # The scope and its ancestors when the caller's access was read up front (permissions.ScopeAccess).
    scope_ids: tuple[int, ...] | None = None
    vector_mode: str = "auto"
    # Ranked lists from each recall path (memory ids), then the fetched hits by id.
    lists: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    hits: dict[int, Hit] = field(default_factory=dict)
    # Rows the search stages read along with their lists (under the default eligibility), by id.
    rows: dict[int, dict] = field(default_factory=dict)
    repeat_keys: dict[int, tuple | None] = field(default_factory=dict)  # fusion.repeat_keys of `rows`
    evidence: list[Hit] = field(default_factory=list)
    recent: list[Hit] = field(default_factory=list)
    constraints: list[Hit] = field(default_factory=list)
    preferences: list[Hit] = field(default_factory=list)
    external: list[Hit] = field(default_factory=list)
    negative: list[Hit] = field(default_factory=list)
    relations: list[dict] = field(default_factory=list)
    # The hand-off lines (recall/handoff.py), when the request includes them; None otherwise.
    handoff: list[dict] | None = None
    # Facts in force by key: key → (memory id, scope depth) of the narrowest scope's active memory.
    keyed_winners: dict[str, tuple[int, int]] = field(default_factory=dict)
    dropped: list[tuple[Hit, str, str]] = field(default_factory=list)  # (hit, slot, why) left out early
    dropped_by: list[str] = field(default_factory=list)  # the stage that dropped each `dropped` entry
    trace: list[dict] = field(default_factory=list)
    # Per stage, what the trace says beside in/out so the counts add up (RecallState.run): the trace's
    # `counts`, kept apart so each stage entry keeps its four keys (name, ms, in, out).
    counts: dict[str, dict] = field(default_factory=dict)
    # Eligible memories not yet carrying a vector (just written; the embedding queue has them): found by
    # keyword, key and recency meanwhile, by vector once it lands. Capped at PENDING_VECTORS_CAP.
    pending_vectors: int = 0
    # The spans of time the query names (recall/dates.py), read once against `at` (rank.named_spans).
    named_spans: list | None = None

    def run(self, name: str, fn: Callable[[RecallState], tuple | None]) -> None:
        """Run one stage and record its time and how many items went in and came out. A stage may return
        a third element, a dict kept in `counts` under its name: `unit` when its counts are not memories
        (scopes, the query), `from` {stage: count} when what came in came from several stages, counts of
        the items it left out that `dropped` does not name, and `ids` {reason: [memory id, …]} naming
        them (the first DROP_IDS_CAP of each)."""
        start = time.perf_counter()
        before = len(self.dropped)
        with tracing.span(f"recall.{name}"):  # the stage's name only: never a query or a memory's text
            counts = fn(self) or (0, 0)
        extra = counts[2] if len(counts) > 2 else {}
        # Which stage left each item out, so a turn can say "dropped at rank" (the dashboard's why-not).
        self.dropped_by.extend([name] * (len(self.dropped) - before))
        ms = round((time.perf_counter() - start) * 1000, 3)
        self.trace.append({"name": name, "ms": ms, "in": counts[0], "out": counts[1]})
        tracing.timed(name, ms)  # the response's Server-Timing, when the request collects it
        if extra.get("ids") is not None:
            extra["ids"] = {why: list(ids)[:DROP_IDS_CAP] for why, ids in extra["ids"].items() if ids}
        if extra:
            self.counts[name] = extra
