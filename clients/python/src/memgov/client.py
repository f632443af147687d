"""`Client` (sync) and `AsyncClient` (async) for the memory governance API.

    client = memgov.Client()                    # MEMGOV_URL and MEMGOV_TOKEN from the environment
    ctx = client.context(scope="acme/slides", query="export the deck", budget_tokens=800)
    print(ctx.text)                              # what goes into the prompt
    client.memories.create(scope="acme/slides", text="Export as PDF", kind="convention", key="export_format")

Both clients have the same methods; the async one's return awaitables. The operations are described
once (the resource classes below build a `Call`); the clients only send them. Every call goes through
the same API and token as any other: what a token may do is decided by the service."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

import httpx

from memgov import types as t
from memgov._core import Call, Settings, call_headers, clean, read, should_retry
from memgov.errors import APIConnectionError

# Connection failures before anything was sent are safe to retry for every method.
_RETRYABLE_TRANSPORT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def _iso(value: datetime | str | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


class _Resource:
    def __init__(self, client: _Sender):
        self._client = client

    def _send(self, call: Call) -> Any:
        return self._client._send(call)


class Memories(_Resource):
    def create(
        self,
        *,
        scope: str,
        text: str,
        kind: str = "semantic",
        key: str | None = None,
        source_kind: str = "model_inference",
        source_ref: str = "",
        status: str | None = None,
        confidence: float | None = None,
        importance: float | None = None,
        tier: str | None = None,
        task_type: str | None = None,
        valid_from: datetime | str | None = None,
        valid_until: datetime | str | None = None,
    ) -> t.Memory:
        """Write a memory. Without `status` an agent's write is a candidate (episodic/working: a record);
        `active` needs the right to confirm."""
        body = clean(
            {
                "scope": scope,
                "text": text,
                "kind": kind,
                "key": key,
                "status": status,
                "source": {"kind": source_kind, "ref": source_ref},
                "confidence": confidence,
                "importance": importance,
                "tier": tier,
                "task_type": task_type,
                "valid_from": _iso(valid_from),
                "valid_until": _iso(valid_until),
            }
        )
        return self._send(Call("POST", "/memories", json=body, parse=t.Memory.from_dict))

    def get(self, memory_id: int) -> t.Memory:
        return self._send(Call("GET", f"/memories/{int(memory_id)}", parse=t.Memory.from_dict))

    def list(
        self,
        *,
        scope: str | None = None,
        status: str | None = None,
        kind: str | None = None,
        key: str | None = None,
        q: str | None = None,
        page: int = 1,
    ) -> t.Page:
        """One page (50) of the memories the token can see, newest first."""
        params = clean(
            {
                "scope": scope,
                "status": status,
                "kind": kind,
                "key": key,
                "q": q,
                "page": page if page != 1 else None,
            }
        )
        return self._send(Call("GET", "/memories", params=params, parse=t.Page.from_dict))

    def supersede(
        self,
        memory_id: int,
        *,
        text: str,
        reason: str,
        source_kind: str = "model_inference",
        source_ref: str = "",
    ) -> t.Memory:
        """Write the next revision and mark this one superseded (curator or owner)."""
        body = {"text": text, "reason": reason, "source": {"kind": source_kind, "ref": source_ref}}
        return self._send(
            Call("POST", f"/memories/{int(memory_id)}/supersede", json=body, parse=t.Memory.from_dict)
        )

    def confirm(self, memory_id: int, *, reason: str = "") -> t.MemoryState:
        return self._send(
            Call(
                "POST",
                f"/memories/{int(memory_id)}/confirm",
                json={"reason": reason},
                parse=t.MemoryState.from_dict,
            )
        )

    def reject(self, memory_id: int, *, reason: str) -> t.MemoryState:
        return self._send(
            Call(
                "POST",
                f"/memories/{int(memory_id)}/reject",
                json={"reason": reason},
                parse=t.MemoryState.from_dict,
            )
        )

    def retire(self, memory_id: int, *, reason: str) -> t.MemoryState:
        return self._send(
            Call(
                "POST",
                f"/memories/{int(memory_id)}/retire",
                json={"reason": reason},
                parse=t.MemoryState.from_dict,
            )
        )

    def forget(self, memory_id: int, *, reason: str, mode: str = "soft") -> t.ForgetResult:
        """Out of every read at once; `hard` also purges the text (owner)."""
        return self._send(
            Call(
                "POST",
                f"/memories/{int(memory_id)}/forget",
                json={"mode": mode, "reason": reason},
                parse=t.ForgetResult.from_dict,
            )
        )


class Events(_Resource):
    def record(
        self, *, scope: str, session: str, turns: list[dict[str, Any]], at: datetime | str | None = None
    ) -> list[t.Memory]:
        """Record one interaction: `turns` are {"role", "content", "ref"?, "call_id"?, "speaker"?}. Returns
        the episodic memories and the candidates extracted from them (re-sent turns are skipped)."""
        body = clean({"scope": scope, "session": session, "turns": turns, "at": _iso(at)})
        return self._send(
            Call("POST", "/events", json=body, parse=lambda d: [t.Memory.from_dict(m) for m in d["created"]])
        )


class Turns(_Resource):
    def get(self, turn_id: int) -> t.Turn:
        return self._send(Call("GET", f"/turns/{int(turn_id)}", parse=t.Turn.from_dict))


class Scopes(_Resource):
    def open(self, *, parent: str, name: str) -> t.Scope:
        """Open (or re-open) the child scope `name` under `parent`; `.created` says which."""
        return self._send(
            Call("POST", "/scopes", json={"parent": parent, "name": name}, parse=t.Scope.from_dict)
        )

    def list(self, *, under: str | None = None) -> list[t.Scope]:
        return self._send(
            Call(
                "GET",
                "/scopes",
                params=clean({"under": under}),
                parse=lambda d: [t.Scope.from_dict(s) for s in d],
            )
        )

    def export(self, scope_id: int) -> str:
        """The scope's subtree as JSON lines (curators and owners; docs/portability.md). Read whole here; for
        a very large scope use `manage.py export_scope` or stream the endpoint yourself."""
        return self._send(Call("GET", f"/scopes/{int(scope_id)}/export", text=True))

    def import_file(
        self,
        scope_id: int,
        content: bytes | str,
        *,
        name: str | None = None,
        grants: str = "drop",
        preview: bool = False,
    ) -> dict:
        """Import an export file into scope `scope_id` (or a new child `name` of it); owners of the target.
        `preview=True` checks the whole file and counts it, changing nothing. Returns {root, import_id,
        counts, preview}; a bad file raises with the line in the error's details."""
        body = content.encode("utf-8") if isinstance(content, str) else content
        form = clean({"name": name, "grants": grants, "preview": "true" if preview else "false"})
        return self._send(
            Call(
                "POST",
                f"/scopes/{int(scope_id)}/import",
                data=form,
                files={"file": ("export.jsonl", body, "application/x-ndjson")},
            )
        )


