"""The second keyword pass within what a person the query names said (recall.speaker_stage), and the
session relevance that feeds turn ranking (rank.session_relevance). The second pass is narrowed from the
same eligibility predicate, so it never brings back what the first pass may not: a forgotten turn, a
retired one, a turn of a scope the caller cannot read."""

from __future__ import annotations

from governance.recall import packet
from governance.recall.rank import session_relevance
from governance.recall.state import Hit
from governance.recall.strategies import SPEAKERS, STRATEGIES
from governance.services.memory import memory_forget, memory_retire

QUESTION = "How does Melanie destress?"


def _state(principal, scope, query, k=10):
    state = packet._state(principal, scope, query, "full", None, k)
    packet._run_stages(state)
    return state


def _stage(state, name):
    return next(entry for entry in state.trace if entry["name"] == name)


def _turn(remember, scope, text, speaker, session="s1"):
    return remember(scope, text, kind="episodic", speaker=speaker, session=session)


def test_full_runs_the_person_pass_and_the_single_paths_do_not():
    assert SPEAKERS in STRATEGIES["full"]
    assert all(SPEAKERS not in STRATEGIES[name] for name in STRATEGIES if name != "full")


def test_the_pass_lists_what_the_named_person_said_without_their_name_as_a_term(
    project_scope, agent, remember
):
    running = _turn(remember, project_scope, "Running by the river is how I destress", "Melanie")
    kids = _turn(remember, project_scope, "Melanie here, the kids are fine", "Melanie")
    painting = _turn(remember, project_scope, "I paint to destress after work", "Caroline")
    state = _state(agent, project_scope, QUESTION)
    listed = [memory_id for memory_id, _ in state.lists[SPEAKERS]]
    # Caroline's turn holds "destress" too, and the kids turn holds "Melanie": only Melanie's own turn
    # with the question's other words is listed.
    assert listed == [running.pk]
    assert {kids.pk, painting.pk}.isdisjoint(listed)
    assert _stage(state, "speakers")["in"] == 1
    results = packet.recall_memories(principal=agent, scope=project_scope, query=QUESTION, k=3)
    assert results[0]["memory_id"] == running.pk


def test_no_named_person_no_second_query(project_scope, agent, remember):
    _turn(remember, project_scope, "Running by the river is how I destress", "Melanie")
    state = _state(agent, project_scope, "How does one destress?")
    assert state.lists[SPEAKERS] == []
    assert (_stage(state, "speakers")["in"], _stage(state, "speakers")["out"]) == (0, 0)


def test_the_pass_never_brings_back_a_forgotten_retired_or_out_of_scope_turn(
    project_scope, sibling_scope, other_workspace_scope, agent, remember
):
    seen = _turn(remember, project_scope, "Melanie's kids started school", "Melanie")
    kept = _turn(remember, project_scope, "Swimming is how I destress on Sundays", "Melanie")
    forgotten = _turn(remember, project_scope, "Pottery is how I destress", "Melanie")
    purged = _turn(remember, project_scope, "Camping is how I destress", "Melanie")
    retired = _turn(remember, project_scope, "Reading is how I destress", "Melanie")
    sibling = _turn(remember, sibling_scope, "Yoga is how I destress", "Melanie")
    elsewhere = _turn(remember, other_workspace_scope, "Baking is how I destress", "Melanie")
    memory_forget(memory_id=forgotten.pk, actor=None, reason="asked to")
    memory_forget(memory_id=purged.pk, actor=None, reason="asked to", hard=True)
    memory_retire(memory_id=retired.pk, actor=None, reason="no longer true")
    state = _state(agent, project_scope, QUESTION)
    # The pass ran (Melanie is a speaker of the visible turns) and found only what may be shown.
    assert _stage(state, "speakers")["in"] == 1
    listed = {memory_id for memory_id, _ in state.lists[SPEAKERS]}
    assert kept.pk in listed
    barred = {forgotten.pk, purged.pk, retired.pk, sibling.pk, elsewhere.pk}
    assert listed.isdisjoint(barred)
    everything = {h.id for h in state.evidence} | set(state.hits) | set(state.rows)
    assert everything.isdisjoint(barred)
    results = packet.recall_memories(principal=agent, scope=project_scope, query=QUESTION, k=10)
    assert {r["memory_id"] for r in results}.isdisjoint(barred)
    assert {kept.pk, seen.pk} <= {r["memory_id"] for r in results}


def _hit(memory_id, fused, session, kind="episodic", scope_id=1):
    return Hit(id=memory_id, row={"session": session, "kind": kind, "scope_id": scope_id}, fused=fused)


def test_a_session_is_as_relevant_as_its_best_three_matches():
    hits = [
        _hit(1, 1.0, "trip"),
        _hit(2, 0.2, "kids"),
        _hit(3, 0.6, "kids"),
        _hit(4, 0.5, "kids"),
        _hit(5, 0.4, "kids"),  # a fourth match of a session does not count
        _hit(6, 0.9, "trip", scope_id=2),  # the same session name in another scope is another session
        _hit(7, 0.9, "", kind="episodic"),  # no session: nothing
        _hit(8, 0.9, "trip", kind="semantic"),  # not a turn: nothing
    ]
    relevance = session_relevance(hits)
    assert set(relevance) == {(1, "trip"), (1, "kids"), (2, "trip")}
    assert relevance[(1, "kids")] == 1.0  # 0.6 + 0.5 + 0.4
    assert round(relevance[(1, "trip")], 6) == round(1.0 / 1.5, 6)
    assert round(relevance[(2, "trip")], 6) == round(0.9 / 1.5, 6)
    assert session_relevance([]) == {}
