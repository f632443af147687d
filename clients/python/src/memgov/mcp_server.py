"""`memgov-mcp`: an MCP server (official `mcp` SDK) that gives a model the memory service's per-turn
calls. It is a thin layer over the REST API with one token (MEMGOV_URL, MEMGOV_TOKEN), so it works
against a remote deployment and can do exactly what that token may do, nothing more.

    memgov-mcp                       # stdio, for desktop and IDE clients
    memgov-mcp --http 8765           # streamable HTTP on 127.0.0.1:8765/mcp

Trust boundary: `remember` and `propose_correction` write candidates and proposals only; nothing an
agent writes through this server is ever in force until a person with the confirm right confirms it."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Literal

from memgov.client import AsyncClient
from memgov.errors import MemgovError, NotFound
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


class Settings:
    """Where the server sends its calls. The token comes from the environment, never a command line
    argument (which other users of the machine could read)."""

    def __init__(self, url: str | None = None, scope: str | None = None, budget: int | None = None):
        self.url = url or os.environ.get("MEMGOV_URL")
        self.token = os.environ.get("MEMGOV_TOKEN")
        self.scope = scope or os.environ.get("MEMGOV_SCOPE") or None
        self.budget = budget or int(os.environ.get("MEMGOV_BUDGET_TOKENS", "1500"))


def build_server(settings: Settings | None = None):
    """The MCPServer with its tools and resources (importing `mcp` only here: it is an extra)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError

    settings = settings or Settings()
    # WARNING by default: at INFO every REST call would be logged to the client's stderr log.
    server = MCPServer(name="memgov", instructions=INSTRUCTIONS, version="0.1.0",
                       log_level=os.environ.get("MEMGOV_MCP_LOG_LEVEL", "WARNING").upper())
    clients: list[AsyncClient] = []

    def client() -> AsyncClient:
        if not clients:  # created on first use, inside the server's event loop
            clients.append(AsyncClient(settings.url, settings.token))
        return clients[0]

    def scope_of(scope: str | None) -> str:
        chosen = scope or settings.scope
        if not chosen:
            raise ToolError("No scope given and no default scope (MEMGOV_SCOPE) configured: pass `scope`, "
                            "e.g. 'acme/slides/deck-42'.")
        return chosen

    def tool_error(exc: MemgovError) -> ToolError:
        """A service refusal as a clear tool error the model can read and act on."""
        hint = f" {NOT_FOUND_HINT}" if isinstance(exc, NotFound) else ""
        return ToolError(f"The memory service refused this ({exc.status} {exc.code}): {exc.message}{hint}")

    @server.tool(description=(
        "Get the context packet for this turn: the memories that apply to `query` in `scope`, packed into "
        "`budget_tokens`. Put `text` in your working context. Slots: constraints = IN FORCE (confirmed; "
        "follow them); negative = NO LONGER in force (never act on them; each says what replaced it); "
        "evidence = supporting memories, where candidates are marked unconfirmed (not facts); recent = the "
        "session's latest turns; preferences = preferences in force; task = the current task. `skipped` "
        "lists what did not fit. Give `task_goal` (and `task_state`) to pin the current task."))
    async def get_context(query: str, scope: str | None = None, task_goal: str | None = None,
                          task_state: str | None = None, session: str | None = None,
                          budget_tokens: int | None = None) -> dict[str, Any]:
        task = {"goal": task_goal, **({"state": task_state} if task_state else {})} if task_goal else None
        try:
            ctx = await client().context(scope=scope_of(scope), query=query, task=task, session=session,
                                         budget_tokens=budget_tokens or settings.budget)
        except MemgovError as exc:
            raise tool_error(exc) from exc
        return _context_result(ctx)

    @server.tool(description=(
        "Search the governed memory: the `k` best memories for `query` in `scope` and its parent scopes. "
        "Each has its status: only `active` ones are confirmed; `candidate` and `proposed` are unconfirmed."))
    async def recall(query: str, scope: str | None = None, k: int = 8) -> dict[str, Any]:
        try:
            hits = await client().recall(scope=scope_of(scope), query=query, k=k)
        except MemgovError as exc:
            raise tool_error(exc) from exc
        return {"results": [_hit(h) for h in hits]}

    @server.tool(description=(
        "Remember something for later turns: it is stored as a CANDIDATE that a person reviews, never as a "
        "rule in force. `kind`: semantic (a fact), preference, convention (a standing rule), method, "
        "stage_fact, external, episodic. A `key` (e.g. 'export_format') makes it a keyed fact whose "
        "revisions replace each other once confirmed. Say where it came from with `source_kind`."))
    async def remember(text: str, scope: str | None = None, kind: ReadKind = "semantic", key: str | None = None,
                       source_kind: Literal["user", "tool_result", "model_inference", "external_document"] = "user",
                       source_ref: str = "") -> dict[str, Any]:
        try:
            memory = await client().memories.create(scope=scope_of(scope), text=text, kind=kind, key=key,
                                                    status="candidate", source_kind=source_kind,
                                                    source_ref=source_ref)
        except MemgovError as exc:
            raise tool_error(exc) from exc
        return {"memory": _memory(memory),
                "note": "Stored as an unconfirmed candidate; it is not in force until a person confirms it."}

    @server.tool(description=(
        "Record the turns of an interaction as episodic memory (what was said and done), in order. Each "
        "turn: {role: user|assistant|system|tool_call|tool_result, content, ref?, call_id?}. A tool call and "
        "its result share a call_id. Standing instructions in user turns become candidates for review. "
        "Re-sending a turn with the same ref adds nothing."))
    async def record_turns(session: str, turns: list[dict[str, str]], scope: str | None = None) -> dict[str, Any]:
        try:
            created = await client().events.record(scope=scope_of(scope), session=session, turns=turns)
        except MemgovError as exc:
            raise tool_error(exc) from exc
        return {"created": [_memory(m) for m in created]}

    @server.tool(description=(
        "Open the task scope you work in: a child `name` (lowercase letters, digits, - and _) under "
        "`parent` (default: the configured scope). Opening one that exists returns it. Then use its path as "
        "`scope` so this task's memories stay apart from other tasks'."))
    async def open_scope(name: str, parent: str | None = None) -> dict[str, Any]:
        try:
            scope = await client().scopes.open(parent=scope_of(parent), name=name)
        except MemgovError as exc:
            raise tool_error(exc) from exc
        return {"path": scope.path, "created": scope.created, "parent": scope.parent}

    @server.tool(description=(
        "Propose a correction of a remembered memory (by `memory_id`, from a packet or recall): writes the "
        "corrected `text` as a proposal that supersedes the old one once a person confirms it. Until then "
        "the old memory stays in force. Give the `reason` (e.g. what the user said)."))
    async def propose_correction(memory_id: int, text: str, reason: str) -> dict[str, Any]:
        try:
            old = await client().memories.get(memory_id)
            proposal = await client().memories.create(
                scope=old.scope, kind=old.kind, key=old.key, text=text, status="proposed",
                source_kind="model_inference", source_ref=f"correction of memory {old.id}: {reason}"[:500])
        except MemgovError as exc:
            raise tool_error(exc) from exc
        return {"proposal": _memory(proposal), "corrects": old.id,
                "note": "Waiting for review; the old memory stays in force until a person confirms this."}

    @server.resource("memgov://memories/{memory_id}", name="memory", mime_type="application/json",
                     description="One memory: text, status, scope, key and revision, source.")
    async def memory_resource(memory_id: str) -> dict[str, Any]:
        try:
            return _memory(await client().memories.get(int(memory_id)))
        except NotFound as exc:
            raise ResourceNotFoundError(f"memory {memory_id}: {NOT_FOUND_HINT}") from exc
        except (MemgovError, ValueError) as exc:
            raise ResourceError(f"memory {memory_id}: {exc}") from exc

    @server.resource("memgov://turns/{turn_id}", name="turn", mime_type="application/json",
                     description="A stored turn: the context packet an agent was given, its text and budget.")
    async def turn_resource(turn_id: str) -> dict[str, Any]:
        try:
            turn = await client().turns.get(int(turn_id))
        except NotFound as exc:
            raise ResourceNotFoundError(f"turn {turn_id}: {NOT_FOUND_HINT}") from exc
        except (MemgovError, ValueError) as exc:
            raise ResourceError(f"turn {turn_id}: {exc}") from exc
        return {"id": turn.id, "scope": turn.scope, "session": turn.session, "query": turn.query,
                "text": turn.text, "budget": turn.raw.get("budget"), "packet": turn.raw.get("packet"),
                "created_at": turn.raw.get("created_at")}

    return server


