"""After a forget, a memory's page and its timeline show a tombstone: who forgot it, when and why, what the
forget reached, and the ways back; never its words (English or Chinese), soft or hard. An owner's look at
a soft-forgotten text is explicit; a purged one has none; anyone outside the grants gets the 404."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from governance.models import Memory
from governance.services.memory import memory_forget
from governance.services.relation import relation_add
from tests.memoryui.conftest import remember

ENGLISH = "Never mention the client's merger before the announcement"
CHINESE = "在公告发布之前不要提及客户的合并计划"


@pytest.fixture
def forgotten(project_scope, owner, curator):
    """Two memories forgotten softly by the curator and two purged by the owner, in English and Chinese."""
    made = {}
    for mode, who in (("soft", curator), ("hard", owner)):
        for lang, text in (("en", ENGLISH), ("zh", CHINESE)):
            m = remember(project_scope, f"{text} ({mode})", kind="convention")
            memory_forget(
                memory_id=m.pk, actor=who, reason=f"asked by the user ({lang})", hard=mode == "hard"
            )
            made[mode, lang] = Memory.objects.get(pk=m.pk)
    return made


def _words_absent(html: str) -> None:
    assert ENGLISH not in html and CHINESE not in html
    assert "merger" not in html and "合并计划" not in html


@pytest.mark.parametrize("who", ["owner_client", "curator_client", "reviewer_client"])
@pytest.mark.parametrize("mode", ["soft", "hard"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_of_a_forgotten_memory_is_a_tombstone_without_its_words(request, forgotten, who, mode, lang):
    memory = forgotten[mode, lang]
    client = request.getfixturevalue(who)
    page = client.get(reverse("dashboard:memory", args=[memory.pk]))
    html = page.content.decode()
    assert page.status_code == 200 and 'id="tombstone"' in html
    _words_absent(html)
    by = "cora" if mode == "soft" else "olivia"
    assert f"Memory {memory.pk} was forgotten on <time" in html
    assert f"by <strong>{by}</strong> (asked by the user ({lang}))." in html
    assert ("Its text was purged" in html) == (mode == "hard")
    assert 'href="/memories/?scope=acme%2Fslides"' in html  # the way back to the scope's memories
    assert f'href="/governance/audit/?target={memory.pk}"' in html  # and to its audit entry
    assert 'id="tombstone-reached"' in html


def test_an_owner_looks_at_a_soft_forgotten_text_only_when_asking(owner_client, curator_client, forgotten):
    soft = forgotten["soft", "zh"]
    url = reverse("dashboard:memory", args=[soft.pk])
    assert 'id="look-text"' in owner_client.get(url).content.decode()
    looked = owner_client.get(url, {"look": "text"}).content.decode()
    assert CHINESE in looked and 'id="forgotten-look"' in looked
    assert 'id="tombstone-purge"' in looked  # the owner may still purge it
    for html in (curator_client.get(url, {"look": "text"}).content.decode(),):
        _words_absent(html)
        assert 'id="look-text"' not in html
    hard = forgotten["hard", "zh"]
    purged = owner_client.get(reverse("dashboard:memory", args=[hard.pk]), {"look": "text"}).content.decode()
    _words_absent(purged)
    assert 'id="look-text"' not in purged and 'id="tombstone-purge"' not in purged


def test_the_tombstone_says_what_the_forget_reached_and_links_what_is_still_readable(
    curator_client, curator, project_scope
):
    kept = remember(project_scope, "Announce mergers only after legal review")
    doomed = remember(project_scope, ENGLISH)
    relation_add(
        source_id=kept.pk, target_id=doomed.pk, kind="supports", actor=None, reason=f"as in: {ENGLISH}"
    )
    memory_forget(memory_id=doomed.pk, actor=curator, reason="out of date")
    html = curator_client.get(reverse("dashboard:memory", args=[doomed.pk])).content.decode()
    _words_absent(html)
    assert "1 link reason cleared of its words" in html
    assert f'href="/memories/{kept.pk}/"' in html and "It is supported by" in html


@pytest.mark.parametrize("mode", ["soft", "hard"])
def test_the_timeline_of_a_forgotten_memory_is_its_tombstone_not_a_not_found(
    reviewer_client, forgotten, mode
):
    memory = forgotten[mode, "zh"]
    page = reviewer_client.get("/timeline/", {"m": memory.pk})
    html = page.content.decode()
    assert page.status_code == 200 and f'data-tombstone="{memory.pk}"' in html
    _words_absent(html)
    assert f"Memory {memory.pk}" in html and "was forgotten on" in html
    assert f'href="/memories/{memory.pk}/"' in html
    data = reviewer_client.get("/timeline/data.json", {"m": memory.pk}).json()
    assert data["series"] == [] and data["tombstones"][0]["id"] == memory.pk
    assert CHINESE not in str(data)


def test_outside_the_grants_a_tombstone_is_the_same_404(outsider_client, forgotten):
    for memory in forgotten.values():
        assert outsider_client.get(reverse("dashboard:memory", args=[memory.pk])).status_code == 404
        assert outsider_client.get("/timeline/", {"m": memory.pk}).status_code == 404
    assert outsider_client.get("/timeline/", {"m": 999999}).status_code == 404


def test_anonymous_is_sent_to_sign_in(forgotten):
    memory = forgotten["soft", "en"]
    response = Client().get(reverse("dashboard:memory", args=[memory.pk]))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
