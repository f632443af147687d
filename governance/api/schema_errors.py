"""The error answers every API operation can give, added to the OpenAPI schema in one place (a
drf-spectacular post-processing hook) rather than repeated on each view: authentication (401), the
permission module (403), objects outside the caller's scopes (404), bad input (400), throttling (429),
and for operations with a body the size limit (413), a body that is not JSON (415) and conflicts (409).
All have the shape of governance/api/errors.py."""

from __future__ import annotations

ERROR_SCHEMA = {
    "type": "object",
    "description": "The API's one error shape: a machine-readable code, a sentence, and details for some codes.",
    "properties": {
        "error": {"type": "string", "description": "machine-readable code, e.g. invalid_input, throttled"},
        "message": {"type": "string", "description": "what went wrong, for a person"},
    },
    "required": ["error", "message"],
}
ALWAYS = {
    "400": "Invalid input (query, path or body).",
    "401": "No valid token: send `Authorization: Token <key>`.",
    "403": "The caller's grants do not allow this.",
    "404": "No such object in the scopes the caller can see.",
    "429": "Too many requests for this token; retry after `Retry-After` seconds.",
}
WITH_BODY = {
    "409": "Conflicts with the current state (a status change that is not allowed, a newer revision…).",
    "413": "The request body is over the size limit.",
    "415": "The request body is not JSON.",
}


def add_error_responses(result, generator, request, public):
    result.setdefault("components", {}).setdefault("schemas", {})["ApiError"] = ERROR_SCHEMA
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/ApiError"}}}
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            codes = dict(ALWAYS)
            if method in ("post", "put", "patch", "delete"):
                codes["409"] = WITH_BODY["409"]
            if "requestBody" in operation:
                codes.update(WITH_BODY)
            for code, description in codes.items():
                operation["responses"].setdefault(code, {"description": description, "content": ref})
    return result
