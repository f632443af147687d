"""A query naming a calendar date ("on October 13, 2023", "in July 2023") moves the turns said within it
up (recall/dates.py, rank.DATE_WEIGHT): the date is the question's own time cue, which no search path
reads, since a turn's time is a field, not words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from governance.models import Memory
from governance.propagation import embed_memories
from governance.recall import rank, recall_memories
from governance.recall.dates import frame, spans_named, within
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
    # and only through the date it reads: with no span read, the later statement leads again.
    monkeypatch.setattr(rank.dates, "spans_named", lambda query, now=None: [])
    assert _first(agent, project_scope, asked) == late.pk


ASKED = datetime(2023, 4, 1, 16, 8, tzinfo=UTC)  # a Saturday


def _days(first: datetime, last: datetime) -> tuple[datetime, datetime]:
    slack = timedelta(hours=12)
    return first - slack, last + timedelta(days=1) + slack


@pytest.mark.parametrize(
    ("query", "span"),
    [
        # A day, read as the asker means it: the one of that name nearest the time pointed at, ...
        (
            "What did I do with Rachel on the Wednesday two months ago?",
            _days(datetime(2023, 2, 1, tzinfo=UTC), datetime(2023, 2, 1, tzinfo=UTC)),
        ),
        (
            "Who gave me the ring last Saturday?",
            _days(datetime(2023, 3, 25, tzinfo=UTC), datetime(2023, 3, 25, tzinfo=UTC)),
        ),
        (
            "What did I cook yesterday?",
            _days(datetime(2023, 3, 31, tzinfo=UTC), datetime(2023, 3, 31, tzinfo=UTC)),
        ),
        # ... so far back give or take half the unit (a vague count: a whole one) ...
        ("What did I buy four weeks ago?", (ASKED - timedelta(days=31.5), ASKED - timedelta(days=24.5))),
        ("What did I cook a couple of days ago?", (ASKED - timedelta(days=3), ASKED - timedelta(days=1))),
        # ... a month by name: the last one ...
        ("What did I plant last May?", (datetime(2022, 5, 1, tzinfo=UTC), datetime(2022, 6, 1, tzinfo=UTC))),
        ("What did I plant in March?", (datetime(2023, 3, 1, tzinfo=UTC), datetime(2023, 4, 1, tzinfo=UTC))),
        # ... and a stretch until now.
        (
            "How many plants did I get in the last month?",
            (ASKED - timedelta(days=31, hours=12), ASKED + timedelta(hours=12)),
        ),
        (
            "How many MCU films did I watch in the past 3 months?",
            (datetime(2023, 1, 1, 4, 8, tzinfo=UTC), ASKED + timedelta(hours=12)),
        ),
    ],
)
def test_a_relative_time_is_read_against_the_askers_present(query, span):
    assert spans_named(query, ASKED) == [span]


def test_months_named_together_are_each_read_and_since_reaches_now():
    january, march = (datetime(2023, m, 1, tzinfo=UTC) for m in (1, 3))
    assert spans_named("the two novels I finished in January and March", ASKED) == [
        (january, datetime(2023, 2, 1, tzinfo=UTC)),
        (march, datetime(2023, 4, 1, tzinfo=UTC)),
    ]
    # May is after April: the last May is the year before.
    assert spans_named("since May", ASKED) == [
        (datetime(2022, 5, 1, tzinfo=UTC), ASKED + timedelta(hours=12))
    ]


@pytest.mark.parametrize(
    "query",
    [
        "How many weeks ago did I meet my aunt?",  # it asks for the number
        "What did we eat on the last day of the trip?",
        "May I ask what you recommended?",
        "What happened last week?",  # read only with the asker's present
    ],
)
def test_what_names_no_time_is_no_span(query):
    now = None if query.endswith("last week?") else ASKED
    assert spans_named(query, now) == []


def test_the_turn_said_the_relative_day_the_question_names_comes_first(project_scope, agent):
    """ "Two months ago" asked on 1 April is the turn of 1 February, asked on 2 October the turn of 2 August:
    the same question, two answers, by the time it is asked (as_of)."""

    def said(text: str, month: int, day: int) -> int:
        return _turn(project_scope, text, datetime(2023, month, day, 14, tzinfo=UTC), f"s{month}").pk

    feb = said("Rachel and I went to the climbing gym together", 2, 1)
    march = said("Rachel and I went to the climbing gym again", 3, 20)
    aug = said("Rachel and I went to the climbing gym once more", 8, 2)
    sept = said("Rachel and I went to the climbing gym, as we do", 9, 20)

    def first(query: str, month: int, day: int) -> int:
        at = datetime(2023, month, day, 16, tzinfo=UTC)
        results = recall_memories(principal=agent, scope=project_scope, query=query, k=5, as_of=at)
        return results[0]["memory_id"]

    asked = "What did I do with Rachel at the climbing gym two months ago?"
    assert (first(asked, 4, 1), first(asked, 10, 2)) == (feb, aug)
    # Without the time, the later of close matches leads (rank.later_word_first).
    plain = "What did I do with Rachel at the climbing gym?"
    assert (first(plain, 4, 1), first(plain, 10, 2)) == (march, sept)


def test_the_time_a_question_names_is_searched_on_its_own(project_scope, agent, monkeypatch):
    """A turn of the named day that shares no word with the question and is outscored by closer turns of
    other days is in neither search list, so no date weight can bring it: the vector search narrowed to
    the named time (recall.named_time_stage) lists it."""
    from governance.recall import recall as recall_mod

    named = datetime(2023, 3, 14, 9, tzinfo=UTC)
    for n in range(1, 41):  # forty closer matches, on the days before (three days apart)
        _turn(project_scope, f"Rachel and I went hiking on trail {n}", named - timedelta(days=3 * n), f"d{n}")
    baked = _turn(project_scope, "We baked sourdough bread together", named, "named").pk
    asked = named + timedelta(days=2, hours=6)

    def ranked(query: str) -> list[int]:
        results = recall_memories(principal=agent, scope=project_scope, query=query, k=10, as_of=asked)
        return [r["memory_id"] for r in results]

    question = "What did I do with Rachel the day before yesterday?"
    assert ranked(question)[0] == baked
    monkeypatch.setattr(recall_mod, "NAMED_TIME_CANDIDATES", 0)  # the narrowed search finds nothing
    assert baked not in ranked(question)


@pytest.mark.parametrize(
    ("query", "framed"),
    [
        ("How many months ago did I attend the photography workshop?", ["How many months ago"]),
        ("How many days had passed since I started ukulele lessons?", ["How many days had passed"]),
        ("How long ago was Caroline's 18th birthday?", ["How long ago"]),
        ("How much time do I spend on guitar every day?", ["How much time"]),
        ("How many children does Melanie have?", ["How many"]),  # the children are what it is about
        ("What did I do with Rachel two months ago?", []),
    ],
)
def test_the_frame_of_a_count_or_time_question_is_read(query, framed):
    assert frame(query) == framed


def test_the_keyword_search_leaves_the_questions_frame_out(project_scope, agent, monkeypatch):
    """ "How many months ago did I attend the photography workshop?" is answered by "I went to a 3-day
    photography workshop today": "many months ago" says what kind of answer is wanted and is in no
    memory about the workshop, yet as keyword terms it ranked every turn that says "months ago" first."""
    from governance.recall import recall as recall_mod
    from governance.recall.packet import recall_with_stages
    from governance.recall.strategies import LEXICAL

    at = datetime(2023, 11, 1, 9, tzinfo=UTC)
    for n, what in enumerate(("a talk on pottery", "a wine tasting", "a climbing course", "a book club")):
        _turn(
            project_scope,
            f"Months ago I attended {what}, months ago now",
            at - timedelta(days=n + 1),
            f"o{n}",
        )
    workshop = _turn(project_scope, "I went to a 3-day photography workshop today", at, "w").pk

    def first() -> int:
        results = recall_with_stages(
            principal=agent,
            scope=project_scope,
            query="How many months ago did I attend the photography workshop?",
            k=5,
            stages=frozenset({LEXICAL}),
        )
        return results[0]["memory_id"]

    assert first() == workshop
    monkeypatch.setattr(recall_mod, "LEAVE_FRAME", False)
    assert first() != workshop


def test_the_named_time_is_searched_by_its_words_too(project_scope, agent):
    """recall.named_time_words_stage: the keyword search within the time the question names lists the turn
    of that day naming Rachel, and only turns of that day; a question naming no time sends no search."""
    from governance.recall import packet
    from governance.recall import recall as recall_mod
    from governance.recall.eligible import eligible
    from governance.recall.strategies import NAMED_TIME_WORDS

    wednesday = datetime(2023, 2, 1, 14, 40, tzinfo=UTC)
    that_day = _turn(
        project_scope, "I just started ukulele lessons with my friend Rachel today.", wednesday, "s1"
    )
    other_day = _turn(
        project_scope, "Rachel and I went hiking with Rachel's dog.", wednesday - timedelta(days=9), "s0"
    )
    asked = "What did I do with Rachel on the Wednesday two months ago?"

    def listed(query):
        state = packet._state(agent, project_scope, query, "full", ASKED, 5)
        state.run("eligible", eligible)
        state.run("named_time_words", recall_mod.named_time_words_stage)
        return [memory_id for memory_id, _ in state.lists[NAMED_TIME_WORDS]], state.trace[-1]

    found, trace = listed(asked)
    assert found == [that_day.pk] and other_day.pk not in found
    found, trace = listed("What did I do with Rachel?")
    assert found == [] and trace["in"] == 0  # no time named: no query
