"""What an MCP client (Claude Desktop, an IDE) does with memgov-mcp, with the SDK's own client: start
the server over stdio, list its tools, ask for the context packet, remember something.

    pip install "./clients/python[mcp]"
    export MEMGOV_URL=http://127.0.0.1:8000 MEMGOV_TOKEN=... MEMGOV_SCOPE=acme/slides
    python examples/mcp_stdio_session.py
"""

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def text(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def main() -> None:
    command = shutil.which("memgov-mcp") or str(Path(sys.executable).with_name("memgov-mcp"))
    env = {k: os.environ[k] for k in ("MEMGOV_URL", "MEMGOV_TOKEN", "MEMGOV_SCOPE") if k in os.environ}
    async with stdio_client(StdioServerParameters(command=command, env=env)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            print("tools:", ", ".join(t.name for t in tools))
            context = await session.call_tool(
                "get_context",
                {"query": "how do we export the deck?", "task_goal": "Export deck 42", "budget_tokens": 500},
            )
            packet = json.loads(text(context))
            print("packet text received over MCP:")
            print(packet["text"])
            print("constraints in force:", [b["text"] for b in packet["constraints_in_force"]])
            remembered = await session.call_tool(
                "remember", {"text": "The client wants a dark theme", "kind": "preference"}
            )
            memory = json.loads(text(remembered))["memory"]
            print(f"remembered memory {memory['id']}: {memory['status']} (in force: {memory['in_force']})")
            refused = await session.call_tool("get_context", {"query": "x", "scope": "some/other-workspace"})
            print("a scope outside the token:", "tool error:" if refused.is_error else "", text(refused))


asyncio.run(main())
