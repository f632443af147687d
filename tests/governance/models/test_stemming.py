"""The keyword stemmer (governance.models.lexical._stem) gives every form of a word one term, a final "e"
included: "move" and "moved" met no more than the name they shared before (migration 0055 recomputes the
stored terms)."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from governance.models import Memory, lexical
from governance.services.memory import MemoryInput, memory_record


@pytest.mark.parametrize(
    "forms",
    [
        "move moves moved moving",
        "like likes liked liking",
        "dance dances danced dancing",
        "agree agrees agreed agreeing",
        "house houses",
        "test tests tested testing",
    ],
)
def test_every_form_of_a_word_is_one_term(forms):
    assert len({lexical._stem(word) for word in forms.split()}) == 1


def test_short_words_keep_their_e():
    assert [lexical._stem(w) for w in ("one", "use", "eye")] == ["one", "use", "eye"]


def episode(scope, text, actor):
    return memory_record(
        item=MemoryInput(scope=scope, kind="episodic", text=text, source_kind="user"), actor=actor
    )


@pytest.mark.django_db
def test_a_search_for_the_base_form_finds_the_inflected_one(project_scope, agent):
    said = episode(project_scope, "My friend Rachel actually just moved back to the suburbs again.", agent)
    assert list(
        Memory.objects.filter(scope=project_scope).keyword("Rachel move").values_list("pk", flat=True)
    ) == [said.pk]


@pytest.mark.django_db
def test_the_migration_recomputes_the_terms_of_rows_stemmed_the_old_way(project_scope, agent):
    said = episode(project_scope, "We move the boxes", agent)
    Memory.objects.filter(pk=said.pk).update(lexical="move box")  # as the rule before 0055 stemmed it
    migration = importlib.import_module("governance.migrations.0055_stem_final_e")
    migration.forward(apps, None)
    said.refresh_from_db()
    assert said.lexical == lexical.lexical_text("We move the boxes") == "mov box"
