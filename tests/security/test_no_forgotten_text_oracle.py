"""No write path answers differently because a text was forgotten, nor any read after it. A sentence whose
text was forgotten used to be skipped by the extractor: `POST /api/v1/events` listed the candidates and
told which guesses had been forgotten; once it listed the episodes only, `GET /api/v1/memories` did (one
turn of many guesses, one candidate missing). A forgotten text said again is now extracted like any other,
so no answer can single it out; the forgotten memory itself stays forgotten."""

from __future__ import annotations

import json

import pytest

from governance.models import Memory, Status, content_hash
from governance.services.memory import memory_forget
from tests.conftest import token_client

SAID = "From now on, always export slides as PDF."
OTHER = "From now on, always export slides as PNG."


def _post(client, content: str, ref: str):
    response = client.post(
        "/api/v1/events",
        {
            "scope": "acme/slides",
            "session": f"s-{ref}",
            "turns": [{"role": "user", "content": content, "ref": ref}],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def _shape(answer: dict) -> list[tuple]:
    return [(m["kind"], m["status"], m["tier"], m["key"], m["source"]["kind"]) for m in answer["created"]]


@pytest.mark.parametrize("who", ["agent", "reviewer"])
def test_posting_a_forgotten_text_answers_like_any_other(project_scope, owner, request, who):
    client = token_client(request.getfixturevalue(who))
    _post(client, SAID, "first")
    extracted = Memory.objects.filter(scope=project_scope, meta__has_key="extracted_by").get()
    memory_forget(memory_id=extracted.pk, actor=owner, reason="user asked", hard=True)

    guess_forgotten = _post(client, SAID, "guess-1")
    guess_other = _post(client, OTHER, "guess-2")
    assert _shape(guess_forgotten) == _shape(guess_other) == [("episodic", "active", "short", None, "user")]
    assert set(guess_forgotten) == set(guess_other) == {"created"}

    # Said again, the text is a new statement like the first (nothing in force until a person confirms
    # it); the forgotten memory stays forgotten.
    first_status = extracted.status
    extracted.refresh_from_db()
    assert extracted.status == Status.FORGOTTEN and extracted.purged_at is not None
    again = Memory.objects.filter(scope=project_scope, content_hash=content_hash(extracted_text(extracted)))
    assert {m.status for m in again.filter(meta__has_key="extracted_by")} == {Status.FORGOTTEN, first_status}
    assert first_status in (Status.CANDIDATE, Status.PROPOSED)


def extracted_text(memory: Memory) -> str:
    """The purged candidate's text as the extractor makes it from SAID (its tombstone keeps only the hash)."""
    from governance.services.extraction import get_extractor

    [found] = [
        e
        for e in get_extractor().extract([{"role": "user", "content": SAID, "ref": "x"}])
        if content_hash(e.text) == memory.content_hash
    ]
    return found.text


# One turn of many guesses, one of them a forgotten text: what the poster reads back afterwards (its
# candidates, their kind and status, what its session's packet pins) must not single the forgotten one out.
GUESSES = [f"Always use the badge PIN {pin} for the east entrance." for pin in ("60415", "60416", "60417")]


def _candidates(client, session: str) -> dict[str, tuple]:
    """What GET /memories shows the caller of the candidates read from its session's turns, by text."""
    listed = client.get("/api/v1/memories", {"scope": "acme/slides"}).json()["results"]
    return {
        m["text"]: (m["kind"], m["status"], m["tier"], m["key"], m["source"]["kind"])
        for m in listed
        if m["session"] == session and m["kind"] != "episodic"
    }


@pytest.mark.parametrize("hard", [True, False], ids=["hard", "soft"])
def test_a_turn_of_guesses_lists_the_forgotten_guess_like_the_others(project_scope, owner, agent, hard):
    client = token_client(agent)
    _post(client, GUESSES[2], "said")
    said = Memory.objects.filter(scope=project_scope, meta__has_key="extracted_by").get()
    memory_forget(memory_id=said.pk, actor=owner, reason="user asked", hard=hard)

    _post(client, " ".join(GUESSES), "guesses")
    listed = _candidates(client, "s-guesses")
    assert set(listed) == set(GUESSES), "a guess whose text was forgotten is missing from the list"
    assert len(set(listed.values())) == 1, listed

    # Nor does the session's packet pin one guess less: each is in force for the session that said it.
    packet = client.post(
        "/api/v1/context",
        {"scope": "acme/slides", "session": "s-guesses", "query": "Which badge PIN for the east entrance?"},
        format="json",
    ).json()
    shown = json.dumps(packet)
    assert all(guess in shown for guess in GUESSES), [g for g in GUESSES if g not in shown]


def _asked(client, scope: str, query: str) -> str:
    answer = client.post("/api/v1/context", {"scope": scope, "query": query}, format="json")
    assert answer.status_code == 200, answer.content
    return client.get(f"/api/v1/turns/{answer.json()['turn_id']}").json()["query"]


def test_a_query_repeating_a_text_forgotten_in_a_sibling_scope_comes_back_as_sent(
    project_scope, sibling_scope, owner, agent, remember
):
    """An agent of acme/slides cannot read acme/payments: whether a text was hard-forgotten there must not
    change what it reads back of its own turn. A forget in a scope the turn's packet reads (its own or one
    above it) still keeps the text out of the turn log."""
    client = token_client(agent)
    sibling = remember(sibling_scope, "The vault code for payments is 8841-2209.")
    above = remember(project_scope.parent, "The lobby door code is 5530-1177.")
    for memory in (sibling, above):
        text = memory.text
        memory_forget(memory_id=memory.pk, actor=owner, reason="user asked", hard=True)
        memory.text = text

    assert _asked(client, "acme/slides", sibling.text) == sibling.text
    assert _asked(client, "acme/slides", "The vault code for payments is 0000-0000.") == (
        "The vault code for payments is 0000-0000."
    )
    assert _asked(client, "acme/slides", above.text) == "[forgotten]"
