"""A hard forget reaches every stored turn whose query or request carried the text, cited or not: a
context request asked *before* the memory was written never showed the memory, yet its query holds the
secret. After the forget neither `GET /api/v1/turns/<id>` nor the dashboard's turn page shows it. Only
the forgetting workspace's turns are touched."""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import Client

from governance.models import Turn
from governance.propagation.turns import REDACTED
from governance.services.memory import MemoryInput, memory_record
from tests.conftest import token_client


def _ask(client, scope: str, query: str) -> int:
    response = client.post(
        "/api/v1/context", {"scope": scope, "query": query, "budget_tokens": 400}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()["turn_id"]


@pytest.mark.parametrize("asked", ["{phrase}", "what did we say about {phrase} last week?"])
def test_a_hard_forget_redacts_the_query_and_request_of_earlier_turns_that_did_not_cite_it(
    project_scope, owner, agent, asked
):
    phrase = f"vault passphrase amber-{uuid.uuid4().hex[:10]}"
    turn_id = _ask(token_client(agent), "acme/slides", asked.format(phrase=phrase))
    assert phrase in Turn.objects.get(pk=turn_id).query  # stored as sent

    secret = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="semantic", text=phrase, source_kind="user", status="active"
        ),
        actor=None,
    )
    forgot = token_client(owner).post(
        f"/api/v1/memories/{secret.pk}/forget", {"mode": "hard", "reason": "user asked"}, format="json"
    )
    assert forgot.status_code == 202, forgot.content

    for who in (owner, agent):
        shown = token_client(who).get(f"/api/v1/turns/{turn_id}")
        assert shown.status_code == 200
        assert phrase not in json.dumps(shown.json())
        assert REDACTED in shown.json()["query"]
    page = Client()
    page.force_login(owner.user)
    html = page.get(f"/turns/{turn_id}/")
    assert html.status_code == 200
    assert phrase not in html.content.decode()
    stored = Turn.objects.get(pk=turn_id)
    assert phrase not in stored.query and phrase not in json.dumps(stored.request)


def test_a_short_text_is_redacted_only_where_it_is_the_whole_query(project_scope, owner):
    turn_whole = _ask(token_client(owner), "acme/slides", "PIN 4471")
    turn_part = _ask(token_client(owner), "acme/slides", "is PIN 4471 wrong")
    secret = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="semantic", text="PIN 4471", source_kind="user", status="active"
        ),
        actor=None,
    )
    token_client(owner).post(
        f"/api/v1/memories/{secret.pk}/forget", {"mode": "hard", "reason": "x"}, format="json"
    )
    assert Turn.objects.get(pk=turn_whole).query == REDACTED
    assert Turn.objects.get(pk=turn_whole).request["query"] == REDACTED
    # A text this short could be part of other words; only an exact repeat is taken out.
    assert Turn.objects.get(pk=turn_part).query == "is PIN 4471 wrong"


def test_another_workspaces_turns_are_not_touched(project_scope, other_workspace_scope, owner, outsider):
    phrase = f"vault passphrase amber-{uuid.uuid4().hex[:10]}"
    theirs = _ask(token_client(outsider), "globex/slides", phrase)
    secret = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="semantic", text=phrase, source_kind="user", status="active"
        ),
        actor=None,
    )
    token_client(owner).post(
        f"/api/v1/memories/{secret.pk}/forget", {"mode": "hard", "reason": "x"}, format="json"
    )
    assert Turn.objects.get(pk=theirs).query == phrase
    # Not yours answers as unknown: the owner of acme cannot read globex's turn either way.
    assert token_client(owner).get(f"/api/v1/turns/{theirs}").status_code == 404


def test_a_hard_forget_redacts_archived_turns_that_did_not_cite_it(
    project_scope, workspace_scope, owner, agent
):
    """Turn retention moves old turns into the archive; an archived turn is a stored turn too, so a
    later hard forget reaches its query and request as it reaches the live ones."""
    from datetime import timedelta

    from django.utils import timezone

    from governance.models import TurnArchive
    from governance.services.retention import retention_policy_set
    from governance.services.turn_retention import turns_prune

    phrase = f"vault passphrase amber-{uuid.uuid4().hex[:10]}"
    turn_id = _ask(token_client(agent), "acme/slides", f"what did we say about {phrase} last week?")
    Turn.objects.filter(pk=turn_id).update(created_at=timezone.now() - timedelta(days=40))
    policy = retention_policy_set(scope=workspace_scope, actor=owner, turns_max_age_days=30)
    assert turns_prune(policy=policy)["archived"] >= 1
    assert phrase in TurnArchive.objects.get(turn_id=turn_id).query  # archived as sent

    secret = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="semantic", text=phrase, source_kind="user", status="active"
        ),
        actor=None,
    )
    forgot = token_client(owner).post(
        f"/api/v1/memories/{secret.pk}/forget", {"mode": "hard", "reason": "user asked"}, format="json"
    )
    assert forgot.status_code == 202, forgot.content
    archived = TurnArchive.objects.get(turn_id=turn_id)
    assert phrase not in archived.query and phrase not in json.dumps(archived.request)
    assert REDACTED in archived.query


def test_a_text_found_through_an_escape_is_rewritten_by_meaning_not_by_bytes(project_scope, owner):
    """The rewrite works on each JSON column's text form; a text that only matches across an escape
    ("\\n" followed by "obody …" is no "nobody …") must not break the JSON nor be cut out of it, and a
    real copy beside it is still replaced (redact_said_text falls back to the parsed value)."""
    from governance.propagation.turns import redact_said_text

    text = f"nobody knows the code {uuid.uuid4().hex[:8]}"
    turn = Turn.objects.create(
        scope=project_scope,
        query="codes?",
        request={"notes": [f"line one\n{text[1:]}", f"said: {text}"]},
        packet={},
        text="",
    )
    assert redact_said_text(scope_ids=[project_scope.pk], texts=[text]) == 1
    turn.refresh_from_db()
    assert turn.request == {"notes": [f"line one\n{text[1:]}", f"said: {REDACTED}"]}
