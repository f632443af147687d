"""The `Idempotency-Key` header on API writes (POST, PUT, PATCH, DELETE under /api/v1/): the middleware
that runs a keyed write and its key row in one transaction. The rule itself lives in
governance/services/idempotency.py; docs/api.md, "Idempotency keys", says what a client sees.

A middleware rather than a view mixin: the write, the key row and the answer must commit together, so the
transaction has to open before the view runs and close after its answer is rendered; and every API view
gets it without being written for it. Without the header a request runs exactly as before."""

from __future__ import annotations

import logging
from io import BytesIO

from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError, transaction
from django.http import HttpResponse, JsonResponse
from rest_framework import exceptions

from governance.api.errors import SERVICE_UNAVAILABLE, SERVICE_UNAVAILABLE_RETRY_AFTER
from governance.errors import DomainError
from governance.runtime import dbretry
from governance.services import idempotency as keys

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
API_PREFIX = "/api/v1/"
REPLAYED = {keys.REPLAYED_HEADER: "true"}

logger = logging.getLogger(__name__)


def applies(request) -> bool:
    return request.method in WRITE_METHODS and request.path.startswith(API_PREFIX)


def key_owner(request):
    """(principal, token) the key belongs to: the API token's, or the signed-in person's (no token); None
    when the request is not authenticated (the view answers 401 itself)."""
    from governance.api.auth import TokenAuthentication
    from governance.services.principal import principal_for_user

    try:
        result = TokenAuthentication().authenticate(request)
    except exceptions.AuthenticationFailed:
        return None
    if result is not None:
        return result[1].principal, result[1]  # the token's principal, bound to what it was issued for
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return principal_for_user(user), None
    return None


def request_body(request) -> bytes:
    """The body, read once and kept for the view. An import's file may be larger than the form limit that
    `request.body` applies (RequestBodyLimitMiddleware has already bounded it by its route's limit): it is
    read the same way, without that limit."""
    try:
        return request.body
    except RequestDataTooBig:
        body = request.read()
        request._body, request._stream = body, BytesIO(body)  # what HttpRequest.body keeps
        return body


def _error(exc: DomainError) -> JsonResponse:
    return JsonResponse(exc.as_dict(), status=exc.status)


class IdempotencyKeyMiddleware:
    """A keyed API write: claim the key in a new transaction, run the view inside it, store its answer (or
    roll everything back on a 5xx), commit. A repeat gets the stored answer with `Idempotent-Replayed:
    true`. Placed after the authentication middleware (a signed-in person's key) and inside
    DroppedConnectionRetryMiddleware, which may run a keyed write again whose commit's outcome the lost
    connection left unknown: its second run replays the answer if the first committed."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        raw = request.headers.get(keys.HEADER)
        if raw is None or not applies(request):
            return self.get_response(request)
        try:
            key = keys.key_clean(raw)
        except DomainError as exc:
            return _error(exc)
        owner = key_owner(request)
        if owner is None:
            return self.get_response(request)
        principal, token = owner
        fingerprint = keys.request_hash(
            method=request.method, path=request.get_full_path(), body=request_body(request)
        )
        try:
            with transaction.atomic():
                try:
                    claim = keys.key_claim(principal=principal, token=token, key=key, fingerprint=fingerprint)
                    if claim.replay is not None:
                        status, content_type, body = keys.answer_replay(
                            stored=claim.replay, principal=principal
                        )
                        return HttpResponse(body, status=status, content_type=content_type, headers=REPLAYED)
                except DomainError as exc:
                    return _error(exc)
                dbretry.keyed_write()
                response = self.get_response(request)
                if response.status_code >= 500:
                    transaction.set_rollback(True)  # a request either commits whole or changes nothing
                elif response.status_code in keys.NOT_KEPT or getattr(response, "streaming", False):
                    keys.key_release(claim=claim)
                else:
                    keys.answer_keep(
                        claim=claim,
                        status_code=response.status_code,
                        content_type=response.get("Content-Type", ""),
                        body=response.content,
                    )
                return response
        except (OperationalError, InterfaceError) as exc:
            # The key row, the write or its COMMIT met a lost connection: its outcome may be unknown. The
            # retry middleware runs the request once more (a committed first run is then replayed).
            dbretry.commit_failed(exc)
            logger.warning("a keyed write's transaction failed: %s", exc)
            return JsonResponse(
                {"error": "service_unavailable", "message": SERVICE_UNAVAILABLE},
                status=503,
                headers={"Retry-After": SERVICE_UNAVAILABLE_RETRY_AFTER},
            )
