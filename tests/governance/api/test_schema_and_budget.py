from __future__ import annotations

from governance.propagation import embed_memories
from governance.services.memory import MemoryInput, memory_record

CONTRACT_PATHS = {
    "/api/v1/memories": {"get", "post"},
    "/api/v1/memories/{memory_id}": {"get"},
    "/api/v1/memories/{memory_id}/supersede": {"post"},
    "/api/v1/events": {"post"},
    "/api/v1/recall": {"post"},
    "/api/v1/context": {"post"},
    "/api/v1/turns/{turn_id}": {"get"},
}


def test_openapi_schema_lists_every_agent_operation_with_its_shapes(agent_client):
    response = agent_client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    for path, methods in CONTRACT_PATHS.items():
        assert methods <= set(schema["paths"][path]), path
    context = schema["paths"]["/api/v1/context"]["post"]
    assert {"200", "422"} <= set(context["responses"])
    components = schema["components"]["schemas"]
    assert {"turn_id", "packet", "budget", "trace", "text"} <= set(components["ContextOutput"]["properties"])
    assert {"in", "out", "name", "ms"} <= set(components["StageOutput"]["properties"])
    assert {"scope", "query", "budget_tokens", "strategy", "as_of", "session", "task"} <= set(
        components["ContextInputRequest"]["properties"]
    )


def test_docs_page_is_served(agent_client):
    assert agent_client.get("/api/v1/docs/").status_code == 200


def test_budget_too_small_for_pinned_blocks_is_422_with_needed_and_budget(agent_client, project_scope):
    m = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="tone",
            status="active",
            text="Write in a formal tone, no exclamation marks",
            source_kind="user",
        ),
        actor=None,
    )
    embed_memories([m.pk])
    response = agent_client.post(
        "/api/v1/context", {"scope": "acme/slides", "query": "draft", "budget_tokens": 5}, format="json"
    )
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "pinned_over_budget" and body["budget"] == 5 and body["needed"] > 5
    assert body["message"]
