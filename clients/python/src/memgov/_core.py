"""What the sync and async clients share: configuration from arguments or the environment, the request
each operation sends and how its answer is read, and the retry policy. Only sending differs."""

from __future__ import annotations

import email.utils
import os
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from memgov.errors import Throttled, error_for

DEFAULT_TIMEOUT = 30.0
RETRY_STATUSES = (429, 503)
USER_AGENT = "memgov-python/0.1"
MISSING_URL = "No service URL: pass url=... or set MEMGOV_URL (e.g. http://127.0.0.1:8000)."
MISSING_TOKEN = "No API token: pass token=... or set MEMGOV_TOKEN (see `manage.py create_token`)."


@dataclass(frozen=True)
class Call:
    """One API operation: what to send, and how to read a successful answer."""

    method: str
    path: str
    json: Any = None
    params: dict[str, Any] | None = None
    parse: Callable[[Any], Any] = lambda data: data
    # A multipart upload (form fields and files) instead of a JSON body: scope imports.
    data: dict[str, Any] | None = None
    files: dict[str, Any] | None = None
    # The answer is text, not JSON (a scope export, JSON lines): `parse` gets the text.
    text: bool = False
    # This write's Idempotency-Key (default: a fresh UUID per call when the client sends keys).
    idempotency_key: str | None = None


@dataclass(frozen=True)
class Settings:
    base_url: str
    # Out of the repr (a log line, a traceback's locals, a debugger's view): the token is the credential.
    token: str = field(repr=False)
    timeout: float
    max_retries: int
    backoff: float
    max_backoff: float
    idempotency_keys: bool = True

    @classmethod
    def resolve(
        cls,
        url: str | None,
        token: str | None,
        *,
        timeout: float | None,
        max_retries: int,
        backoff: float,
        max_backoff: float,
        idempotency_keys: bool = True,
    ) -> Settings:
        url = url or os.environ.get("MEMGOV_URL")
        token = token or os.environ.get("MEMGOV_TOKEN")
        if not url:
            raise ValueError(MISSING_URL)
        if not token:
            raise ValueError(MISSING_TOKEN)
        base = url.rstrip("/")
        if not base.endswith("/api/v1"):
            base += "/api/v1"
        if timeout is None:
            timeout = float(os.environ.get("MEMGOV_TIMEOUT", DEFAULT_TIMEOUT))
        return cls(
            base_url=base,
            token=token,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_backoff=max_backoff,
            idempotency_keys=idempotency_keys,
        )

    def headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Token {self.token}",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }

    def retry_wait(self, response: httpx.Response | None, attempt: int) -> float:
        """Seconds to wait before retry number `attempt` (0-based): the answer's Retry-After when it has
        one (capped at max_backoff), else exponential backoff with full jitter."""
        after = retry_after_seconds(response) if response is not None else None
        if after is not None:
            return min(after, self.max_backoff)
        return random.uniform(0, min(self.max_backoff, self.backoff * (2**attempt)))


def retry_after_seconds(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time()) if when else None


WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Reads sent as POST (their bodies are questions): no key, so the service answers them as reads (a replica
# may serve them; nothing is stored for a replay). A retried /context stores its turn again, as before.
POST_READS = frozenset({"/recall", "/context"})


def call_headers(call: Call, settings: Settings) -> dict[str, str]:
    """The headers of one call, the same on each of its retries: a write's Idempotency-Key, so a retried
    write that the service already stored is answered from its first run (docs/api.md)."""
    if call.method not in WRITE_METHODS or (call.path in POST_READS and not call.idempotency_key):
        return {}
    key = call.idempotency_key or (str(uuid.uuid4()) if settings.idempotency_keys else None)
    return {"Idempotency-Key": key} if key else {}


def should_retry(response: httpx.Response, attempt: int, settings: Settings) -> bool:
    return response.status_code in RETRY_STATUSES and attempt < settings.max_retries


def read(response: httpx.Response, call: Call) -> Any:
    """The parsed result of a successful answer, or the exception for an error answer."""
    if response.status_code >= 400:
        try:
            body = response.json()
        except ValueError:
            body = {"message": response.text[:500] or response.reason_phrase}
        error = error_for(response.status_code, body)
        if isinstance(error, Throttled):
            error.retry_after = retry_after_seconds(response)
        raise error
    if call.text:
        return call.parse(response.text)
    if response.status_code == 204 or not response.content:
        return call.parse(None)
    return call.parse(response.json())


def clean(params: dict[str, Any]) -> dict[str, Any]:
    """Drop the arguments left at None, so the service applies its own defaults."""
    return {k: v for k, v in params.items() if v is not None}
