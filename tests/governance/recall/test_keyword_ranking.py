"""The keyword path weighs a query's words by how rare they are and rewards them in the query's order, so
the turn with the exact phrase comes first; of two close matches on one subject the later comes first."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from governance.propagation import embed_memories
from governance.recall import recall_memories
from governance.services.events import event_ingest


def _conversation(scope, lines, *, days_ago=90, session="s1"):
    turns = [{"role": "user", "speaker": who, "content": text, "ref": f"{session}:{i}"}
             for i, (who, text) in enumerate(lines)]
    created = event_ingest(scope=scope, session=session, at=timezone.now() - timedelta(days=days_ago), turns=turns,
                           actor=None)
    embed_memories([m.pk for m in created])
    return {m.source_ref: m.pk for m in created if m.kind == "episodic"}


def test_the_turn_with_the_exact_phrase_comes_first_on_the_keyword_path(project_scope, agent):
    filler = [("Caroline", f"Caroline here, going to the group chat later, support you always ({i})") for i in range(12)]
    ids = _conversation(project_scope, [
        *filler,
        ("Caroline", "I went to an LGBTQ support group yesterday and it was so powerful."),
        ("Melanie", "Caroline, my group of friends wants to support the bake sale."),
    ])
    results = recall_memories(principal=agent, scope=project_scope,
                              query="When did Caroline go to the LGBTQ support group?", k=5, strategy="full")
    assert results[0]["memory_id"] == ids["s1:12"]


def test_of_two_statements_on_one_subject_the_later_comes_first(project_scope, agent):
    old = _conversation(project_scope, [("Sam", "I just ran the 5K and my personal best time is 27:12.")],
                        days_ago=120, session="a")
    new = _conversation(project_scope, [("Sam", "Update: I set a new personal best in the 5K, 25:50!")],
                        days_ago=40, session="b")
    _conversation(project_scope, [("Sam", "Can you suggest a recipe with lentils?")], days_ago=80, session="c")
    results = recall_memories(principal=agent, scope=project_scope,
                              query="What is my current personal best time in the 5K?", k=5)
    ids = [r["memory_id"] for r in results]
    assert ids.index(new["b:0"]) < ids.index(old["a:0"])


def test_a_question_about_the_beginning_keeps_the_earlier_statement_first(project_scope, agent):
    old = _conversation(project_scope, [("Sam", "I just ran the 5K and my personal best time is 27:12.")],
                        days_ago=120, session="a")
    new = _conversation(project_scope, [("Sam", "Update: I set a new personal best in the 5K, 25:50!")],
                        days_ago=40, session="b")
    results = recall_memories(principal=agent, scope=project_scope,
                              query="What was my first personal best time in the 5K?", k=5)
    ids = [r["memory_id"] for r in results]
    assert ids.index(old["a:0"]) < ids.index(new["b:0"])
