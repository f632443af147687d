"""Who said it is part of what a turn is found by: "Caroline: I went to a support group" is what the
keyword index holds and what the embedder sees (governance.models.lexical.searchable_text)."""

from __future__ import annotations

import importlib

import numpy as np
from django.apps import apps as django_apps

from governance.embedding import get_embedder
from governance.models import Memory
from governance.models.lexical import lexical_text, searchable_text
from governance.propagation import embed_memories
from governance.recall import recall_memories
from governance.services.memory import memory_forget

SAME_WORDS = "I went to a support group yesterday and it was really powerful"


def _two_speakers(project_scope, remember):
    # The same words from two people; Melanie's row is the newer one, so an id tie-break favours Caroline.
    caroline = remember(project_scope, SAME_WORDS, kind="episodic", speaker="Caroline")
    melanie = remember(project_scope, SAME_WORDS, kind="episodic", speaker="Melanie")
    return caroline, melanie


def test_searchable_text_puts_the_speaker_in_front_and_leaves_unnamed_text_alone():
    assert searchable_text("I went to a support group", "Caroline") == "Caroline: I went to a support group"
    assert searchable_text("I went to a support group", "") == "I went to a support group"
    assert lexical_text("I went", "Caroline").split()[0] == "carolin"  # the name's term (lexical._stem)


def test_keyword_search_finds_the_turn_of_the_person_the_question_names(project_scope, agent, remember):
    caroline, melanie = _two_speakers(project_scope, remember)
    assert "melani" in Memory.objects.get(pk=melanie.pk).lexical.split()
    results = recall_memories(
        principal=agent, scope=project_scope, query="Melanie support group", k=2, strategy="full"
    )
    assert [r["memory_id"] for r in results][:1] == [melanie.pk]


def test_vector_search_finds_the_turn_of_the_person_the_question_names(project_scope, agent, remember):
    caroline, melanie = _two_speakers(project_scope, remember)
    results = recall_memories(
        principal=agent, scope=project_scope, query="Where did Melanie go yesterday?", k=2, strategy="vector"
    )
    assert [r["memory_id"] for r in results] == [melanie.pk, caroline.pk]


def test_the_stored_vector_is_the_embedding_of_speaker_and_text(project_scope, remember):
    memory = remember(project_scope, SAME_WORDS, kind="episodic", speaker="Caroline")
    expected = get_embedder().embed_memories([f"Caroline: {SAME_WORDS}"])[0]
    assert np.allclose(np.asarray(memory.embedding, dtype=np.float32), expected, atol=1e-4)


def test_rows_written_before_the_rule_get_their_keyword_terms_and_vector_again(project_scope, remember):
    memory = remember(project_scope, SAME_WORDS, kind="episodic", speaker="Caroline")
    bare = get_embedder().embed_memories([SAME_WORDS])[0]
    # The row as the old code left it: terms and vector of the bare text, marked current.
    Memory.objects.filter(pk=memory.pk).update(
        lexical=lexical_text(SAME_WORDS), embedding=bare, embedding_hash=memory.content_hash
    )
    migration = importlib.import_module("governance.migrations.0015_speaker_searchable")
    migration.forward(django_apps, None)
    row = Memory.objects.get(pk=memory.pk)
    assert "carolin" in row.lexical.split() and row.embedding_hash == ""
    assert embed_memories([memory.pk]) == 1
    row.refresh_from_db()
    assert row.embedding_hash == row.content_hash
    assert not np.allclose(np.asarray(row.embedding, dtype=np.float32), bare, atol=1e-4)


def test_forgetting_a_named_turn_purges_its_terms_and_vector(project_scope, agent, remember):
    caroline, _ = _two_speakers(project_scope, remember)
    memory_forget(memory_id=caroline.pk, actor=None, reason="asked to", hard=True)
    row = Memory.objects.get(pk=caroline.pk)
    assert (row.text, row.lexical, row.embedding, row.embedding_hash) == ("", "", None, "")
    assert embed_memories([caroline.pk]) == 0
    results = recall_memories(principal=agent, scope=project_scope, query="Caroline support group", k=5)
    assert caroline.pk not in [r["memory_id"] for r in results]
