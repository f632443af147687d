"""One error shape for the whole API: {"error": code, "message": sentence, ...details}, never a 500 for
bad input. DomainError subclasses carry their own code and status. ErrorBody describes that shape for
the OpenAPI schema and the clients."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404
from drf_spectacular.utils import extend_schema_field
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from governance.errors import DomainError

VALIDATION_MESSAGE = "Some fields are missing or invalid; see `fields`."
SERVICE_UNAVAILABLE = (
    "The database or Redis could not be reached; nothing was changed unless the request was a "
    "write whose commit was under way. Try again shortly."
)
SERVICE_UNAVAILABLE_RETRY_AFTER = "5"
# A dropped database connection (failover, restart) or Redis away (throttles, cache): the service is briefly
# unavailable, which is a 503 the client may retry, not a 500 that reads as a bug.
UNAVAILABLE = (OperationalError, InterfaceError, RedisConnectionError, RedisTimeoutError)

ERROR_CODES = (
    "invalid_input",
    "not_authenticated",
    "authentication_failed",
    "permission_denied",
    "not_found",
    "method_not_allowed",
    "parse_error",
    "unsupported_media_type",
    "throttled",
    "conflict",
    "key_revision_conflict",
    "active_key_exists",
    "invalid_transition",
    "stale_revision",
    "four_eyes_required",
    "pinned_over_budget",
    "nesting_too_deep",
    "request_too_large",
    "promotion_text_forgotten",
    "last_owner",
    "scope_archived",
    "invitation_invalid",
    "bad_import_file",
    "import_too_large",
    "service_unavailable",
    "idempotency_key_invalid",
    "idempotency_key_reused",
    "idempotency_key_in_use",
    "idempotent_answer_withdrawn",
)


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {
            "oneOf": [
                {"type": "array", "items": {"type": "string"}},
                {"type": "object", "additionalProperties": True},
            ]
        },
    }
)
class FieldErrors(serializers.DictField):
    """{field: [problems]}; a nested input's field maps to the same shape one level down."""


class ErrorBody(serializers.Serializer):
    """Every 4xx answer: a stable machine-readable `error` code and a sentence for a person."""

    error = serializers.CharField(help_text="Stable code, one of: " + ", ".join(ERROR_CODES) + ".")
    message = serializers.CharField(help_text="What went wrong and what to do, for a person.")
    fields = FieldErrors(
        required=False,
        help_text="invalid_input only: the field names with their problems (nested for nested input).",
    )
    action = serializers.CharField(
        required=False, help_text="permission_denied: the action that was refused."
    )
    needed = serializers.IntegerField(
        required=False, help_text="pinned_over_budget: tokens the pinned blocks need."
    )
    budget = serializers.IntegerField(
        required=False, help_text="pinned_over_budget: the budget that was asked for."
    )


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        return Response(exc.as_dict(), status=exc.status)
    if isinstance(exc, DjangoValidationError):
        return Response({"error": "invalid_input", "message": " ".join(exc.messages)}, status=400)
    if isinstance(exc, UNAVAILABLE):
        return Response(
            {"error": "service_unavailable", "message": SERVICE_UNAVAILABLE},
            status=503,
            headers={"Retry-After": SERVICE_UNAVAILABLE_RETRY_AFTER},
        )
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