class Review(_Resource):
    def queue(self, *, scope: str | None = None) -> list[t.ReviewItem]:
        return self._send(
            Call(
                "GET",
                "/review",
                params=clean({"scope": scope}),
                parse=lambda d: [t.ReviewItem.from_dict(i) for i in d],
            )
        )


class Relations(_Resource):
    def link(self, *, source: int, target: int, kind: str, reason: str) -> t.Relation:
        """`source` supports / contradicts / is derived from `target`, with a reason (curator or owner)."""
        return self._send(
            Call(
                "POST",
                "/relations",
                json={"source": int(source), "target": int(target), "kind": kind, "reason": reason},
                parse=t.Relation.from_dict,
            )
        )

    def unlink(self, relation_id: int, *, reason: str) -> t.Relation:
        return self._send(
            Call(
                "DELETE",
                f"/relations/{int(relation_id)}",
                json={"reason": reason},
                parse=t.Relation.from_dict,
            )
        )


class Promotions(_Resource):
    def request(self, *, memory: int, episodes: list[int], reason: str = "") -> t.Memory:
        """Propose a candidate preference or convention for promotion, citing the episodes that support
        it: the proposal waits in the review queue (never in force)."""
        return self._send(
            Call(
                "POST",
                "/promotions",
                json={"memory": int(memory), "episodes": [int(e) for e in episodes], "reason": reason},
                parse=t.Memory.from_dict,
            )
        )


class Grants(_Resource):
    def list(self, *, scope: str | None = None) -> list[t.Grant]:
        return self._send(
            Call(
                "GET",
                "/grants",
                params=clean({"scope": scope}),
                parse=lambda d: [t.Grant.from_dict(g) for g in d],
            )
        )

    def add(self, *, principal: str, scope: str, role: str) -> t.Grant:
        return self._send(
            Call(
                "POST",
                "/grants",
                json={"principal": principal, "scope": scope, "role": role},
                parse=t.Grant.from_dict,
            )
        )

    def revoke(self, grant_id: int, *, reason: str) -> None:
        """Take a grant away; the reason is required (kept in the audit event; an empty one is a 400)."""
        return self._send(Call("DELETE", f"/grants/{int(grant_id)}", json={"reason": reason}))


