"""One exception per `error` code of the service's error body ({"error", "message", ...}).

Catch `MemgovError` for all of them, or a subclass for one case: `PinnedOverBudget` carries `needed` and
`budget`, `Throttled` carries `retry_after`, every error the parsed `body`."""

from __future__ import annotations

from typing import Any


class MemgovError(Exception):
    """An error answer from the service (or no answer at all: see APIConnectionError)."""

    code = "error"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        body: dict[str, Any] | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code or self.code
        self.body = body or {}

    def __str__(self) -> str:
        return f"{self.status} {self.code}: {self.message}" if self.status else self.message


class InvalidInput(MemgovError):
    """400: a field is missing, of the wrong type or out of range (`fields` says which)."""

    code = "invalid_input"

    @property
    def fields(self) -> dict[str, Any]:
        return self.body.get("fields", {})


class NotAuthenticated(MemgovError):
    """401: no token, or an unknown or revoked one."""

    code = "not_authenticated"


class Forbidden(MemgovError):
    """403: the token's roles here do not allow it; the message says which role does."""

    code = "permission_denied"


class NotFound(MemgovError):
    """404: no such object in the scopes this token can see (the service does not say which)."""

    code = "not_found"


class Conflict(MemgovError):
    """409: the write contradicts the current state."""

    code = "conflict"


class KeyRevisionConflict(Conflict):
    code = "key_revision_conflict"


class ActiveKeyExists(Conflict):
    code = "active_key_exists"


class InvalidTransition(Conflict):
    code = "invalid_transition"


class StaleRevision(Conflict):
    code = "stale_revision"


class FourEyesRequired(Conflict):
    code = "four_eyes_required"


class PinnedOverBudget(MemgovError):
    """422: the pinned blocks (task, constraints in force, pending tool calls) alone exceed the budget."""

    code = "pinned_over_budget"

    @property
    def needed(self) -> int | None:
        return self.body.get("needed")

    @property
    def budget(self) -> int | None:
        return self.body.get("budget")


class Throttled(MemgovError):
    """429, after the client's retries: too many requests."""

    code = "throttled"
    retry_after: float | None = None  # seconds, from the last answer's Retry-After header


class ServiceUnavailable(MemgovError):
    """503, after the client's retries."""

    code = "service_unavailable"


class ServerError(MemgovError):
    """Any other 5xx: a bug or an outage on the service side."""

    code = "server_error"


class APIConnectionError(MemgovError):
    """The service could not be reached, or did not answer in time (`timeout` is True then)."""

    code = "connection_error"

    def __init__(self, message: str, *, timeout: bool = False):
        super().__init__(message)
        self.timeout = timeout


_BY_CODE: dict[str, type[MemgovError]] = {
    cls.code: cls
    for cls in (
        InvalidInput,
        NotAuthenticated,
        Forbidden,
        NotFound,
        Conflict,
        KeyRevisionConflict,
        ActiveKeyExists,
        InvalidTransition,
        StaleRevision,
        FourEyesRequired,
        PinnedOverBudget,
        Throttled,
    )
}
_BY_STATUS: dict[int, type[MemgovError]] = {
    400: InvalidInput,
    401: NotAuthenticated,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: PinnedOverBudget,
    429: Throttled,
    503: ServiceUnavailable,
}
_BY_CODE["authentication_failed"] = NotAuthenticated


def error_for(status: int, body: Any) -> MemgovError:
    """The exception for an error answer: by its `error` code, else by its HTTP status."""
    data = body if isinstance(body, dict) else {}
    code = str(data.get("error") or "")
    message = str(data.get("message") or data.get("detail") or f"HTTP {status}")
    cls = _BY_CODE.get(code) or _BY_STATUS.get(status) or (ServerError if status >= 500 else MemgovError)
    return cls(message, status=status, code=code or None, body=data)
