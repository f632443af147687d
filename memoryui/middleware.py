"""Request limits that apply before any view runs."""

from __future__ import annotations

import logging
import re

from django.conf import settings
from django.http import HttpResponse, JsonResponse

from governance.api.limits import BODY_TOO_LARGE, declared_length
from governance.runtime.dbretry import Attempt

# Routes that take an export file (governance/api/portability/views.py, memoryui/views/portability.py).
UPLOAD_ROUTES = re.compile(r"^(/api/v1/scopes/\d+/import|/portability/import/)$")
# The dashboard's evaluation upload (memoryui/views/evaluation.py): files up to EVALUATION_UPLOAD_MAX_BYTES.
EVALUATION_UPLOAD_ROUTE = "/evaluation/upload/"
MULTIPART_ROOM = 64 * 1024

logger = logging.getLogger(__name__)


class RequestBodyLimitMiddleware:
    """Refuse a body whose declared length is over DATA_UPLOAD_MAX_MEMORY_SIZE with 413 before anything
    reads it (Django enforces that setting only for form data, and DRF not at all; file uploads, which
    nothing here takes, would otherwise stream to disk without a bound). API requests get the API's
    error shape. The upload routes of scope imports take files up to PORTABILITY_IMPORT_MAX_BYTES instead, the
    evaluation upload up to EVALUATION_UPLOAD_MAX_BYTES (what docs/evaluation.md says)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if UPLOAD_ROUTES.match(request.path):
            limit = settings.PORTABILITY_IMPORT_MAX_BYTES
        elif request.path == EVALUATION_UPLOAD_ROUTE:
            # The file's own limit (services.evaluation checks the file itself, with its own sentence),
            # and room for the form's other fields and the multipart boundaries.
            limit = settings.EVALUATION_UPLOAD_MAX_BYTES + MULTIPART_ROOM
        if limit is not None and declared_length(request.META) > limit:
            message = BODY_TOO_LARGE.format(limit=limit)
            if request.path.startswith("/api/"):
                return JsonResponse({"error": "request_too_large", "message": message}, status=413)
            return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


UNAVAILABLE_PAGE = "The service is briefly unavailable (its database or Redis could not be reached). Try again in a few seconds."


class ServiceUnavailableMiddleware:
    """A dashboard page whose database connection dropped or whose Redis was away while it rendered answers
    503 with Retry-After, like the API (governance/api/errors.py), instead of a 500 that reads as a bug.
    Seen under load with `bench_load --fault redis-restart`."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        from governance.api.errors import SERVICE_UNAVAILABLE, SERVICE_UNAVAILABLE_RETRY_AFTER, UNAVAILABLE

        if not isinstance(exception, UNAVAILABLE):
            return None
        if request.path.startswith("/api/"):
            response = JsonResponse(
                {"error": "service_unavailable", "message": SERVICE_UNAVAILABLE}, status=503
            )
        else:
            response = HttpResponse(UNAVAILABLE_PAGE, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = SERVICE_UNAVAILABLE_RETRY_AFTER
        return response


# --- One retry of a read whose database connection was dropped ----------------------------------------------
def may_run_twice(request) -> bool:
    """Every request but the file uploads (their bodies are too large to keep for a second attempt); whether
    it does run again is the database's answer (governance.runtime.dbretry): only when it committed nothing."""
    return not (UPLOAD_ROUTES.match(request.path) or request.path == EVALUATION_UPLOAD_ROUTE)


class DroppedConnectionRetryMiddleware:
    """A request whose database connection was dropped under it (a failover, a restarted pooler,
    `pg_terminate_backend`) runs once more on a fresh connection instead of answering 503, when running it
    again is exactly what its client would do (governance.runtime.dbretry decides): it committed nothing,
    or its write ran under an `Idempotency-Key`.

    Without a key, a request that committed a write, or sent one whose outcome the lost connection left
    unknown (a socket closed mid-statement, a failed COMMIT), is never run again here; it answers 503 and its
    client decides (docs/operations.md, "When Redis or the database fails"). So /context is run again unless
    its turn (its one write, its last statement) may be stored, and a write whose transaction the server cut
    is run again and stored once. With a key (governance/api/idempotency.py), the write and its key row
    commit together or not at all, so the second run replays the first's answer if it committed and writes
    once if it did not. One retry, never more: a database that is really gone answers the 503 of
    ServiceUnavailableMiddleware."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not may_run_twice(request):
            return self.get_response(request)
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            try:
                request.body  # noqa: B018 - read once and keep: the second attempt parses the same bytes
            except Exception:  # noqa: BLE001 - an unreadable body is the view's to answer, once
                return self.get_response(request)
        attempt = Attempt()
        response = self._run(request, attempt)
        if not attempt.may_retry or response.status_code < 500:
            return response
        from governance.runtime.metrics import DB_RETRIES

        _close_connections()
        response = self._run(request, Attempt())
        DB_RETRIES.labels(outcome=f"{response.status_code // 100}xx").inc()
        logger.warning(
            "database connection dropped under a request that had committed nothing (or wrote under an "
            "idempotency key); ran it again: %s",
            response.status_code,
        )
        return response

    def _run(self, request, attempt: Attempt):
        from contextlib import ExitStack

        from django.db import connections

        with ExitStack() as stack:
            stack.enter_context(attempt.tracking())
            for conn in connections.all():
                stack.enter_context(conn.execute_wrapper(attempt))
            return self.get_response(request)


def _close_connections() -> None:
    """Drop this thread's connections (the lost one and any other), so the retry opens fresh ones."""
    from django.db import connections

    for conn in connections.all(initialized_only=True):
        if conn.in_atomic_block:
            continue
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - it is already broken; the point is to forget it
            conn.connection = None