class Tokens(_Resource):
    def issue(
        self, *, principal: str, scope: str, role: str = "agent", expires_at: datetime | str | None = None
    ) -> t.IssuedToken:
        """A new token for a principal, bound to `scope`'s subtree and at most `role` (and never more than
        the principal's grants); the raw token is shown once."""
        return self._send(
            Call(
                "POST",
                "/tokens",
                json=clean(
                    {"principal": principal, "scope": scope, "role": role, "expires_at": _iso(expires_at)}
                ),
                parse=t.IssuedToken.from_dict,
            )
        )

    def list(self, *, active: bool = False) -> list[t.TokenInfo]:
        """Tokens the caller may revoke: its own, and those bound inside a subtree it owns."""
        return self._send(
            Call(
                "GET",
                "/tokens",
                params={"active": "1"} if active else None,
                parse=lambda d: [t.TokenInfo.from_dict(x) for x in d],
            )
        )

    def revoke(self, token_id: int, *, reason: str) -> None:
        """Revoke a token; the reason is required (kept in the audit event; an empty one is a 400)."""
        return self._send(Call("DELETE", f"/tokens/{int(token_id)}", json={"reason": reason}))


class Webhooks(_Resource):
    """A workspace's outbound events; owners of the whole workspace only (docs/webhooks.md)."""

    def list(self, *, workspace: str | None = None) -> list[t.Webhook]:
        return self._send(
            Call(
                "GET",
                "/webhooks",
                params=clean({"workspace": workspace}),
                parse=lambda d: [t.Webhook.from_dict(w) for w in d],
            )
        )

    def create(
        self, *, workspace: str, url: str, event_types: list[str], description: str = "", active: bool = True
    ) -> t.Webhook:
        """Subscribe `url`; the result's `secret` signs every request and is shown only now."""
        return self._send(
            Call(
                "POST",
                "/webhooks",
                json={
                    "workspace": workspace,
                    "url": url,
                    "event_types": list(event_types),
                    "description": description,
                    "active": active,
                },
                parse=t.Webhook.from_dict,
            )
        )

    def get(self, webhook_id: int) -> t.Webhook:
        return self._send(Call("GET", f"/webhooks/{int(webhook_id)}", parse=t.Webhook.from_dict))

    def update(
        self,
        webhook_id: int,
        *,
        url: str | None = None,
        event_types: list[str] | None = None,
        description: str | None = None,
        active: bool | None = None,
    ) -> t.Webhook:
        body = clean({"url": url, "event_types": event_types, "description": description, "active": active})
        return self._send(Call("PATCH", f"/webhooks/{int(webhook_id)}", json=body, parse=t.Webhook.from_dict))

    def delete(self, webhook_id: int) -> None:
        return self._send(Call("DELETE", f"/webhooks/{int(webhook_id)}"))

    def rotate_secret(self, webhook_id: int) -> t.Webhook:
        return self._send(
            Call("POST", f"/webhooks/{int(webhook_id)}/rotate-secret", parse=t.Webhook.from_dict)
        )

    def deliveries(self, webhook_id: int, *, state: str | None = None) -> list[t.WebhookDelivery]:
        """The newest 100 deliveries, of one state (pending, delivered, failed) or all."""
        return self._send(
            Call(
                "GET",
                f"/webhooks/{int(webhook_id)}/deliveries",
                params=clean({"state": state}),
                parse=lambda d: [t.WebhookDelivery.from_dict(x) for x in d],
            )
        )

    def redeliver(self, delivery_id: int) -> t.WebhookDelivery:
        return self._send(
            Call(
                "POST",
                f"/webhooks/deliveries/{int(delivery_id)}/redeliver",
                parse=t.WebhookDelivery.from_dict,
            )
        )


