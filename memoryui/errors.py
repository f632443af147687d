"""Answers for URLs that match no route: under /api/ the API's JSON error shape (a client that sends a
malformed id, e.g. /api/v1/memories/-1, gets JSON like every other API answer), elsewhere Django's page."""

from __future__ import annotations

from django.http import JsonResponse
from django.views.defaults import page_not_found

NOT_FOUND = "No such object in the scopes you can see."  # the same sentence as governance/api/errors.py


def not_found(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse({"error": "not_found", "message": NOT_FOUND}, status=404)
    return page_not_found(request, exception)
