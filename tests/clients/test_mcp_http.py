"""MCP over streamable HTTP with each caller's own token, through the official SDK's client: one
endpoint, two agents whose scopes differ, each seeing only its own; no token or an unknown one is 401.
Both ways the endpoint runs: `memgov-mcp --http PORT` beside the service, and mounted in the service's
own ASGI process (memoryui.asgi)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import threading
import time

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from governance.models import Role
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add, principal_ensure, token_issue
from tests.clients.test_mcp_server import _payload, _script

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def two_agents(project_scope, sibling_scope):
    """A slides agent and a payments agent, each with its own scope's rule in force and its own token."""
    slides_rule = memory_record(
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
    payments_rule = memory_record(
        item=MemoryInput(
            scope=sibling_scope,
            kind="convention",
            key="export_format",
            status="active",
            text="Export the payment runs as CSV",
            source_kind="reviewer",
        ),
        actor=None,
    )
    slides = principal_ensure(name="slides-agent", kind="agent", actor=None)
    grant_add(principal=slides, scope=project_scope, role=Role.AGENT, actor=None)
    payments = principal_ensure(name="payments-agent", kind="agent", actor=None)
    grant_add(principal=payments, scope=sibling_scope, role=Role.AGENT, actor=None)
    return {
        "slides": (token_issue(principal=slides, actor=None), slides_rule),
        "payments": (token_issue(principal=payments, actor=None), payments_rule),
    }


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_listening(port: int, alive, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            alive()
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


async def _as_agent(url: str, token: str, scope: str, other_scope: str) -> dict:
    """What one agent sees through the endpoint: its scope's packet and recall, and the other's."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                own = await session.call_tool(
                    "get_context", {"query": "export format", "scope": scope, "budget_tokens": 400}
                )
                recalled = await session.call_tool("recall", {"query": "export", "scope": scope})
                other = await session.call_tool("recall", {"query": "export", "scope": other_scope})
                return {"own": own, "recalled": recalled, "other": other}


def _check_two_agents(url: str, two_agents) -> None:
    slides_token, slides_rule = two_agents["slides"]
    payments_token, payments_rule = two_agents["payments"]

    async def both():  # at the same time, through the same endpoint
        return await asyncio.gather(
            _as_agent(url, slides_token, "acme/slides", "acme/payments"),
            _as_agent(url, payments_token, "acme/payments", "acme/slides"),
        )

    slides, payments = asyncio.run(asyncio.wait_for(both(), timeout=90))
    for seen, rule, other_text in ((slides, slides_rule, "CSV"), (payments, payments_rule, "PPTX")):
        assert not seen["own"].is_error, seen["own"].content
        packet = _payload(seen["own"])
        assert [b["memory_id"] for b in packet["constraints_in_force"]] == [rule.pk]
        assert other_text not in packet["text"]
        hits = _payload(seen["recalled"])["results"]
        assert [h["memory_id"] for h in hits] == [rule.pk]
        # The other agent's scope: the same answer as for a scope that does not exist.
        assert seen["other"].is_error and "404 not_found" in seen["other"].content[0].text


def _check_refusals(url: str) -> None:
    for headers in ({}, {"Authorization": "Bearer mem_not-a-token"}, {"Authorization": "Token mem_x"}):
        answer = httpx.post(url, json=INITIALIZE, headers={**MCP_HEADERS, **headers}, timeout=30)
        assert answer.status_code == 401, (headers, answer.status_code, answer.text)
        assert answer.headers["www-authenticate"].startswith("Bearer ")
        assert answer.json()["error"] == "invalid_token"


def test_one_http_endpoint_serves_two_agents_each_with_its_own_rights(service, two_agents):
    port = _free_port()
    env = {**os.environ, "MEMGOV_URL": service}
    env.pop("MEMGOV_TOKEN", None)  # the HTTP mode has no token of its own
    server = subprocess.Popen(
        [_script(), "--http", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )

    def alive():
        assert server.poll() is None, server.stderr.read().decode()[-2000:]

    try:
        _wait_listening(port, alive)
        url = f"http://127.0.0.1:{port}/mcp"
        _check_refusals(url)
        _check_two_agents(url, two_agents)
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_a_revoked_token_is_refused_by_the_service_on_the_next_call(service, two_agents):
    """The verifier's cache only decides the 401 gate: each tool call carries the caller's token to the
    service, so a token revoked mid-session is refused at once."""
    from governance.models import ApiToken, hash_token
    from governance.services.principal import token_revoke

    token, _rule = two_agents["slides"]
    port = _free_port()
    env = {**os.environ, "MEMGOV_URL": service}
    env.pop("MEMGOV_TOKEN", None)
    server = subprocess.Popen(
        [_script(), "--http", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )

    async def scenario():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (
                read,
                write,
            ):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    before = await session.call_tool("recall", {"query": "export", "scope": "acme/slides"})
                    row = await asyncio.to_thread(ApiToken.objects.get, key_hash=hash_token(token))
                    await asyncio.to_thread(
                        lambda: token_revoke(token_id=row.pk, actor=None, reason="revoked mid-call")
                    )
                    after = await session.call_tool("recall", {"query": "export", "scope": "acme/slides"})
                    return before, after

    try:
        _wait_listening(
            port, lambda: None if server.poll() is None else pytest.fail(server.stderr.read().decode())
        )
        before, after = asyncio.run(asyncio.wait_for(scenario(), timeout=60))
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert not before.is_error
    assert (
        after.is_error and "(401 " in after.content[0].text and "unknown or revoked" in after.content[0].text
    )


@pytest.fixture
def asgi_service(transactional_db, celery_worker):
    """The service's own ASGI app with the MCP endpoint mounted (memoryui.asgi), served by uvicorn in a
    thread of this process, on the test database, the way pytest-django's live server serves WSGI."""
    import uvicorn
    from django.core.asgi import get_asgi_application

    from memoryui.asgi import with_mcp

    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            with_mcp(get_asgi_application()), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    _wait_listening(port, lambda: None if thread.is_alive() else pytest.fail("uvicorn stopped"))
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=15)


def test_the_endpoint_mounted_in_the_service_process_checks_tokens_the_same_way(asgi_service, two_agents):
    _check_refusals(f"{asgi_service}/mcp")
    _check_two_agents(f"{asgi_service}/mcp", two_agents)
    # The rest of the service is the same app: its API answers beside the endpoint.
    token, _rule = two_agents["slides"]
    scopes = httpx.get(
        f"{asgi_service}/api/v1/scopes", headers={"Authorization": f"Token {token}"}, timeout=30
    )
    assert scopes.status_code == 200 and [s["path"] for s in scopes.json()] == ["acme/slides"]
