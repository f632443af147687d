"""memgov-mcp over a real stdio session (the SDK's own client), against the running service."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from governance.models import Memory, Role, Status
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add

TOOLS = {"get_context", "recall", "remember", "record_turns", "open_scope", "propose_correction"}


def _script() -> str:
    return shutil.which("memgov-mcp") or str(Path(sys.executable).with_name("memgov-mcp"))


def _payload(result) -> dict:
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        return structured.get("result", structured) if set(structured) == {"result"} else structured
    return json.loads(result.content[0].text)


def run_session(url: str, token: str, scenario, scope: str = "acme/slides"):
    """Start memgov-mcp as a subprocess over stdio and run `scenario(session)` in an initialised session."""
    params = StdioServerParameters(
        command=_script(), args=[], env={"MEMGOV_URL": url, "MEMGOV_TOKEN": token, "MEMGOV_SCOPE": scope}
    )

    async def go():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await scenario(session)

    return asyncio.run(asyncio.wait_for(go(), timeout=60))


@pytest.fixture
def rule_in_force(project_scope):
    return memory_record(
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


def test_mcp_client_gets_the_packet_and_a_remembered_memory_is_only_a_candidate(
    service, agent_token, rule_in_force, capsys
):
    async def scenario(session):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        context = await session.call_tool(
            "get_context", {"query": "export the deck", "task_goal": "Export deck 42", "budget_tokens": 500}
        )
        remembered = await session.call_tool(
            "remember", {"text": "The client likes dark slide backgrounds", "kind": "preference"}
        )
        memory_id = _payload(remembered)["memory"]["id"]
        resource = await session.read_resource(f"memgov://memories/{memory_id}")
        turn = await session.read_resource(f"memgov://turns/{_payload(context)['turn_id']}")
        return tools, context, remembered, resource, turn

    tools, context, remembered, resource, turn = run_session(service, agent_token, scenario)
    assert TOOLS <= set(tools)
    described = tools["get_context"].description
    assert "IN FORCE" in described and "NO LONGER in force" in described and "unconfirmed" in described

    assert not context.is_error
    packet = _payload(context)
    with capsys.disabled():  # the packet an MCP client received, for the record
        print("\nget_context over MCP stdio ->", json.dumps(packet, indent=1)[:1500])
    assert [b["memory_id"] for b in packet["constraints_in_force"]] == [rule_in_force.pk]
    assert "Export the slides as PPTX" in packet["text"] and packet["budget"]["limit"] == 500

    assert not remembered.is_error
    written = _payload(remembered)["memory"]
    assert written["status"] == "candidate" and written["in_force"] is False
    assert Memory.objects.get(pk=written["id"]).status == Status.CANDIDATE
    assert json.loads(resource.contents[0].text)["text"] == "The client likes dark slide backgrounds"
    assert "Export the slides as PPTX" in json.loads(turn.contents[0].text)["text"]


def test_service_refusals_become_clear_tool_errors(
    service, agent, agent_token, rule_in_force, sibling_scope, other_workspace_scope
):
    grant_add(principal=agent, scope=sibling_scope, role=Role.VIEWER, actor=None)

    async def scenario(session):
        return (
            await session.call_tool("get_context", {"query": "x", "scope": "globex/slides"}),
            await session.call_tool("remember", {"text": "x", "scope": "acme/payments"}),
            await session.call_tool("get_context", {"query": "x", "budget_tokens": 3}),
        )

    not_found, forbidden, over_budget = run_session(service, agent_token, scenario)
    assert not_found.is_error and "404 not_found" in not_found.content[0].text
    assert "outside the scopes this token can see" in not_found.content[0].text
    assert forbidden.is_error and "403 permission_denied" in forbidden.content[0].text
    assert "Writing memories needs" in forbidden.content[0].text
    assert over_budget.is_error and "422 pinned_over_budget" in over_budget.content[0].text


def test_turns_scopes_and_a_correction_that_waits_for_review(service, agent_token, rule_in_force):
    async def scenario(session):
        opened = await session.call_tool("open_scope", {"name": "deck-42"})
        recorded = await session.call_tool(
            "record_turns",
            {
                "session": "s1",
                "scope": "acme/slides/deck-42",
                "turns": [
                    {"role": "user", "content": "Render deck 42 please", "ref": "u1"},
                    {"role": "tool_call", "content": "render(deck=42)", "call_id": "c1", "ref": "c1"},
                    {"role": "tool_result", "content": "rendered 12 slides", "call_id": "c1", "ref": "r1"},
                ],
            },
        )
        corrected = await session.call_tool(
            "propose_correction",
            {
                "memory_id": rule_in_force.pk,
                "text": "Export the slides as PDF",
                "reason": "the user changed it",
            },
        )
        return opened, recorded, corrected

    opened, recorded, corrected = run_session(service, agent_token, scenario)
    assert _payload(opened)["path"] == "acme/slides/deck-42" and _payload(opened)["created"] is True
    assert [m["kind"] for m in _payload(recorded)["created"]][:3] == ["episodic"] * 3
    proposal = _payload(corrected)["proposal"]
    assert (
        proposal["status"] == "proposed" and proposal["key"] == "export_format" and not proposal["in_force"]
    )
    assert Memory.objects.get(pk=rule_in_force.pk).status == Status.ACTIVE
