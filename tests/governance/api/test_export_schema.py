"""The export's JSON lines have a schema of their own in the OpenAPI document (`ExportLine`, one record
schema per `type`), and every line of a real export validates against the schema of its type."""

from __future__ import annotations

import json

import jsonschema

from governance.models import Role
from governance.services.memory import MemoryInput, memory_forget, memory_record
from governance.services.principal import grant_add
from governance.services.relation import relation_link
from tests.conftest import token_client

RECORD_TYPES = {
    "header",
    "scope",
    "principal",
    "grant",
    "memory",
    "tombstone",
    "relation",
    "summary",
    "audit",
    "end",
}


def _json_schema(node, components: dict):
    """An OpenAPI 3.0 schema as plain JSON Schema: $refs inlined, `nullable` as a null type."""
    if isinstance(node, list):
        return [_json_schema(n, components) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _json_schema(components[node["$ref"].rsplit("/", 1)[1]], components)
    out = {k: _json_schema(v, components) for k, v in node.items() if k not in ("nullable", "discriminator")}
    if node.get("nullable"):
        if "type" in out:
            out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        if "allOf" in out or "oneOf" in out:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def test_a_real_export_validates_line_by_line_against_the_export_line_schema(owner, agent, project_scope):
    rule = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            status="active",
            text="Export the slides as PPTX",
            source_kind="reviewer",
        ),
        actor=None,
    )
    evidence = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="semantic",
            status="active",
            text="The client asked for PPTX twice",
            source_kind="user",
        ),
        actor=None,
    )
    relation_link(
        source_id=evidence.pk, target_id=rule.pk, kind="supports", reason="the same request", actor=owner
    )
    gone = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="semantic",
            status="active",
            text="A secret to forget",
            source_kind="user",
        ),
        actor=None,
    )
    memory_forget(memory_id=gone.pk, actor=owner, reason="asked to", hard=True)
    grant_add(principal=agent, scope=project_scope, role=Role.VIEWER, actor=owner)

    client = token_client(owner)
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    components = schema["components"]["schemas"]
    media = schema["paths"]["/api/v1/scopes/{scope_id}/export"]["get"]["responses"]["200"]["content"]
    line_schema = media["application/x-ndjson"]["schema"]
    assert line_schema == {"$ref": "#/components/schemas/ExportLine"}
    export_line = components["ExportLine"]
    assert export_line["discriminator"]["propertyName"] == "type"
    assert set(export_line["discriminator"]["mapping"]) == RECORD_TYPES

    answer = client.get(f"/api/v1/scopes/{project_scope.pk}/export")
    assert answer.status_code == 200
    lines = [json.loads(line) for line in b"".join(answer.streaming_content).decode().splitlines()]
    seen = set()
    for line in lines:
        ref = export_line["discriminator"]["mapping"][line["type"]]
        record_schema = _json_schema({"$ref": ref}, components)
        jsonschema.validate(line, record_schema)  # raises with the field that disagrees
        # Every field the export writes is described (a new field needs its schema too).
        assert set(line) <= set(record_schema["properties"]), (
            line["type"],
            set(line) - set(record_schema["properties"]),
        )
        seen.add(line["type"])
    assert {
        "header",
        "scope",
        "principal",
        "grant",
        "memory",
        "tombstone",
        "relation",
        "audit",
        "end",
    } <= seen
    # The schema can fail: a memory line with a text that is not a string does not validate.
    bad = next(dict(line, text=7) for line in lines if line["type"] == "memory")
    try:
        jsonschema.validate(
            bad, _json_schema({"$ref": export_line["discriminator"]["mapping"]["memory"]}, components)
        )
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("a memory line with a numeric text validated")
