"""The keyword path weighs a query's words by how rare they are and rewards them in the query's order, so
the turn with the exact phrase comes first; of two close matches on one subject the later comes first."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.utils import timezone

from governance.propagation import embed_memories
from governance.recall import recall_memories
from governance.services.events import event_ingest


def _conversation(scope, lines, *, days_ago=90, session="s1"):
    turns = [
        {"role": "user", "speaker": who, "content": text, "ref": f"{session}:{i}"}
        for i, (who, text) in enumerate(lines)
    ]
    created = event_ingest(
        scope=scope, session=session, at=timezone.now() - timedelta(days=days_ago), turns=turns, actor=None
    )
    embed_memories([m.pk for m in created])
    return {m.source_ref: m.pk for m in created if m.kind == "episodic"}


def test_the_turn_with_the_exact_phrase_comes_first_on_the_keyword_path(project_scope, agent):
    filler = [
        ("Caroline", f"Caroline here, going to the group chat later, support you always ({i})")
        for i in range(12)
    ]
    ids = _conversation(
        project_scope,
        [
            *filler,
            ("Caroline", "I went to an LGBTQ support group yesterday and it was so powerful."),
            ("Melanie", "Caroline, my group of friends wants to support the bake sale."),
        ],
    )
    results = recall_memories(
        principal=agent,
        scope=project_scope,
        query="When did Caroline go to the LGBTQ support group?",
        k=5,
        strategy="full",
    )
    assert results[0]["memory_id"] == ids["s1:12"]


def test_of_two_statements_on_one_subject_the_later_comes_first(project_scope, agent):
    old = _conversation(
        project_scope,
        [("Sam", "I just ran the 5K and my personal best time is 27:12.")],
        days_ago=120,
        session="a",
    )
    new = _conversation(
        project_scope,
        [("Sam", "Update: I set a new personal best in the 5K, 25:50!")],
        days_ago=40,
        session="b",
    )
    _conversation(
        project_scope, [("Sam", "Can you suggest a recipe with lentils?")], days_ago=80, session="c"
    )
    results = recall_memories(
        principal=agent, scope=project_scope, query="What is my current personal best time in the 5K?", k=5
    )
    ids = [r["memory_id"] for r in results]
    assert ids.index(new["b:0"]) < ids.index(old["a:0"])


def test_a_question_about_the_beginning_keeps_the_earlier_statement_first(project_scope, agent):
    old = _conversation(
        project_scope,
        [("Sam", "I just ran the 5K and my personal best time is 27:12.")],
        days_ago=120,
        session="a",
    )
    new = _conversation(
        project_scope,
        [("Sam", "Update: I set a new personal best in the 5K, 25:50!")],
        days_ago=40,
        session="b",
    )
    results = recall_memories(
        principal=agent, scope=project_scope, query="What was my first personal best time in the 5K?", k=5
    )
    ids = [r["memory_id"] for r in results]
    assert ids.index(old["a:0"]) < ids.index(new["b:0"])


def test_the_keyword_score_read_from_the_stored_vector_is_the_weighted_coverage_with_the_phrase_bonus(
    project_scope, agent, remember
):
    """keyword_search computes match_score in SQL from the stored tsvector (migration 0030): the same
    figure for every match, a long memory included, and the rarest term counts most."""
    from django.db import connection

    from governance.models import Memory
    from governance.recall import search
    from governance.recall.eligible import Eligibility

    long_log = " ".join(f"line {i}: synced {i} calendar entries; cache warmed" for i in range(150))
    made = [
        remember(
            project_scope, f"{long_log}; backup of ledger_2020_q3.xlsx failed", kind="episodic", embed=False
        ),
        *(
            remember(
                project_scope,
                f"The backup of ledger_2020_q3{c}.xlsx failed because the disk was full",
                kind="episodic",
                embed=False,
            )
            for c in "abc"
        ),
        remember(project_scope, "Nothing about it at all", kind="episodic", embed=False),
    ]
    query = "Backup of ledger_2020_q3.xlsx failed?"
    eligibility = Eligibility(scope_ids=(project_scope.id,), statuses=("active",), at=timezone.now())
    found = dict(search.keyword_search(eligibility, query, 10))
    terms = search.query_terms(query)
    with connection.cursor() as cursor:
        weights = search.term_weights(cursor, eligibility, terms)
    for memory in made[:4]:
        expected = search.match_score(terms, weights, Memory.objects.get(pk=memory.pk).lexical)
        assert abs(found[memory.pk] - expected) < 1e-9
    assert made[4].pk not in found
    # The log holds every term, "q3" the rarest, and the phrase: it leads, well above the near-duplicates.
    assert max(found, key=found.get) == made[0].pk and found[made[0].pk] > 1.0 > found[made[1].pk]


def test_a_later_statement_does_not_pass_one_holding_an_identifier_of_the_query_it_lacks():
    """later_word_first: a later near-duplicate naming another file never moves in front of the memory
    naming the file the query asks about; two statements on one subject still trade places."""
    from governance.recall.rank import later_word_first
    from governance.recall.state import Hit

    now = timezone.now()

    def hit(i, text, days_ago, score):
        return Hit(
            id=i,
            row={"text": text, "speaker": "", "occurred_at": now - timedelta(days=days_ago)},
            score=score,
        )

    log = hit(1, "tick 57; backup of ledger_2020_q3.xlsx failed; cache warmed", 9, 0.85)
    notes = [
        hit(2, "The backup of ledger_2020_q3d.xlsx failed because the disk was full", 8, 0.86),
        hit(3, "The backup of ledger_2020_q3f.xlsx failed because the disk was full", 2, 0.84),
        hit(4, "The backup of ledger_2020_q3g.xlsx failed because the disk was full", 1, 0.75),
    ]
    ordered = later_word_first(
        "Backup of ledger_2020_q3.xlsx failed?", [notes[0], log, *notes[1:]], window=10
    )
    assert ordered.index(log) <= 1
    assert ordered.index(notes[2]) < ordered.index(notes[1])  # among the notes, the later still moves first
    old = hit(5, "I just ran the 5K and my personal best time is 27:12.", 120, 0.80)
    new = hit(6, "Update: I set a new personal best in the 5K, 25:50!", 40, 0.75)
    assert later_word_first("What is my current personal best time in the 5K?", [old, new], window=10) == [
        new,
        old,
    ]


def test_only_who_said_a_statement_can_update_it():
    """later_word_first: an answer repeating the words of the question it answers comes after it, but it
    is no update of what the user said (LongMemEval: a long assistant answer went first so); the user's own
    later statement still is, and between two people of a conversation neither updates the other."""
    from governance.recall.rank import later_word_first
    from governance.recall.state import Hit

    now = timezone.now()

    def hit(i, text, minutes_ago, score, source_kind="user", speaker=""):
        return Hit(
            id=i,
            row={
                "text": text,
                "speaker": speaker,
                "source_kind": source_kind,
                "occurred_at": now - timedelta(minutes=minutes_ago),
            },
            score=score,
        )

    query = "What ratio of coffee to water do I use in my French press?"
    said = hit(1, "I use one tablespoon of coffee to 4 ounces of water in my French press.", 30, 0.80)
    answer = hit(
        2, "Cleaning your French press: coffee oils, water and the ratio of vinegar …", 29, 0.74, "assistant"
    )
    assert later_word_first(query, [said, answer], window=10) == [said, answer]
    update = hit(
        3, "I switched to one tablespoon of coffee to 6 ounces of water in my French press.", 5, 0.75
    )
    assert later_word_first(query, [said, answer, update], window=10) == [update, said, answer]
    mel = hit(4, "My kids and I went camping at the beach last week", 60, 0.8, speaker="Melanie")
    car = hit(5, "Camping at the beach with the kids sounds lovely", 59, 0.75, speaker="Caroline")
    assert later_word_first("Where did Melanie go camping with the kids?", [mel, car], window=10) == [
        mel,
        car,
    ]


def test_a_question_about_the_present_puts_a_later_conversations_statement_first():
    """later_word_first: a knowledge update comes in a later conversation ("I've accumulated enough points
    for a single free night" … days later, in another session, "enough points for two free nights" as an
    aside of a long turn about a trip), and its turn can score well below the first statement, which was the
    turn's whole subject. A question about what holds now (its verb in the present, or a present-time cue)
    lets a later session's statement of the same subject by the same speaker pass a wider gap when the asker
    asks about themselves; a statement later in the same conversation, a question about the past or about
    another person keeps the narrow one."""
    from governance.recall.rank import LATER_SESSION_MARGIN, LATER_WORD_MARGIN, asks_present, later_word_first
    from governance.recall.state import Hit

    assert LATER_SESSION_MARGIN > LATER_WORD_MARGIN
    gap = (LATER_WORD_MARGIN + LATER_SESSION_MARGIN) / 2
    now = timezone.now()

    def hit(i, text, days_ago, score, session):
        return Hit(
            id=i,
            row={
                "text": text,
                "speaker": "",
                "kind": "episodic",
                "scope_id": 1,
                "source_kind": "user",
                "session": session,
                "occurred_at": now - timedelta(days=days_ago),
            },
            score=score,
        )

    first = hit(1, "I've accumulated enough Hilton points for a single free night's stay.", 20, 0.80, "s1")
    aside = "Planning Paris in November. By the way, I've now accumulated enough Hilton points for two free nights."
    later = hit(2, aside, 19, 0.80 - gap, "s2")
    present = "How many free nights can I redeem with my accumulated Hilton points?"
    assert asks_present(present)
    assert later_word_first(present, [first, later], window=10) == [later, first]
    # The same turn later in the same conversation: the narrow margin.
    same_session = hit(3, aside, 19.9, 0.80 - gap, "s1")
    assert later_word_first(present, [first, same_session], window=10) == [first, same_session]
    # A question about the past: the narrow margin.
    past = "How many free nights was I able to redeem with my accumulated Hilton points?"
    assert not asks_present(past)
    assert later_word_first(past, [first, later], window=10) == [first, later]
    # A question about someone else's statements: the narrow margin (their later mentions are more often
    # further events than updates).
    third = "How many free nights can Melanie redeem with her accumulated Hilton points?"
    assert asks_present(third)
    assert later_word_first(third, [first, later], window=10) == [first, later]
    assert asks_present("How many videos of the series have I completed so far?")
    assert asks_present("Where did Rachel move after her recent relocation?")  # a present-time cue
    assert not asks_present("When did Melanie go camping in June?")


def test_an_update_holding_half_of_the_first_statements_query_words_is_on_the_same_subject():
    """later_word_first: a count kept up to date ("27 different species so far", then "a Northern Flicker
    … brings my total species count to 32") shares only some of the question's words with its first
    statement: local, park, species, three of the six the first holds (bird, different, local, park, seen,
    species). Half of them is the same subject; one shared word is not."""
    from governance.recall.rank import SAME_SUBJECT_SHARE, later_word_first
    from governance.recall.state import Hit

    now = timezone.now()

    def hit(i, text, days_ago, score):
        return Hit(
            id=i,
            row={
                "text": text,
                "speaker": "",
                "source_kind": "user",
                "occurred_at": now - timedelta(days=days_ago),
            },
            score=score,
        )

    query = "How many different species of birds have I seen in my local park?"
    first = hit(
        1,
        "Speaking of bird identification, I've been keeping track of the species I've seen in my local park, "
        "and I've managed to spot 27 different species so far.",
        10,
        0.80,
    )
    update = hit(
        2,
        "I just saw a Northern Flicker in my local park last weekend, which brings my total species count to 32.",
        5,
        0.70,
    )
    assert SAME_SUBJECT_SHARE <= 3 / 6
    assert later_word_first(query, [first, update], window=10) == [update, first]
    aside = hit(3, "The park near the office has a new cafe.", 4, 0.75)
    assert later_word_first(query, [first, aside], window=10) == [first, aside]


def test_a_present_time_cue_of_two_words_is_read_as_a_phrase():
    """The phrase "these days" asks for the present; "What day of the week …" does not (as two terms, it made
    every question holding "day" or "days" a question about now)."""
    from governance.recall.rank import TIME_ORDER_NOW, TIME_ORDER_WEIGHT, asks_now, time_order_weight

    assert not asks_now("What day of the week did I meet my previous tutor Juan?")
    assert time_order_weight("How many days did I spend in Kyoto?") == TIME_ORDER_WEIGHT
    for query in ("What do I drink in the morning these days?", "How many books have I read so far?"):
        assert asks_now(query) and time_order_weight(query) == TIME_ORDER_NOW


def test_who_a_question_in_the_first_or_second_person_asks_about():
    from governance.models import SourceKind
    from governance.recall.rank import asked_about

    assert asked_about("What was my personal best in the 5K?") == SourceKind.USER
    assert asked_about("How many days did I spend in Kyoto?") == SourceKind.USER
    assert asked_about("Can you remind me what my usual coffee order is?") == SourceKind.USER
    assert asked_about("Do you remember what I told you about my dog?") == SourceKind.USER
    assert asked_about("What hotel did you recommend for Lisbon?") == SourceKind.ASSISTANT
    assert asked_about("Can you remind me which hotel you suggested?") == SourceKind.ASSISTANT
    assert asked_about("Can you recommend a show for me to watch tonight?") == SourceKind.USER
    assert asked_about("I'm deciding whether to buy a NAS now or wait. What do you think?") == SourceKind.USER
    assert asked_about("When did Caroline go to the support group?") is None


def test_only_the_other_partys_conversation_turns_lose_for_a_first_person_question():
    """A penalty on the other side's turns, not a bonus on the asker's: a fact, a rule or a tool result
    keeps its place against the user's own turns."""
    from governance.models import Kind, SourceKind
    from governance.recall.rank import _other_party
    from governance.recall.state import Hit

    def hit(kind, source_kind):
        return Hit(id=1, row={"kind": kind, "source_kind": source_kind})

    assert _other_party(hit(Kind.EPISODIC, SourceKind.ASSISTANT), SourceKind.USER)
    assert not _other_party(hit(Kind.EPISODIC, SourceKind.USER), SourceKind.USER)
    assert _other_party(hit(Kind.EPISODIC, SourceKind.USER), SourceKind.ASSISTANT)
    assert not _other_party(hit(Kind.EPISODIC, SourceKind.TOOL_RESULT), SourceKind.USER)
    assert not _other_party(hit(Kind.SEMANTIC, SourceKind.ASSISTANT), SourceKind.USER)


def test_a_question_about_what_the_user_said_puts_their_own_turn_before_the_answer(
    project_scope, agent, monkeypatch
):
    """The assistant's answer repeats the question's words and follows it; a question in the first person
    asks about what the user said (LongMemEval: long answers took the first place from the user's turn)."""
    from governance.recall import rank

    created = event_ingest(
        scope=project_scope,
        session="s1",
        at=timezone.now() - timedelta(days=30),
        turns=[
            {"role": "user", "content": "My personal best in the charity 5K run was 27:12.", "ref": "s1:0"},
            {
                "role": "assistant",
                "content": "Your personal best in the charity 5K run, 27:12, is a great time to build on: "
                "for the next charity 5K run, add one interval session a week.",
                "ref": "s1:1",
            },
        ],
        actor=None,
    )
    embed_memories([m.pk for m in created])
    ids = {m.source_ref: m.pk for m in created if m.kind == "episodic"}

    def first(query):
        results = recall_memories(principal=agent, scope=project_scope, query=query, k=5, strategy="full")
        return results[0]["memory_id"]

    question = "What was my personal best in the charity 5K run?"
    assert first(question) == ids["s1:0"]
    assert first("What did you say about my personal best in the charity 5K run?") == ids["s1:1"]
    monkeypatch.setattr(rank, "ASKER_WEIGHT", 0.0)
    assert first(question) == ids["s1:1"]  # without the rule, the answer's score puts it first


def test_the_term_counts_and_the_search_go_scope_by_scope_over_every_visible_scope_and_no_other(
    workspace_scope, project_scope, other_workspace_scope, remember, monkeypatch
):
    """search.py counts a term's memories and searches scope by scope (a GIN index takes no `= ANY`
    condition): the request scope and its ancestors are each counted and searched, the sum capped at
    DF_CAP, and another workspace's matches count for nothing."""
    from django.db import connection

    from governance.recall import search
    from governance.recall.eligible import Eligibility

    monkeypatch.setattr(search, "DF_CAP", 5)
    inherited = [
        remember(workspace_scope, f"Pallets ship on Mondays, rule {i}", embed=False) for i in range(2)
    ]
    own = [remember(project_scope, f"Pallets of slides go out, batch {i}", embed=False) for i in range(2)]
    for i in range(20):
        remember(other_workspace_scope, f"Pallets and more pallets, crate {i}", embed=False)
    remember(project_scope, "The crate of samples is blue", embed=False)
    eligibility = Eligibility(
        scope_ids=(workspace_scope.id, project_scope.id), statuses=("active",), at=timezone.now()
    )
    with connection.cursor() as cursor:
        weights = search.term_weights(cursor, eligibility, ["pallet", "crat"])  # the terms of pallets, crate
    assert weights["pallet"] == pytest.approx(math.log(1 + 5 / (1 + 4)))  # 2 + 2, none of globex's 20
    assert weights["crat"] == pytest.approx(math.log(1 + 5 / (1 + 1)))
    remember(project_scope, "Two more pallets", embed=False)
    remember(workspace_scope, "And pallets again", embed=False)
    with connection.cursor() as cursor:
        assert search.term_weights(cursor, eligibility, ["pallet"])["pallet"] == pytest.approx(
            math.log(1 + 5 / (1 + 5))  # 3 + 3, capped at 5
        )
    found = [i for i, _ in search.keyword_search(eligibility, "pallets", 10, fuzzy=False)]
    assert set(m.pk for m in inherited + own) <= set(found) and len(found) == 6


def test_in_a_large_scope_the_search_first_leaves_out_lone_common_words_and_answers_the_same(
    project_scope, remember, monkeypatch
):
    """search.py's pruned first search scores only what holds a rarer term or two common ones; it keeps
    that list only when it is provably the whole search's (its last row outscores a lone common word),
    and otherwise searches every match: the same list either way."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from governance.recall import search
    from governance.recall.eligible import Eligibility

    monkeypatch.setattr(search, "DF_CAP", 3)
    monkeypatch.setattr(search, "PRUNE_FROM_ROWS", 5)
    for i in range(6):
        remember(project_scope, f"The kids like pizza night, week {i}", embed=False)
    for i in range(4):
        remember(project_scope, f"Kids play outside after school, day {i}", embed=False)
        remember(project_scope, f"I like jazz records, volume {i}", embed=False)
    remember(project_scope, "We saw the zebra exhibit", embed=False)
    eligibility = Eligibility(scope_ids=(project_scope.id,), statuses=("active",), at=timezone.now())
    query = "What do the kids like at the zebra exhibit?"

    def searched(limit: int, *, prune: bool):
        monkeypatch.setattr(search, "PRUNE_MAX_COMMON", 6 if prune else 0)
        with CaptureQueriesContext(connection) as queries:
            found = search.keyword_search(eligibility, query, limit, fuzzy=False)
        return found, sum("ts_rank(" in q["sql"] for q in queries.captured_queries)

    # 7 hold "zebra", "exhibit" or both "kids" and "like": the 5 best outscore a lone "kids" or "like"
    pruned, searches = searched(5, prune=True)
    assert (pruned, 1) == (searched(5, prune=False)[0], searches)
    assert {memory_id for memory_id, _ in pruned} <= {
        m.pk for m in project_scope.memories.all() if "pizza" in m.text or "zebra" in m.text
    }
    # 10 asked for: the first search has 7, so every match is searched, lone common words included
    pruned, searches = searched(10, prune=True)
    assert (pruned, 2) == (searched(10, prune=False)[0], searches)
    assert len(pruned) == 10


def test_no_visible_scope_is_no_match_and_no_statement(project_scope, remember):
    """A branch per visible scope (search.py): with none, nothing is searched and nothing is sent."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from governance.recall import search
    from governance.recall.eligible import Eligibility

    remember(project_scope, "Pallets ship on Mondays", embed=False)
    eligibility = Eligibility(scope_ids=(), statuses=("active",), at=timezone.now())
    with CaptureQueriesContext(connection) as queries:
        assert search.keyword_search(eligibility, "pallets", 10) == []
        with connection.cursor() as cursor:
            assert search.term_counts(cursor, eligibility, ["pallet"]) == {"pallet": 0}
    assert not queries.captured_queries


def test_the_fuzzy_fallback_runs_for_a_term_no_visible_memory_holds(
    project_scope, other_workspace_scope, remember
):
    """The trigram fallback is for misspellings: "volleybal" is in no memory, so the fallback finds the
    league's turn. A question whose every term some visible memory holds ("volleyball record", held by
    another scope's memories too, which the fallback's index would read) sends no trigram scan; a term
    held only in another workspace is not held here."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from governance.recall import search
    from governance.recall.eligible import Eligibility

    league = remember(project_scope, "We are 3-2 so far in the volleyball league", embed=False)
    remember(project_scope, "Our record at the pub quiz is unbeaten", embed=False)
    remember(other_workspace_scope, "Badminton club ladder, spring season", embed=False)
    eligibility = Eligibility(scope_ids=(project_scope.id,), statuses=("active",), at=timezone.now())

    def search_sent(query):
        with CaptureQueriesContext(connection) as queries:
            found = [i for i, _ in search.keyword_search(eligibility, query, 10)]
        return found, any("word_similarity(" in q["sql"] for q in queries.captured_queries)

    found, fuzzy = search_sent("volleyball record")
    assert league.pk in found and not fuzzy
    found, fuzzy = search_sent("volleybal")  # only the fallback can find it
    assert found == [league.pk] and fuzzy
    found, fuzzy = search_sent("badminton ladder")  # held in another workspace only
    assert fuzzy and found == []


def test_in_a_long_text_the_querys_words_together_outscore_the_same_words_scattered():
    """search.near_together: two long turns hold the same words of the question; the one holding them within
    one window keeps its score, the one with them far apart loses up to PROXIMITY_WEIGHT of it, and a short
    text (under PROXIMITY_FROM characters) is scored as it is."""
    from governance.recall import search

    filler = "We talked about the weather, the garden, the neighbours and the new bakery in town. " * 4
    together = f"{filler}My recreational volleyball league record is 5-2 now. {filler}"
    scattered = f"The volleyball net was new. {filler}{filler}The league fees went up. {filler}Our record collection grew."
    assert len(together) > search.PROXIMITY_FROM and len(scattered) > search.PROXIMITY_FROM
    short = "volleyball, then the league, then a record"
    terms = ["recreational", "volleyball", "leagu", "record"]
    ranked = search.near_together(
        [(1, 0.8), (2, 0.8), (3, 0.8)], {1: scattered, 2: together, 3: short}, terms
    )
    scores = dict(ranked)
    assert scores[2] == pytest.approx(0.8) and scores[3] == pytest.approx(0.8)
    assert scores[1] == pytest.approx(0.8 * (1 - search.PROXIMITY_WEIGHT + search.PROXIMITY_WEIGHT / 3))
    assert [memory_id for memory_id, _ in ranked][-1] == 1
