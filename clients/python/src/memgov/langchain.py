"""LangChain tools over the memory service: get the context packet, and remember (a candidate).

    from memgov.langchain import memgov_tools
    tools = memgov_tools(scope="acme/slides")             # MEMGOV_URL / MEMGOV_TOKEN
    model.bind_tools(tools)

Each tool has a sync and an async implementation (the sync and async clients)."""

from __future__ import annotations

from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field

from memgov.client import AsyncClient, Client
from memgov.errors import MemgovError
from memgov.types import Context, Memory

GET_CONTEXT_DESCRIPTION = (
    "Get the governed memory that applies to this turn, as text to rely on. Its sections: 'Constraints in "
    "force' are confirmed rules — follow them; 'No longer in force' must not be acted on; evidence marked "
    "unconfirmed is a candidate, not a fact."
)
REMEMBER_DESCRIPTION = (
    "Remember something for later turns (a fact, preference or standing rule the user stated). It is "
    "stored as an unconfirmed candidate that a person reviews; it is not in force until confirmed."
)


class GetContextArgs(BaseModel):
    query: str = Field(description="What this turn is about, usually the user's request.")
    task_goal: str | None = Field(default=None, description="The current task's goal, pinned in the packet.")


class RememberArgs(BaseModel):
    text: str = Field(description="The thing to remember, as one self-contained sentence.")
    kind: str = Field(
        default="semantic", description="semantic, preference, convention, method or stage_fact."
    )
    key: str | None = Field(default=None, description="Optional name for a keyed fact, e.g. 'export_format'.")


def _render_context(ctx: Context) -> str:
    return ctx.text or "(no memories apply)"


def _render_memory(m: Memory) -> str:
    return f"Remembered as memory {m.id} ({m.status}, not in force until a person confirms it)."


def memgov_tools(
    *,
    scope: str,
    url: str | None = None,
    token: str | None = None,
    budget_tokens: int = 1500,
    session: str | None = None,
    client: Client | None = None,
    aclient: AsyncClient | None = None,
) -> list[StructuredTool]:
    """[get_context, remember] bound to one scope (and session, when given)."""
    clients: dict[str, object] = {}

    def sync() -> Client:
        return client or clients.setdefault("sync", Client(url, token))

    def asynchronous() -> AsyncClient:
        return aclient or clients.setdefault("async", AsyncClient(url, token))

    def context_args(query: str, task_goal: str | None) -> dict:
        return {
            "scope": scope,
            "query": query,
            "budget_tokens": budget_tokens,
            "task": task_goal,
            "session": session,
        }

    def remember_args(text: str, kind: str, key: str | None) -> dict:
        return {
            "scope": scope,
            "text": text,
            "kind": kind,
            "key": key,
            "status": "candidate",
            "source_kind": "user",
            "source_ref": f"langchain:{session}" if session else "langchain",
        }

    def get_context(query: str, task_goal: str | None = None) -> str:
        try:
            return _render_context(sync().context(**context_args(query, task_goal)))
        except MemgovError as exc:
            raise ToolException(str(exc)) from exc

    async def aget_context(query: str, task_goal: str | None = None) -> str:
        try:
            return _render_context(await asynchronous().context(**context_args(query, task_goal)))
        except MemgovError as exc:
            raise ToolException(str(exc)) from exc

    def remember(text: str, kind: str = "semantic", key: str | None = None) -> str:
        try:
            return _render_memory(sync().memories.create(**remember_args(text, kind, key)))
        except MemgovError as exc:
            raise ToolException(str(exc)) from exc

    async def aremember(text: str, kind: str = "semantic", key: str | None = None) -> str:
        try:
            return _render_memory(await asynchronous().memories.create(**remember_args(text, kind, key)))
        except MemgovError as exc:
            raise ToolException(str(exc)) from exc

    return [
        StructuredTool.from_function(
            func=get_context,
            coroutine=aget_context,
            name="get_context",
            description=GET_CONTEXT_DESCRIPTION,
            args_schema=GetContextArgs,
            handle_tool_error=True,
        ),
        StructuredTool.from_function(
            func=remember,
            coroutine=aremember,
            name="remember",
            description=REMEMBER_DESCRIPTION,
            args_schema=RememberArgs,
            handle_tool_error=True,
        ),
    ]
