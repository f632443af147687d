"""A turn a person said that holds several sentences is also embedded sentence by sentence (its passages:
governance.models.lexical.passage_texts, governance/models/passage.py), and the vector search scores a
candidate by the nearer of its whole text and its nearest sentence (recall.vector_stage). The passages
are derived from the turn like its vector: written with it, replaced with it, dropped when it is purged,
and read only through a memory the request may see."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.apps import apps as django_apps

from governance.embedding import get_embedder
from governance.models import Memory, Outbox, Passage
from governance.models.lexical import PASSAGE_LIMIT, passage_texts
from governance.propagation import embed_memories
from governance.propagation.embedding import drop_purged_vectors
from governance.recall import recall as recall_mod
from governance.recall import recall_memories
from governance.services.events import event_ingest
from governance.services.memory import memory_forget
from governance.tasks import embed_outbox, propagate_outbox

DAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
# From a real LongMemEval-S haystack: the fact is the last sentence of a question about loans.
LOANS = (
    "I'm still leaning towards Stanford, but I'm concerned about the cost. I've been working in the tech"
    " industry for a while and I'm pretty confident I can get a good job after graduating. Do you think it's"
    " worth taking out loans to finance my education? Also, by the way, I completed my undergrad in CS from"
    " UCLA, which has a great reputation in the industry."
)
# Each nearer the question than the whole of LOANS (e5-small), none as near as its last sentence.
NEARER_WHOLES = [
    "I'm considering pursuing a Master's degree in Data Science and I've narrowed down my options to"
    " Stanford, MIT and Carnegie Mellon.",
    "Can you recommend some online courses in computer science for beginners?",
    "My sister just finished her degree in biology and is looking for lab jobs.",
]
QUESTION = "Where did I complete my Bachelor's degree in Computer Science?"


def _turns(scope, turns: list[tuple[str, str]], session: str = "s1") -> list[Memory]:
    memories = event_ingest(
        scope=scope,
        session=session,
        at=DAY,
        turns=[
            {"role": role, "content": text, "at": DAY + timedelta(minutes=i)}
            for i, (role, text) in enumerate(turns)
        ],
        actor=None,
    )
    episodes = [m for m in memories if m.kind == "episodic"]
    embed_memories([m.pk for m in episodes])
    return [Memory.objects.get(pk=m.pk) for m in episodes]


def test_a_turn_of_several_sentences_has_its_longer_sentences_as_passages():
    assert passage_texts("I moved to Lisbon in March.") == []  # one sentence
    assert passage_texts("Hi! Thanks.") == []  # no part long enough to be a sentence
    told = "Thanks, Caroline! I painted that lake sunrise last year, it is special to me."
    # The thanks counts towards "several" but says too little to be found by alone.
    assert passage_texts(told, "Melanie") == [
        "Melanie: I painted that lake sunrise last year, it is special to me."
    ]
    lines = (
        "Shopping list for the party on Saturday:\n- two bags of ice from the shop on the corner\n- candles"
    )
    assert passage_texts(lines) == [
        "Shopping list for the party on Saturday:",
        "- two bags of ice from the shop on the corner",
    ]
    chinese = "我上周末和朋友们一起去了杭州西湖边上的那家很有名的老字号茶馆喝了一下午的龙井茶。然后我们去看了演出，回来时已经很晚了。"
    assert passage_texts(chinese) == [chinese.split("。")[0] + "。"]
    pasted = " ".join(f"Sentence number {i} of a long pasted document goes on." for i in range(40))
    assert len(passage_texts(pasted)) == PASSAGE_LIMIT


def test_a_persons_turn_gets_its_sentences_embedded_and_an_assistants_reply_does_not(project_scope):
    told, reply = _turns(project_scope, [("user", LOANS), ("assistant", LOANS)])
    stored = list(Passage.objects.filter(memory=told).order_by("pk"))
    expected = passage_texts(LOANS)
    assert len(stored) == len(expected) == 4
    vectors = get_embedder().embed_memories(expected)
    for passage, want in zip(stored, vectors, strict=True):
        assert np.allclose(np.asarray(passage.embedding, dtype=np.float32), want, atol=1e-4)
        assert passage.content_hash == told.content_hash
    assert not Passage.objects.filter(memory=reply).exists()


def test_embedding_a_turn_again_replaces_its_passages(project_scope):
    (told,) = _turns(project_scope, [("user", LOANS)])
    before = set(Passage.objects.filter(memory=told).values_list("pk", flat=True))
    Memory.objects.filter(pk=told.pk).update(embedding_hash="")
    assert embed_memories([told.pk]) == 1
    after = set(Passage.objects.filter(memory=told).values_list("pk", flat=True))
    assert len(after) == len(before) == 4 and not after & before


def test_a_fact_said_in_one_sentence_of_a_long_turn_is_found_by_it(project_scope, agent, monkeypatch):
    for i, text in enumerate(NEARER_WHOLES):  # each a session of its own: no turn before it as context
        _turns(project_scope, [("user", text)], session=f"other-{i}")
    (told,) = _turns(project_scope, [("user", LOANS)])

    def best() -> int:
        results = recall_memories(
            principal=agent, scope=project_scope, query=QUESTION, k=1, strategy="vector"
        )
        return results[0]["memory_id"]

    assert best() == told.pk
    monkeypatch.setattr(recall_mod, "NEAREST_PART", False)
    assert best() != told.pk  # by its whole text, the three others are nearer


def test_a_sentence_of_a_turn_in_a_scope_the_caller_cannot_see_finds_nothing(
    project_scope, sibling_scope, other_workspace_scope, agent
):
    # The same turn that a sentence finds first in the caller's scope (the test above), said in a sibling
    # project and in another workspace: the agent's recall in its own project returns neither, by any path.
    for i, text in enumerate(NEARER_WHOLES):
        _turns(project_scope, [("user", text)], session=f"other-{i}")
    hidden = [_turns(scope, [("user", LOANS)])[0] for scope in (sibling_scope, other_workspace_scope)]
    assert all(Passage.objects.filter(memory=m).count() == 4 for m in hidden)
    results = recall_memories(principal=agent, scope=project_scope, query=QUESTION, k=10, strategy="full")
    assert results and not {r["memory_id"] for r in results} & {m.pk for m in hidden}
    assert {Memory.objects.get(pk=r["memory_id"]).scope_id for r in results} == {project_scope.pk}


def test_forgetting_a_turn_for_good_drops_its_passages(project_scope):
    told, kept = _turns(project_scope, [("user", LOANS), ("user", NEARER_WHOLES[0] + " " + NEARER_WHOLES[2])])
    assert Passage.objects.filter(memory=told).exists()
    memory_forget(memory_id=told.pk, actor=None, reason="asked to", hard=True)
    assert not Passage.objects.filter(memory=told).exists()  # in the forgetting's own transaction
    for outbox_id in Outbox.objects.filter(state="pending").order_by("pk").values_list("pk", flat=True):
        propagate_outbox(outbox_id)
        embed_outbox(outbox_id)
    assert not Passage.objects.filter(memory=told).exists()
    assert Passage.objects.filter(memory=kept).count() == 2


def test_a_passage_written_after_the_purge_is_dropped_by_the_repair(project_scope):
    (told,) = _turns(project_scope, [("user", LOANS)])
    vector_of = Passage.objects.filter(memory=told).first().embedding
    memory_forget(memory_id=told.pk, actor=None, reason="asked to", hard=True)
    # A racing write (an embedding that finished after the purge) puts one back; the repair removes it.
    Passage.objects.create(memory=told, content_hash=told.content_hash, embedding=vector_of)
    drop_purged_vectors()
    assert not Passage.objects.filter(memory=told).exists()


def test_a_passage_of_an_older_text_is_never_read(project_scope, agent):
    for i, text in enumerate(NEARER_WHOLES):
        _turns(project_scope, [("user", text)], session=f"other-{i}")
    (told,) = _turns(project_scope, [("user", LOANS)])
    Passage.objects.filter(memory=told).update(content_hash="0" * 64)  # made from another text
    results = recall_memories(principal=agent, scope=project_scope, query=QUESTION, k=1, strategy="vector")
    assert results[0]["memory_id"] != told.pk


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_turns_embedded_before_passages_are_marked_to_be_embedded_again(project_scope, role):
    (turn,) = _turns(project_scope, [(role, LOANS)])
    (short,) = _turns(project_scope, [("user", "Yes, last week!")], session="s2")
    Passage.objects.all().delete()
    migration = importlib.import_module("governance.migrations.0056_passage")
    migration.forward(django_apps, None)
    marked = Memory.objects.get(pk=turn.pk).embedding_hash == ""
    assert marked is (role == "user")
    assert Memory.objects.get(pk=short.pk).embedding_hash == short.content_hash  # too short for two sentences
    embed_memories([turn.pk])
    assert Passage.objects.filter(memory=turn).count() == (4 if role == "user" else 0)


def test_the_turns_trace_says_how_many_the_vector_search_found_by_a_sentence(project_scope):
    from governance.recall import assemble_context
    from memoryui.views.trace import flat, funnel

    for i, text in enumerate(NEARER_WHOLES):
        _turns(project_scope, [("user", text)], session=f"other-{i}")
    _turns(project_scope, [("user", LOANS)])
    result = assemble_context(principal=None, scope=project_scope, query=QUESTION, budget_tokens=300)
    assert result["trace"]["counts"]["vector"] == {"by_sentence": 1}
    rows = flat(funnel(result["trace"], result["packet"].get("skipped", [])))
    assert rows["vector"]["summary"] == "found 4, 1 by one of their sentences"
