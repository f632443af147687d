"""No write path answers differently because a text was forgotten. `POST /api/v1/events` used to list the
extracted candidates in its answer, and a sentence whose text was forgotten is (rightly) not extracted
again: so posting guesses told which texts had been forgotten. The answer now lists the episodes only,
the same for a forgotten text as for any other, and the forgotten text still never comes back as a
memory to review."""

from __future__ import annotations

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

    # The forgotten text is still not made a memory again (only the episode records that it was said).
    again = Memory.objects.filter(scope=project_scope, content_hash=content_hash(extracted_text(extracted)))
    assert not again.exclude(status=Status.FORGOTTEN).filter(meta__has_key="extracted_by").exists()


def extracted_text(memory: Memory) -> str:
    """The purged candidate's text as the extractor makes it from SAID (its tombstone keeps only the hash)."""
    from governance.services.extraction import get_extractor

    [found] = [
        e
        for e in get_extractor().extract([{"role": "user", "content": SAID, "ref": "x"}])
        if content_hash(e.text) == memory.content_hash
    ]
    return found.text
