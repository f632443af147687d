"""One error shape for the whole API: {"error": code, "message": sentence, ...details}, never a 500 for
bad input. DomainError subclasses carry their own code and status."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from governance.errors import DomainError

VALIDATION_MESSAGE = "Some fields are missing or invalid; see `fields`."


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        return Response(exc.as_dict(), status=exc.status)
    if isinstance(exc, DjangoValidationError):
        return Response({"error": "invalid_input", "message": " ".join(exc.messages)}, status=400)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        response.data = {"error": "invalid_input", "message": VALIDATION_MESSAGE, "fields": response.data}
    elif isinstance(exc, Http404 | exceptions.NotFound):
        response.data = {"error": "not_found", "message": "No such object in the scopes you can see."}
    elif isinstance(exc, exceptions.APIException):
        code = exc.get_codes() if isinstance(exc.get_codes(), str) else "error"
        response.data = {"error": code, "message": str(exc.detail)}
    if response.status_code == status.HTTP_401_UNAUTHORIZED:
        if isinstance(exc, exceptions.AuthenticationFailed):  # a token was sent: say what is wrong with it
            response.data = {"error": "authentication_failed", "message": str(exc.detail)}
        else:
            response.data = {"error": "not_authenticated", "message": "Send `Authorization: Token <key>`."}
    return response
