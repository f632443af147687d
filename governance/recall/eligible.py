"""Stage 1, eligible: the structured filter every other stage's SQL carries. Visible scopes (the request
scope and its ancestors, only when the caller holds a grant covering it), status, validity window, task
type and — for replays — nothing that happened after `as_of`. Status is part of every query, so a
memory retired or forgotten a millisecond ago is never returned, whether or not propagation has run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from governance.models import Status
from governance.permissions import reading_scope_ids
from governance.recall.state import RecallState
from governance.recall.strategies import ADJUDICATE

# Superseded memories are fetched only when adjudication can turn them into negative context;
# retired, forgotten and rejected ones never leave the database.
WITH_SUPERSEDED = (Status.ACTIVE, Status.CANDIDATE, Status.PROPOSED, Status.SUPERSEDED)
WITHOUT_SUPERSEDED = (Status.ACTIVE, Status.CANDIDATE, Status.PROPOSED)


@dataclass(frozen=True)
class Eligibility:
    scope_ids: tuple[int, ...]
    statuses: tuple[str, ...]
    at: datetime
    as_of: datetime | None = None
    task_type: str = ""
    # Narrowed to what these speakers said (recall.speaker_stage's per-person search): every other
    # condition stays, so a narrowed search can only find less than the whole one.
    speakers: tuple[str, ...] = ()
    # Narrowed to what was said within these [start, end) spans (recall.named_time_stage's search of the
    # time a question names), on the same terms.
    said_within: tuple[tuple[datetime, datetime], ...] = ()

    def where(
        self, alias: str = "m", statuses: tuple[str, ...] | None = None, *, scope_bound: bool = False
    ) -> tuple[str, list]:
        """A SQL predicate over governance_memory `alias` and its parameters (psycopg %s style).
        `scope_bound`: the caller's statement already binds `alias.scope_id` to one of `scope_ids` (one
        branch per visible scope), so the scope list is left out: repeated, it made the planner misjudge
        a branch's rows and sort every row of the scope instead of reading a few from an ordered index."""
        a = alias
        sql = [
            f"{a}.status = ANY(%s)",
            f"{a}.purged_at IS NULL",
            f"({a}.valid_from IS NULL OR {a}.valid_from <= %s)",
            f"({a}.valid_until IS NULL OR {a}.valid_until > %s)",
            # A memory scoped to one kind of task is shown only for that kind of task.
            f"({a}.task_type = '' OR {a}.task_type = %s)",
        ]
        params: list = [[str(s) for s in (statuses or self.statuses)], self.at, self.at, self.task_type]
        if not scope_bound:
            sql.insert(0, f"{a}.scope_id = ANY(%s)")
            params.insert(0, list(self.scope_ids))
        if self.as_of is not None:
            sql.append(f"({a}.occurred_at IS NULL OR {a}.occurred_at <= %s)")
            params.append(self.as_of)
        if self.speakers:
            sql.append(f"{a}.speaker = ANY(%s)")
            params.append(list(self.speakers))
        if self.said_within:
            sql.append(
                " OR ".join(f"({a}.occurred_at >= %s AND {a}.occurred_at < %s)" for _ in self.said_within)
            )
            params.extend(x for span in self.said_within for x in span)
        return " AND ".join(f"({s})" for s in sql), params


def eligible(state: RecallState) -> tuple[int, int, dict]:
    # Read with the permission check when the request came with a ScopeAccess (one query, not two).
    scope_ids = (
        state.scope_ids
        if state.scope_ids is not None
        else tuple(reading_scope_ids(state.principal, state.scope))
    )
    statuses = WITH_SUPERSEDED if ADJUDICATE in state.stages else WITHOUT_SUPERSEDED
    state.eligibility = Eligibility(
        scope_ids=scope_ids, statuses=statuses, at=state.at, as_of=state.as_of, task_type=state.task_type
    )
    # Counts of scopes, not memories: the scope asked for, the scopes searched (it and those above it).
    return 1, len(scope_ids), {"unit": "scopes"}