def _memory(m: Memory) -> dict[str, Any]:
    return {"id": m.id, "scope": m.scope, "kind": m.kind, "key": m.key, "revision": m.revision,
            "status": m.status, "in_force": m.in_force, "text": m.text, "source": m.raw.get("source")}


def _hit(h: RecallHit) -> dict[str, Any]:
    return {"memory_id": h.memory_id, "text": h.text, "kind": h.kind, "key": h.key, "revision": h.revision,
            "status": h.status, "score": h.score}


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="memgov-mcp", description=__doc__.split("\n\n")[0])
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on PORT instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="with --http: the address to listen on")
    parser.add_argument("--url", help="the service's base URL (default: MEMGOV_URL)")
    parser.add_argument("--scope", help="the default scope of the tools (default: MEMGOV_SCOPE)")
    parser.add_argument("--budget", type=int, help="the default token budget of get_context (default 1500)")
    args = parser.parse_args(argv)
    settings = Settings(url=args.url, scope=args.scope, budget=args.budget)
    missing = [name for name, value in (("MEMGOV_URL", settings.url), ("MEMGOV_TOKEN", settings.token)) if not value]
    if missing:
        print(f"memgov-mcp: set {' and '.join(missing)} (the service URL and an API token).", file=sys.stderr)
        raise SystemExit(2)
    server = build_server(settings)
    if args.http:
        server.run("streamable-http", host=args.host, port=args.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
