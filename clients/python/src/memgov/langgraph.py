"""A LangGraph `BaseStore` backed by the memory service, so a LangGraph agent's long-term memory is
governed without changing the agent:

    from memgov.langgraph import MemgovStore
    graph = builder.compile(store=MemgovStore())          # MEMGOV_URL / MEMGOV_TOKEN

- a namespace is a scope path: ("acme", "slides", "deck-42") is `acme/slides/deck-42`; a missing last
  levels are opened through POST /scopes when the token may (`open_scopes=True`);
- an item is a keyed memory: `put` writes the key's next revision through the governed write path, so
  with an agent's token it is a *candidate* until a person confirms it (`value["_memgov"]["in_force"]`
  says whether it is in force); `get` returns the revision in force, else the newest unconfirmed one;
- `search` with a query is the service's recall in that scope (which sees the scope and its ancestors,
  as every read does); without a query it lists the namespace's subtree, newest first;
- `delete` asks the service to retire (or, with `delete_mode="forget"`, soft-forget) the memory. Only a
  curator or owner may: an agent's token gets `memgov.Forbidden` — people decide what is forgotten.

Values: {"text": ...} (optionally with "kind") is stored as that text; any other dict as its JSON.
Memories written by other means, without a key, appear under the key "memory-<id>"."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memgov.client import AsyncClient, Client, _Sender
from memgov.errors import NotFound
from memgov.types import Memory, RecallHit

LIVE = ("active", "proposed", "candidate")  # what a store read may return, in order of preference
META = "_memgov"
UNKEYED_PREFIX = "memory-"
DELETE_REASON = "Deleted through the LangGraph store."


class _Awaiting(_Sender):
    """The sync client's operations as awaitables that never suspend, so the store's logic is written
    once (async) and the sync path drives it without an event loop (see _drive)."""

    def __init__(self, client: Client):
        self.settings = client.settings
        self._inner = client
        self._setup()

    async def _send(self, call):
        return self._inner._send(call)


def _drive(coro):
    """Run a coroutine that never suspends (its awaits are _Awaiting calls) to completion."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("MemgovStore's sync path awaited something that suspends.")


def scope_path(namespace: tuple[str, ...]) -> str:
    return "/".join(namespace)


def namespace_of(path: str) -> tuple[str, ...]:
    return tuple(path.split("/"))


def text_of(value: dict[str, Any]) -> tuple[str, str | None]:
    """The memory text for a value, and the kind it asks for."""
    value = {k: v for k, v in value.items() if k != META}
    if isinstance(value.get("text"), str) and set(value) <= {"text", "kind"}:
        return value["text"], value.get("kind")
    return json.dumps(value, ensure_ascii=False, sort_keys=True), None


def value_of(memory_text: str, kind: str, meta: dict[str, Any]) -> dict[str, Any]:
    try:
        parsed = json.loads(memory_text)
    except ValueError:
        parsed = None
    value = parsed if isinstance(parsed, dict) else {"text": memory_text, "kind": kind}
    return {**value, META: meta}


def _meta(m: Memory | RecallHit) -> dict[str, Any]:
    memory_id = m.id if isinstance(m, Memory) else m.memory_id
    return {
        "memory_id": memory_id,
        "status": m.status,
        "revision": m.revision,
        "in_force": m.status == "active",
    }


def _key(m: Memory | RecallHit) -> str:
    memory_id = m.id if isinstance(m, Memory) else m.memory_id
    return m.key if m.key else f"{UNKEYED_PREFIX}{memory_id}"


def _item(m: Memory, cls=Item, **extra) -> Item:
    at = m.created_at or datetime.now(UTC)
    return cls(
        namespace=namespace_of(m.scope),
        key=_key(m),
        value=value_of(m.text, m.kind, _meta(m)),
        created_at=at,
        updated_at=at,
        **extra,
    )


def _matches(value: dict[str, Any], filter: dict[str, Any] | None) -> bool:
    return not filter or all(value.get(k) == v for k, v in filter.items())


