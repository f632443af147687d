"""`memgov-mcp`: an MCP server (official `mcp` SDK) that gives a model the memory service's per-turn
calls. It is a thin layer over the REST API, so it works against a remote deployment and can do
exactly what the caller's token may do, nothing more.

    memgov-mcp                       # stdio, for desktop and IDE clients: the token of MEMGOV_TOKEN
    memgov-mcp --http 8765           # streamable HTTP on 127.0.0.1:8765/mcp: each caller's own token

Over HTTP every caller sends its own service token as `Authorization: Bearer <token>` (as the MCP
authorization spec has clients send it); a missing or unknown one is refused with 401 before any MCP
message is read, and every tool call goes to the service with the caller's token, so one endpoint serves
several agents, each with its own rights. `asgi_app()` mounts the same endpoint inside the service's
own ASGI process (memoryui/asgi.py).

Trust boundary: `remember` and `propose_correction` write candidates and proposals only; nothing an
agent writes through this server is ever in force until a person with the confirm right confirms it."""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import sys
import time
from collections import OrderedDict
from typing import Any, Literal

import httpx

from memgov.client import AsyncClient
from memgov.errors import APIConnectionError, MemgovError, NotAuthenticated, NotFound, ServiceUnavailable
from memgov.types import Block, Context, Memory, RecallHit

INSTRUCTIONS = """\
Governed long-term memory for this agent. Call get_context at the start of a turn with the user's
request: its `text` is what you may rely on. Slots of the packet:
- constraints: rules and facts IN FORCE (confirmed by a person) — follow them;
- negative: NO LONGER in force — do not act on them; each names what replaced it;
- evidence: other relevant memories; those marked unconfirmed are candidates, not facts;
- recent: the latest turns of this session; preferences: preferences in force; task: the current task.
Write with remember (a candidate a person reviews) and record_turns (what was said and done). To fix a
remembered fact, use propose_correction: a person decides; until then the old fact stays in force."""

NOT_FOUND_HINT = "It does not exist, or it is outside the scopes this token can see."

ReadKind = Literal["semantic", "preference", "convention", "method", "stage_fact", "external", "episodic"]


logger = logging.getLogger("memgov.mcp")

# How long the HTTP mode trusts a check of a caller's token. Only the 401 gate uses it: every tool call
# still goes to the service with the caller's token, which checks it (a revoked token is refused there
# at once, whatever this cache says).
TOKEN_CACHE_SECONDS = 30.0
UNKNOWN_TOKEN_CACHE_SECONDS = 5.0
MAX_CALLERS = 256  # per-token clients (and cached checks) kept; the least recently used go first


class Settings:
    """Where the server sends its calls. The stdio mode's token comes from the environment, never a
    command line argument (which other users of the machine could read); the HTTP mode takes none."""

    def __init__(
        self,
        url: str | None = None,
        scope: str | None = None,
        budget: int | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.url = url or os.environ.get("MEMGOV_URL")
        self.token = os.environ.get("MEMGOV_TOKEN")
        self.scope = scope or os.environ.get("MEMGOV_SCOPE") or None
        self.budget = budget or int(os.environ.get("MEMGOV_BUDGET_TOKENS", "1500"))
        # In-process: the service's own ASGI app, called without a socket (asgi_app()).
        self.transport = transport


def _token_id(token: str) -> str:
    """Who a caller is, for the SDK's session ownership and for logs: never the token itself."""
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:16]


class _Lru(OrderedDict):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def hit(self, key: str) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def keep(self, key: str, value: Any) -> Any:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)
        return value


class ServiceTokenVerifier:
    """The MCP SDK's TokenVerifier for the HTTP mode: a caller's bearer token is valid when the service
    accepts it (one cheap authenticated read, `GET /scopes`), remembered for TOKEN_CACHE_SECONDS (an
    unknown one for UNKNOWN_TOKEN_CACHE_SECONDS). A token the service does not know is refused (401);
    one it knows but that may not list scopes still identifies its caller, whose rights the service
    decides call by call."""

    def __init__(
        self,
        settings: Settings,
        *,
        ttl: float = TOKEN_CACHE_SECONDS,
        unknown_ttl: float = UNKNOWN_TOKEN_CACHE_SECONDS,
    ):
        self.settings = settings
        self.ttl = ttl
        self.unknown_ttl = unknown_ttl
        self._checked = _Lru(MAX_CALLERS * 4)  # token id -> (valid until, AccessToken | None)

    async def verify_token(self, token: str):
        from mcp.server.auth.provider import AccessToken

        key = _token_id(token)
        cached = self._checked.hit(key)
        now = time.monotonic()
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            async with AsyncClient(
                self.settings.url, token, max_retries=1, transport=self.settings.transport, timeout=10.0
            ) as client:
                await client.scopes.list(under="-")  # no scope has this path: the answer is small
        except NotAuthenticated:
            self._checked.keep(key, (now + self.unknown_ttl, None))
            return None
        except (APIConnectionError, ServiceUnavailable) as exc:
            logger.warning("could not check a caller's token with the service: %s", exc)
            return None  # not cached: the next request asks again
        except MemgovError:
            pass  # known to the service (e.g. 403 or 400): the service decides what it may do
        access = AccessToken(token=token, client_id=key, scopes=[], subject=key)
        self._checked.keep(key, (now + self.ttl, access))
        return access


