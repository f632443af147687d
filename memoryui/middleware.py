"""Request limits that apply before any view runs."""

from __future__ import annotations

import re

from django.conf import settings
from django.http import HttpResponse, JsonResponse

from governance.api.limits import BODY_TOO_LARGE, declared_length

# Routes that take an export file (governance/api/portability/views.py, memoryui/views/portability.py).
UPLOAD_ROUTES = re.compile(r"^(/api/v1/scopes/\d+/import|/portability/import/)$")
# The dashboard's evaluation upload (memoryui/views/evaluation.py): files up to EVALUATION_UPLOAD_MAX_BYTES.
EVALUATION_UPLOAD_ROUTE = "/evaluation/upload/"
MULTIPART_ROOM = 64 * 1024


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
