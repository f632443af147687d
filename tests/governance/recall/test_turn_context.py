"""A conversation turn is embedded with the turn before it in its session (governance.models.lexical.in_context, governance.propagation.embedding.turn_context): "Yes, last week!"
carries its meaning in the question it answers. The stored text and the keyword terms stay the turn's
own, and a forgotten turn is never context: forgetting it embeds the turn after it again."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta

import numpy as np
from django.apps import apps as django_apps

from governance.embedding import get_embedder
from governance.models import Memory, Outbox
from governance.models.lexical import CONTEXT_CHARS, in_context, lexical_text
from governance.propagation import embed_memories
from governance.recall import recall_memories
from governance.services.events import event_ingest
from governance.services.memory import memory_forget
from governance.tasks import embed_outbox, propagate_outbox

DAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
QUESTION = "Did you ever run the Berlin marathon you trained for?"
ANSWER = "Yes, last week! It took me four hours."


def _session(scope, turns: list[tuple[str, str]], session: str = "s1", at: datetime = DAY) -> list[Memory]:
    memories = event_ingest(
        scope=scope,
        session=session,
        at=at,
        turns=[
            {"role": "user", "speaker": speaker, "content": text, "at": at + timedelta(seconds=i)}
            for i, (speaker, text) in enumerate(turns)
        ],
        actor=None,
    )
    episodes = [m for m in memories if m.kind == "episodic"]
    embed_memories([m.pk for m in episodes])
    return [Memory.objects.get(pk=m.pk) for m in episodes]


def _vector(memory: Memory) -> np.ndarray:
    return np.asarray(memory.embedding, dtype=np.float32)


def _embedded(text: str) -> np.ndarray:
    return get_embedder().embed_memories([text])[0]


def test_in_context_puts_the_turn_before_cut_short_above_the_turn():
    long_before = "word " * 100
    first, second = in_context(ANSWER, "Melanie", before=long_before, before_speaker="Caroline").split("\n")
    assert first.startswith("Caroline: word") and first.endswith("…")
    assert len(first) <= len("Caroline: ") + CONTEXT_CHARS + 2
    assert second == f"Melanie: {ANSWER}"
    assert in_context(ANSWER, "Melanie") == f"Melanie: {ANSWER}"


def test_a_turn_is_embedded_with_the_turn_before_it_and_keeps_its_own_text(project_scope):
    first, second = _session(project_scope, [("Caroline", QUESTION), ("Melanie", ANSWER)])
    # The session's first turn has nothing before it.
    assert np.allclose(_vector(first), _embedded(f"Caroline: {QUESTION}"), atol=1e-4)
    expected = in_context(ANSWER, "Melanie", before=QUESTION, before_speaker="Caroline")
    assert np.allclose(_vector(second), _embedded(expected), atol=1e-4)
    assert second.text == ANSWER
    assert second.lexical == lexical_text(ANSWER, "Melanie")  # the keyword terms are the turn's own


def test_a_short_answer_is_found_by_the_question_it_answers(project_scope, agent):
    # Alone, the other session's answer is nearer the question (more of its words: "four hours", "last
    # week"); with the question each answers, the marathon's answer is.
    _session(project_scope, [("Caroline", QUESTION), ("Melanie", ANSWER)])
    _session(
        project_scope,
        [
            ("Caroline", "How was the trip to your parents' place?"),
            ("Melanie", "Yes! It took me four hours to drive there last week."),
        ],
        session="s2",
    )
    answer = Memory.objects.get(scope=project_scope, text=ANSWER)
    query = "When did Melanie run the marathon?"
    results = recall_memories(principal=agent, scope=project_scope, query=query, k=1, strategy="vector")
    assert [r["memory_id"] for r in results] == [answer.pk]


def test_turns_of_other_sessions_and_scopes_are_never_context(project_scope, sibling_scope):
    later = DAY + timedelta(hours=1)
    _session(project_scope, [("Caroline", QUESTION)], session="s1")
    (other_session,) = _session(project_scope, [("Melanie", ANSWER)], session="s2", at=later)
    (other_scope,) = _session(sibling_scope, [("Melanie", ANSWER)], session="s1", at=later)  # same name
    for memory in (other_session, other_scope):
        assert np.allclose(_vector(memory), _embedded(f"Melanie: {ANSWER}"), atol=1e-4)


def test_forgetting_a_turn_embeds_the_turn_after_it_again_without_it(project_scope):
    secret = "My bank PIN is 4242 and my mother's maiden name is Rossi"
    opening, told, answer = _session(
        project_scope, [("Caroline", "Can I tell you something?"), ("Caroline", secret), ("Melanie", ANSWER)]
    )
    with_secret = in_context(ANSWER, "Melanie", before=secret, before_speaker="Caroline")
    assert np.allclose(_vector(answer), _embedded(with_secret), atol=1e-4)
    memory_forget(memory_id=told.pk, actor=None, reason="asked to", hard=True)
    for outbox_id in Outbox.objects.filter(state="pending").order_by("pk").values_list("pk", flat=True):
        propagate_outbox(outbox_id)
        embed_outbox(outbox_id)
    answer.refresh_from_db()
    # Now embedded with the turn before the forgotten one, and current again.
    without = in_context(ANSWER, "Melanie", before=opening.text, before_speaker="Caroline")
    assert answer.embedding_hash == answer.content_hash
    assert np.allclose(_vector(answer), _embedded(without), atol=1e-4)


def test_turns_embedded_before_the_rule_are_marked_to_be_embedded_again(project_scope, remember):
    first, second = _session(project_scope, [("Caroline", QUESTION), ("Melanie", ANSWER)])
    note = remember(project_scope, "Deploys go out on Tuesdays", kind="convention")
    migration = importlib.import_module("governance.migrations.0039_turn_context_embedding")
    migration.forward(django_apps, None)
    assert [Memory.objects.get(pk=m.pk).embedding_hash for m in (first, second)] == ["", ""]
    assert Memory.objects.get(pk=note.pk).embedding_hash == note.content_hash  # not a turn: untouched
    assert embed_memories([first.pk, second.pk]) == 2