class _Sender:
    """The operations that are not a resource's, and the resources themselves."""

    settings: Settings

    def _setup(self) -> None:
        self.memories = Memories(self)
        self.events = Events(self)
        self.turns = Turns(self)
        self.scopes = Scopes(self)
        self.review = Review(self)
        self.relations = Relations(self)
        self.promotions = Promotions(self)
        self.grants = Grants(self)
        self.tokens = Tokens(self)
        self.webhooks = Webhooks(self)

    def _send(self, call: Call) -> Any:  # pragma: no cover - defined by the two clients
        raise NotImplementedError

    def recall(
        self,
        *,
        scope: str,
        query: str,
        k: int | None = None,
        strategy: str | None = None,
        as_of: datetime | str | None = None,
    ) -> list[t.RecallHit]:
        """The k best memories for `query` in `scope` and its ancestors (candidates with their status)."""
        body = clean({"scope": scope, "query": query, "k": k, "strategy": strategy, "as_of": _iso(as_of)})
        return self._send(
            Call(
                "POST", "/recall", json=body, parse=lambda d: [t.RecallHit.from_dict(h) for h in d["results"]]
            )
        )

    def context(
        self,
        *,
        scope: str,
        query: str,
        budget_tokens: int = 1000,
        task: dict | str | None = None,
        session: str | None = None,
        strategy: str | None = None,
        as_of: datetime | str | None = None,
    ) -> t.Context:
        """The context packet for this turn, within `budget_tokens` (stored as a turn). `task` is a goal
        string or {"goal", "state"?, "type"?}. Raises PinnedOverBudget when the pinned blocks do not fit."""
        if isinstance(task, str):
            task = {"goal": task}
        body = clean(
            {
                "scope": scope,
                "query": query,
                "budget_tokens": budget_tokens,
                "task": task,
                "session": session,
                "strategy": strategy,
                "as_of": _iso(as_of),
            }
        )
        return self._send(Call("POST", "/context", json=body, parse=t.Context.from_dict))


class Client(_Sender):
    """Synchronous client. `url` and `token` default to MEMGOV_URL and MEMGOV_TOKEN; 429 and 503
    answers are retried up to `max_retries` times, waiting what Retry-After says (else backing off). Each
    write carries a fresh Idempotency-Key, the same on its retries (`idempotency_keys=False`: none)."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float | None = None,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        idempotency_keys: bool = True,
    ):
        self.settings = Settings.resolve(
            url,
            token,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_backoff=max_backoff,
            idempotency_keys=idempotency_keys,
        )
        self._http = httpx.Client(
            base_url=self.settings.base_url,
            headers=self.settings.headers(),
            timeout=self.settings.timeout,
            transport=transport,
        )
        self._setup()

    def _send(self, call: Call) -> Any:
        attempt = 0
        headers = call_headers(call, self.settings)
        while True:
            try:
                response = self._http.request(
                    call.method,
                    self.settings.base_url + call.path,
                    json=call.json,
                    params=call.params,
                    data=call.data,
                    files=call.files,
                    headers=headers,
                )
            except _RETRYABLE_TRANSPORT as exc:
                if attempt >= self.settings.max_retries:
                    raise APIConnectionError(f"Could not reach {self.settings.base_url}: {exc}") from exc
                time.sleep(self.settings.retry_wait(None, attempt))
                attempt += 1
                continue
            except httpx.TimeoutException as exc:
                raise APIConnectionError(
                    f"No answer within {self.settings.timeout}s: {exc}", timeout=True
                ) from exc
            except httpx.TransportError as exc:
                raise APIConnectionError(f"Connection to {self.settings.base_url} failed: {exc}") from exc
            if should_retry(response, attempt, self.settings):
                time.sleep(self.settings.retry_wait(response, attempt))
                attempt += 1
                continue
            return read(response, call)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(_Sender):
    """Asynchronous client: the same methods as `Client`, awaited."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float | None = None,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        idempotency_keys: bool = True,
    ):
        self.settings = Settings.resolve(
            url,
            token,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_backoff=max_backoff,
            idempotency_keys=idempotency_keys,
        )
        self._http = httpx.AsyncClient(
            base_url=self.settings.base_url,
            headers=self.settings.headers(),
            timeout=self.settings.timeout,
            transport=transport,
        )
        self._setup()

    async def _send(self, call: Call) -> Any:
        attempt = 0
        headers = call_headers(call, self.settings)
        while True:
            try:
                response = await self._http.request(
                    call.method,
                    self.settings.base_url + call.path,
                    json=call.json,
                    params=call.params,
                    data=call.data,
                    files=call.files,
                    headers=headers,
                )
            except _RETRYABLE_TRANSPORT as exc:
                if attempt >= self.settings.max_retries:
                    raise APIConnectionError(f"Could not reach {self.settings.base_url}: {exc}") from exc
                await asyncio.sleep(self.settings.retry_wait(None, attempt))
                attempt += 1
                continue
            except httpx.TimeoutException as exc:
                raise APIConnectionError(
                    f"No answer within {self.settings.timeout}s: {exc}", timeout=True
                ) from exc
            except httpx.TransportError as exc:
                raise APIConnectionError(f"Connection to {self.settings.base_url} failed: {exc}") from exc
            if should_retry(response, attempt, self.settings):
                await asyncio.sleep(self.settings.retry_wait(response, attempt))
                attempt += 1
                continue
            return read(response, call)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