class MemgovStore(BaseStore):
    """LangGraph store over the memory service (sync and async). See the module docstring."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        client: Client | None = None,
        aclient: AsyncClient | None = None,
        kind: str = "semantic",
        source_kind: str = "model_inference",
        delete_mode: str = "retire",
        open_scopes: bool = True,
    ):
        if delete_mode not in ("retire", "forget"):
            raise ValueError("delete_mode is 'retire' or 'forget'.")
        self._url, self._token = url, token
        self._client, self._aclient = client, aclient
        self.kind, self.source_kind = kind, source_kind
        self.delete_mode, self.open_scopes = delete_mode, open_scopes

    @property
    def client(self) -> Client:
        if self._client is None:
            self._client = Client(self._url, self._token)
        return self._client

    @property
    def aclient(self) -> AsyncClient:
        if self._aclient is None:
            self._aclient = AsyncClient(self._url, self._token)
        return self._aclient

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        api = _Awaiting(self.client)
        return [_drive(self._apply(api, op)) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return [await self._apply(self.aclient, op) for op in ops]

    async def _apply(self, api, op: Op) -> Result:
        if isinstance(op, GetOp):
            return await self._get(api, op.namespace, op.key)
        if isinstance(op, PutOp):
            if op.value is None:
                return await self._delete(api, op.namespace, op.key)
            return await self._put(api, op.namespace, op.key, dict(op.value))
        if isinstance(op, SearchOp):
            return await self._search(api, op)
        if isinstance(op, ListNamespacesOp):
            return await self._list_namespaces(api, op)
        raise ValueError(f"Unknown store operation: {op!r}")

    async def _find(self, api, namespace: tuple[str, ...], key: str) -> Memory | None:
        path = scope_path(namespace)
        if key.startswith(UNKEYED_PREFIX) and key[len(UNKEYED_PREFIX) :].isdigit():
            try:
                found = await api.memories.get(int(key[len(UNKEYED_PREFIX) :]))
            except NotFound:
                return None
            return found if found.scope == path and found.status in LIVE else None
        try:
            page = await api.memories.list(scope=path, key=key)
        except NotFound:
            return None
        rows = [m for m in page.results if m.scope == path and m.key == key and m.status in LIVE]
        rows.sort(key=lambda m: (LIVE.index(m.status), -m.revision))
        return rows[0] if rows else None

    async def _get(self, api, namespace, key) -> Item | None:
        found = await self._find(api, namespace, key)
        return _item(found) if found else None

    async def _put(self, api, namespace, key, value) -> None:
        text, kind = text_of(value)
        write = dict(
            scope=scope_path(namespace),
            text=text,
            kind=kind or self.kind,
            key=key,
            source_kind=self.source_kind,
            source_ref="langgraph-store",
        )
        try:
            await api.memories.create(**write)
        except NotFound:
            if not self.open_scopes or len(namespace) < 2:
                raise
            await self._open(api, namespace)
            await api.memories.create(**write)

    async def _open(self, api, namespace: tuple[str, ...]) -> None:
        """Open the namespace's scope, and the missing levels above it, where the token may."""
        try:
            await api.scopes.open(parent=scope_path(namespace[:-1]), name=namespace[-1])
        except NotFound:
            if len(namespace) < 3:
                raise
            await self._open(api, namespace[:-1])
            await api.scopes.open(parent=scope_path(namespace[:-1]), name=namespace[-1])

    async def _delete(self, api, namespace, key) -> None:
        found = await self._find(api, namespace, key)
        if found is None:
            return
        if self.delete_mode == "forget":
            await api.memories.forget(found.id, reason=DELETE_REASON, mode="soft")
        else:
            await api.memories.retire(found.id, reason=DELETE_REASON)

    async def _search(self, api, op: SearchOp) -> list[SearchItem]:
        path = scope_path(op.namespace_prefix)
        wanted = op.offset + op.limit
        try:
            if op.query:
                hits = await api.recall(
                    scope=path, query=op.query, k=min(100, max(1, wanted * 2 if op.filter else wanted))
                )
                found = [(await api.memories.get(h.memory_id), h.score) for h in hits]
            else:
                found, page_no = [], 1
                while len(found) < wanted * (3 if op.filter else 1):
                    page = await api.memories.list(scope=path, page=page_no)
                    found += [(m, None) for m in page.results if m.status in LIVE]
                    if not page.next:
                        break
                    page_no += 1
        except NotFound:
            return []
        items = [_item(m, SearchItem, score=score) for m, score in found]
        items = [i for i in items if _matches(i.value, op.filter)]
        return items[op.offset : op.offset + op.limit]

    async def _list_namespaces(self, api, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        spaces = [namespace_of(s.path) for s in await api.scopes.list()]
        for cond in op.match_conditions or ():
            spaces = [ns for ns in spaces if _namespace_matches(ns, cond.match_type, tuple(cond.path))]
        if op.max_depth is not None:
            spaces = [ns[: op.max_depth] for ns in spaces]
        unique = sorted(set(spaces))
        return unique[op.offset : op.offset + op.limit]


def _namespace_matches(ns: tuple[str, ...], match_type: str, path: tuple[str, ...]) -> bool:
    if len(path) > len(ns):
        return False
    part = ns[: len(path)] if match_type == "prefix" else ns[len(ns) - len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))
