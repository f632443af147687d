"""The OpenAPI schema's conventions in one place: every operation documents the one error body for the
4xx answers any request can get, and the `Authorization: Token <key>` scheme is declared so the docs
page can send it."""

from __future__ import annotations

from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiAuthenticationExtension

from governance.api.errors import ErrorBody

# What any authenticated operation can answer besides its own statuses: bad input, no or unknown token,
# a role that does not allow it, an object outside the caller's scopes, too many requests, and the database
# or Redis briefly unreachable (503 service_unavailable with Retry-After, governance/api/errors.py).
COMMON_ERROR_STATUSES = ("400", "401", "403", "404", "429", "503")
# And for writes: the change contradicts the current state (409), the body is over MAX_REQUEST_BODY_BYTES
# (413, refused before it is read), the body is not JSON (415).
WRITE_ERROR_STATUSES = ("409", "413", "415")
# What an operation lists itself in `responses` (the AutoSchema adds the rest).
ERROR_RESPONSES = {400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody}


class AutoSchema(openapi.AutoSchema):
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        codes = COMMON_ERROR_STATUSES + (
            WRITE_ERROR_STATUSES if self.method in ("POST", "PUT", "PATCH", "DELETE") else ()
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