def build_server(settings: Settings | None = None, *, per_caller: bool = False):
    """The MCPServer with its tools and resources (importing `mcp` only here: it is an extra). With
    `per_caller` (the HTTP mode) each request must carry the caller's bearer token, and the tools call
    the service with that token; otherwise with the token of MEMGOV_TOKEN."""
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError

    settings = settings or Settings()
    auth: dict[str, Any] = {}
    if per_caller:
        # A resource server only: the service issues the tokens (`manage.py create_token`, POST /tokens).
        auth = {
            "token_verifier": ServiceTokenVerifier(settings),
            "auth": AuthSettings(issuer_url=settings.url, resource_server_url=None),
        }
    # WARNING by default: at INFO every REST call would be logged to the client's stderr log.
    server = MCPServer(
        name="memgov",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        log_level=os.environ.get("MEMGOV_MCP_LOG_LEVEL", "WARNING").upper(),
        **auth,
    )
    clients = _Lru(MAX_CALLERS)

    def client() -> AsyncClient:
        """The client of this request's caller: created on first use, inside the server's event loop."""
        if per_caller:
            access = get_access_token()
            if access is None:  # the SDK's RequireAuthMiddleware refuses such a request before this
                raise ToolError("No caller token on this request.")
            token = access.token
        else:
            token = settings.token
        key = _token_id(token or "")
        return clients.hit(key) or clients.keep(
            key, AsyncClient(settings.url, token, transport=settings.transport)
        )

    def scope_of(scope: str | None) -> str:
        chosen = scope or settings.scope
        if not chosen:
            raise ToolError(
                "No scope given and no default scope (MEMGOV_SCOPE) configured: pass `scope`, "
                "e.g. 'acme/slides/deck-42'."
            )
        return chosen

    def tool_error(exc: MemgovError) -> ToolError:
        """A service refusal as a clear tool error the model can read and act on."""
        hint = f" {NOT_FOUND_HINT}" if isinstance(exc, NotFound) else ""
        return ToolError(f"The memory service refused this ({exc.status} {exc.code}): {exc.message}{hint}")

    @server.tool(
        description=(
            "Get the context packet for this turn: the memories that apply to `query` in `scope`, packed into "
            "`budget_tokens`. Put `text` in your working context. Slots: constraints = IN FORCE (confirmed; "
            "follow them); negative = NO LONGER in force (never act on them; each says what replaced it); "
            "evidence = supporting memories, where candidates are marked unconfirmed (not facts); recent = the "
            "session's latest turns; preferences = preferences in force; task = the current task. `skipped` "
            "lists what did not fit. Give `task_goal` (and `task_state`) to pin the current task."
        )
    )
    async def get_context(
        query: str,
        scope: str | None = None,
        task_goal: str | None = None,
        task_state: str | None = None,
        session: str | None = None,
        budget_tokens: int | None = None,
    ) -> dict[str, Any]:
        task = {"goal": task_goal, **({"state": task_state} if task_state else {})} if task_goal else None
        try:
            ctx = await client().context(
                scope=scope_of(scope),
                query=query,
                task=task,
                session=session,
                budget_tokens=budget_tokens or settings.budget,
            )
        except MemgovError as exc:
            raise tool_error(exc) from exc
        return _context_result(ctx)

    @server.tool(
        description=(
            "Search the governed memory: the `k` best memories for `query` in `scope` and its parent scopes. "
            "Each has its status: only `active` ones are confirmed; `candidate` and `proposed` are unconfirmed."
        )
    )
    async def recall(query: str, scope: str | None = None, k: int = 8) -> dict[str, Any]:
        try:
            hits = await client().recall(scope=scope_of(scope), query=query, k=k)
        except MemgovError as exc:
            raise tool_error(exc) from exc
        return {"results": [_hit(h) for h in hits]}

    @server.tool(
        description=(
            "Remember something for later turns: it is stored as a CANDIDATE that a person reviews, never as a "
            "rule in force. `kind`: semantic (a fact), preference, convention (a standing rule), method, "
            "stage_fact, external, episodic. A `key` (e.g. 'export_format') makes it a keyed fact whose "
            "revisions replace each other once confirmed. Say where it came from with `source_kind`."
        )
    )
    async def remember(
        text: str,
        scope: str | None = None,
        kind: ReadKind = "semantic",
        key: str | None = None,
        source_kind: Literal["user", "tool_result", "model_inference", "external_document"] = "user",
        source_ref: str = "",
    ) -> dict[str, Any]:
        try:
            memory = await client().memories.create(
                scope=scope_of(scope),
                text=text,
                kind=kind,
                key=key,
                status="candidate",
                source_kind=source_kind,
                source_ref=source_ref,
            )
        except MemgovError as exc:
            raise tool_error(exc) from exc
        return {
            "memory": _memory(memory),
            "note": "Stored as an unconfirmed candidate; it is not in force until a person confirms it.",
        }

    @server.tool(
        description=(
            "Record the turns of an interaction as episodic memory (what was said and done), in order. Each "
            "turn: {role: user|assistant|system|tool_call|tool_result, content, ref?, call_id?}. A tool call and "
            "its result share a call_id. Standing instructions in user turns become candidates for review. "
            "Re-sending a turn with the same ref adds nothing."
        )
    )
    async def record_turns(
        session: str, turns: list[dict[str, str]], scope: str | None = None
    ) -> dict[str, Any]:
        try:
            created = await client().events.record(scope=scope_of(scope), session=session, turns=turns)
        except MemgovError as exc:
            raise tool_error(exc) from exc
        return {"created": [_memory(m) for m in created]}

    @server.tool(
        description=(
            "Open the task scope you work in: a child `name` (lowercase letters, digits, - and _) under "
            "`parent` (default: the configured scope). Opening one that exists returns it. Then use its path as "
            "`scope` so this task's memories stay apart from other tasks'."
        )
    )
    async def open_scope(name: str, parent: str | None = None) -> dict[str, Any]:
        try:
            scope = await client().scopes.open(parent=scope_of(parent), name=name)
        except MemgovError as exc:
            raise tool_error(exc) from exc
        return {"path": scope.path, "created": scope.created, "parent": scope.parent}

    @server.tool(
        description=(
            "Propose a correction of a remembered memory (by `memory_id`, from a packet or recall): writes the "
            "corrected `text` as a proposal that supersedes the old one once a person confirms it. Until then "
            "the old memory stays in force. Give the `reason` (e.g. what the user said)."
        )
    )
    async def propose_correction(memory_id: int, text: str, reason: str) -> dict[str, Any]:
        try:
            old = await client().memories.get(memory_id)
            proposal = await client().memories.create(
                scope=old.scope,
                kind=old.kind,
                key=old.key,
                text=text,
                status="proposed",
                source_kind="model_inference",
                source_ref=f"correction of memory {old.id}: {reason}"[:500],
            )
        except MemgovError as exc:
            raise tool_error(exc) from exc
        return {
            "proposal": _memory(proposal),
            "corrects": old.id,
            "note": "Waiting for review; the old memory stays in force until a person confirms this.",
        }

    @server.resource(
        "memgov://memories/{memory_id}",
        name="memory",
        mime_type="application/json",
        description="One memory: text, status, scope, key and revision, source.",
    )
    async def memory_resource(memory_id: str) -> dict[str, Any]:
        try:
            return _memory(await client().memories.get(int(memory_id)))
        except NotFound as exc:
            raise ResourceNotFoundError(f"memory {memory_id}: {NOT_FOUND_HINT}") from exc
        except (MemgovError, ValueError) as exc:
            raise ResourceError(f"memory {memory_id}: {exc}") from exc

    @server.resource(
        "memgov://turns/{turn_id}",
        name="turn",
        mime_type="application/json",
        description="A stored turn: the context packet an agent was given, its text and budget.",
    )
    async def turn_resource(turn_id: str) -> dict[str, Any]:
        try:
            turn = await client().turns.get(int(turn_id))
        except NotFound as exc:
            raise ResourceNotFoundError(f"turn {turn_id}: {NOT_FOUND_HINT}") from exc
        except (MemgovError, ValueError) as exc:
            raise ResourceError(f"turn {turn_id}: {exc}") from exc
        return {
            "id": turn.id,
            "scope": turn.scope,
            "session": turn.session,
            "query": turn.query,
            "text": turn.text,
            "budget": turn.raw.get("budget"),
            "packet": turn.raw.get("packet"),
            "created_at": turn.raw.get("created_at"),
        }

    return server


