"""The OpenAPI schema types every response body, documents one error shape, and its docs page works
without the internet (Swagger UI from the drf-spectacular-sidecar package)."""

from __future__ import annotations

import re

from django.contrib.staticfiles import finders


def _schema(client) -> dict:
    response = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def _untyped(schema: dict) -> bool:
    if "$ref" in schema:
        return False
    if schema.get("type") == "array":
        return _untyped(schema.get("items", {}))
    return not schema or (schema.get("type") == "object" and not schema.get("properties"))


def test_no_response_body_in_the_schema_is_a_bare_object(agent_client):
    schema = _schema(agent_client)
    bare = [
        (path, method, code)
        for path, ops in schema["paths"].items()
        for method, op in ops.items()
        for code, response in op["responses"].items()
        for media in response.get("content", {}).values()
        if _untyped(media["schema"])
    ]
    assert bare == []
    untyped_fields = [
        (name, prop)
        for name, component in schema["components"]["schemas"].items()
        for prop, spec in component.get("properties", {}).items()
        if spec == {}
        or (
            spec.get("type") == "object"
            and "properties" not in spec
            and "$ref" not in spec
            and not spec.get("additionalProperties")
            and "allOf" not in spec
        )
    ]
    assert untyped_fields == []


def test_every_operation_documents_the_one_error_shape(agent_client):
    schema = _schema(agent_client)
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            for code in ("400", "401", "403", "404", "429"):
                ref = op["responses"][code]["content"]["application/json"]["schema"]["$ref"]
                assert ref == "#/components/schemas/ErrorBody", (path, method, code)
    error = schema["components"]["schemas"]["ErrorBody"]
    assert set(error["required"]) == {"error", "message"}
    assert "pinned_over_budget" in error["properties"]["error"]["description"]


def test_governance_and_scope_operations_have_their_shapes(agent_client):
    schema = _schema(agent_client)
    paths = schema["paths"]
    ref = lambda op, code: op["responses"][code]["content"]["application/json"]["schema"]  # noqa: E731
    assert ref(paths["/api/v1/memories/{memory_id}/forget"]["post"], "202")["$ref"].endswith("/ForgetOutput")
    assert ref(paths["/api/v1/review"]["get"], "200")["items"]["$ref"].endswith("/ReviewItemOutput")
    assert ref(paths["/api/v1/tokens"]["post"], "201")["$ref"].endswith("/TokenIssuedOutput")
    assert ref(paths["/api/v1/scopes"]["post"], "201")["$ref"].endswith("/ScopeCreatedOutput")
    assert ref(paths["/api/v1/memories"]["get"], "200")["$ref"].endswith("/MemoryPageOutput")
    turn = schema["components"]["schemas"]["TurnOutput"]["properties"]
    assert turn["packet"]["$ref"].endswith("/PacketOutput") or "allOf" in turn["packet"]
    assert "TokenAuth" in schema["components"]["securitySchemes"]


def test_docs_page_loads_its_assets_from_the_project_not_a_cdn(agent_client):
    html = agent_client.get("/api/v1/docs/").content.decode()
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html
    assets = re.findall(r"/static/(drf_spectacular_sidecar/[^\"']+)", html)
    assert any(re.search(r"swagger-ui-bundle\.[0-9a-f]{12}\.js$", a) for a in assets)
    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    for asset in assets:  # hashed names (memoryui/staticstorage.py), served by the application itself
        assert agent_client.get(f"/static/{asset}").status_code == 200, asset
