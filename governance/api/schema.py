"""The OpenAPI schema's conventions in one place: every operation documents the one error body for the
4xx answers any request can get, and the `Authorization: Token <key>` scheme is declared so the docs
page can send it."""

from __future__ import annotations

from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from governance.api.errors import ErrorBody

# What any authenticated operation can answer besides its own statuses: bad input, no or unknown token,
# a role that does not allow it, an object outside the caller's scopes, too many requests, and the database
# or Redis briefly unreachable (503 service_unavailable with Retry-After, governance/api/errors.py).
COMMON_ERROR_STATUSES = ("400", "401", "403", "404", "429", "503")
# And for writes: the change contradicts the current state (409), the body is over MAX_REQUEST_BODY_BYTES
# (413, refused before it is read), the body is not JSON (415).
WRITE_ERROR_STATUSES = ("409", "413", "415")
# And for writes sent with an Idempotency-Key (governance/api/idempotency.py): the key already used for
# another request (422), an answer withdrawn because it held a memory since forgotten (410).
IDEMPOTENT_ERROR_STATUSES = ("410", "422")
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=False,
    description="A fresh unique key per write (a UUID; 1-255 visible ASCII characters). A repeat of the "
    "same request with the same key replays the first answer (with `Idempotent-Replayed: true`) and "
    "writes nothing; the same key with another request: 422 `idempotency_key_reused`; while the first "
    "is still running: it waits, then 409 `idempotency_key_in_use`. Keys last IDEMPOTENCY_KEY_TTL_HOURS "
    "(24 h) and belong to the principal and token that sent them (docs/api.md, \"Idempotency keys\").",
)
# What an operation lists itself in `responses` (the AutoSchema adds the rest).
ERROR_RESPONSES = {400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody}


class AutoSchema(openapi.AutoSchema):
    def get_override_parameters(self):
        parameters = list(super().get_override_parameters())
        if self.method in WRITE_METHODS:
            parameters.append(IDEMPOTENCY_KEY)
        return parameters

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        codes = COMMON_ERROR_STATUSES + (
            WRITE_ERROR_STATUSES + IDEMPOTENT_ERROR_STATUSES if self.method in WRITE_METHODS else ()
        )
        for code in codes:
            if code not in responses:
                responses[code] = self._get_response_for_code(ErrorBody, code, direction=direction)
        return responses


class TokenAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "governance.api.auth.TokenAuthentication"
    name = "TokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <key>`: a token from `manage.py create_token` or POST /api/v1/tokens.",
        }