def _memory(m: Memory) -> dict[str, Any]:
    return {
        "id": m.id,
        "scope": m.scope,
        "kind": m.kind,
        "key": m.key,
        "revision": m.revision,
        "status": m.status,
        "in_force": m.in_force,
        "text": m.text,
        "source": m.raw.get("source"),
    }


def _hit(h: RecallHit) -> dict[str, Any]:
    return {
        "memory_id": h.memory_id,
        "text": h.text,
        "kind": h.kind,
        "key": h.key,
        "revision": h.revision,
        "status": h.status,
        "score": h.score,
    }


def _block(b: Block) -> dict[str, Any]:
    out = {"memory_id": b.memory_id, "status": b.status, "text": b.text, "reason": b.reason}
    if b.key:
        out["key"] = b.key
    if b.replaced_by:
        out["replaced_by"] = b.replaced_by
    return out


def _context_result(ctx: Context) -> dict[str, Any]:
    packet = ctx.packet
    return {
        "text": ctx.text,
        "turn_id": ctx.turn_id,
        "constraints_in_force": [_block(b) for b in packet.constraints],
        "no_longer_in_force": [_block(b) for b in packet.negative],
        "evidence": [_block(b) for b in packet.evidence],
        "preferences": [_block(b) for b in packet.preferences],
        "recent": [_block(b) for b in packet.recent],
        "skipped": len(packet.skipped),
        "budget": {"limit": ctx.budget.limit, "used": ctx.budget.used},
    }


