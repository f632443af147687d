"""A query naming a calendar date ("on October 13, 2023", "in July 2023") moves the turns said within it
up (recall/dates.py, rank.DATE_WEIGHT): the date is the question's own time cue, which no search path
reads, since a turn's time is a field, not words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from governance.models import Memory
from governance.propagation import embed_memories
from governance.recall import rank, recall_memories
from governance.recall.dates import spans_named, within
from governance.services.events import event_ingest

EARLY = datetime(2023, 7, 2, 10, 31, tzinfo=UTC)
LATE = datetime(2023, 10, 13, 10, 31, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("What did she show on October 13, 2023?", datetime(2023, 10, 13), datetime(2023, 10, 14)),
        ("What did Gina find on 1 February, 2023?", datetime(2023, 2, 1), datetime(2023, 2, 2)),
        ("Plans for the 3rd of May 2024?", datetime(2024, 5, 3), datetime(2024, 5, 4)),
        ("What did they paint in July 2023?", datetime(2023, 7, 1), datetime(2023, 8, 1)),
        ("Any setback in Dec. 2023?", datetime(2023, 12, 1), datetime(2024, 1, 1)),
    ],
)
def test_a_named_day_or_month_is_the_span_it_covers(query, start, end):
    slack = timedelta(hours=12) if end - start == timedelta(days=1) else timedelta(0)
    assert spans_named(query) == [(start.replace(tzinfo=UTC) - slack, end.replace(tzinfo=UTC) + slack)]


@pytest.mark.parametrize(
    "query",
    ["What did she say in May?", "What happened last week?", "Ticket 2023 failed", "On 31 February 2023?"],
)
def test_no_calendar_date_no_span(query):
    assert spans_named(query) == []


def test_within_reads_the_spans():
    spans = spans_named("on October 13, 2023")
    assert within(LATE, spans) and not within(LATE + timedelta(days=2), spans) and not within(None, spans)


def _turn(scope, text: str, at: datetime, session: str) -> Memory:
    (memory,) = [
        m
        for m in event_ingest(
            scope=scope,
            session=session,
            at=at,
            turns=[{"role": "user", "speaker": "Melanie", "content": text, "at": at}],
            actor=None,
        )
        if m.kind == "episodic"
    ]
    embed_memories([memory.pk])
    return memory


def _first(agent, scope, query: str) -> int:
    return recall_memories(principal=agent, scope=scope, query=query, k=5)[0]["memory_id"]


def test_the_turn_said_on_the_named_day_comes_first(project_scope, agent, monkeypatch):
    early = _turn(project_scope, "Here is the lake painting I showed Caroline", EARLY, "s1")
    late = _turn(project_scope, "Here is the new lake painting I showed Caroline", LATE, "s2")
    # Without a date the later of two statements on one subject leads (rank.later_word_first) ...
    assert _first(agent, project_scope, "Which lake painting did Melanie show Caroline?") == late.pk
    # ... the day the question names brings the turn of that day first,
    asked = "Which lake painting did Melanie show Caroline on July 2, 2023?"
    assert _first(agent, project_scope, asked) == early.pk
    assert _first(agent, project_scope, "Which lake painting did Melanie show Caroline in October 2023?") == (
        late.pk
    )
    # and only through the date's weight.
    monkeypatch.setattr(rank, "DATE_WEIGHT", 0.0)
    assert _first(agent, project_scope, asked) == late.pk