def asgi_app(
    service_app: Any,
    *,
    service_url: str = "https://localhost",
    path: str = "/mcp",
    scope: str | None = None,
    budget: int | None = None,
    allowed_hosts: list[str] | None = None,
):
    """The service's ASGI app with the MCP endpoint (per-caller bearer tokens) mounted at `path`: MCP
    requests go to the SDK's streamable HTTP app, whose tools call `service_app` in process (no socket,
    the same REST API and permission checks); everything else goes to `service_app`. The SDK's session
    manager runs in the ASGI lifespan. `allowed_hosts` (host[:port] patterns) turns on the SDK's DNS
    rebinding protection. `service_url` is the scheme and host the in-process calls carry: one the
    service's ALLOWED_HOSTS accepts (https, so that an SSL redirect does not apply)."""
    from mcp.server.transport_security import TransportSecuritySettings

    transport = httpx.ASGITransport(app=service_app)
    server = build_server(
        Settings(url=service_url, scope=scope, budget=budget, transport=transport), per_caller=True
    )
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=bool(allowed_hosts),
        allowed_hosts=allowed_hosts or [],
        allowed_origins=[],
    )
    mcp_app = server.streamable_http_app(
        streamable_http_path=path, transport_security=security, host="0.0.0.0"
    )

    async def app(asgi_scope, receive, send):
        if asgi_scope["type"] == "lifespan":
            return await mcp_app(asgi_scope, receive, send)
        if asgi_scope["type"] == "http" and asgi_scope["path"].rstrip("/") == path:
            return await mcp_app(asgi_scope, receive, send)
        return await service_app(asgi_scope, receive, send)

    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="memgov-mcp", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--http", type=int, metavar="PORT", help="serve streamable HTTP on PORT instead of stdio"
    )
    parser.add_argument("--host", default="127.0.0.1", help="with --http: the address to listen on")
    parser.add_argument("--url", help="the service's base URL (default: MEMGOV_URL)")
    parser.add_argument("--scope", help="the default scope of the tools (default: MEMGOV_SCOPE)")
    parser.add_argument("--budget", type=int, help="the default token budget of get_context (default 1500)")
    args = parser.parse_args(argv)
    settings = Settings(url=args.url, scope=args.scope, budget=args.budget)
    if args.http:  # each caller brings its own token; a token of the server's own would be anyone's
        if not settings.url:
            print("memgov-mcp: set MEMGOV_URL (the service URL).", file=sys.stderr)
            raise SystemExit(2)
        build_server(settings, per_caller=True).run("streamable-http", host=args.host, port=args.http)
        return
    missing = [
        name for name, value in (("MEMGOV_URL", settings.url), ("MEMGOV_TOKEN", settings.token)) if not value
    ]
    if missing:
        print(f"memgov-mcp: set {' and '.join(missing)} (the service URL and an API token).", file=sys.stderr)
        raise SystemExit(2)
    build_server(settings).run("stdio")


if __name__ == "__main__":
    main()
