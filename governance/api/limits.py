"""Limits that keep a careless or hostile client's requests cheap: a JSON parser that refuses a body
over the size limit before reading it and a nesting depth over the limit before decoding it, and a
throttle per API token (or signed-in user) with separate rates for context/recall, other reads,
writes and governance. Settings: docs/operations.md, "Abuse limits"."""

from __future__ import annotations

import json
import re

from django.conf import settings
from django.core.cache.backends.locmem import LocMemCache
from rest_framework import exceptions, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from governance.runtime import degraded
from governance.runtime.metrics import THROTTLED
from governance.selectors.search import CappedPaginator

BODY_TOO_LARGE = "The request body is larger than the {limit} bytes this service accepts."
NESTING_TOO_DEEP = "The JSON body is nested more than {limit} levels deep."
INVALID_JSON = "The request body is not valid JSON."

# Strings may hold brackets; take them out first so only the structure is counted.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def body_limit() -> int:
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "request_too_large"

    def __init__(self, limit: int):
        super().__init__(BODY_TOO_LARGE.format(limit=limit), self.default_code)


class NestingTooDeep(exceptions.ParseError):
    default_code = "nesting_too_deep"

    def __init__(self, limit: int):
        super().__init__(NESTING_TOO_DEEP.format(limit=limit), self.default_code)


def declared_length(meta) -> int:
    try:
        return int(meta.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def json_depth_exceeds(text: str, limit: int) -> bool:
    """Whether the JSON text opens more than `limit` arrays/objects inside each other. Linear and
    without recursion, so it runs before json.loads, whose recursion a deep body would exhaust."""
    depth = 0
    for match in _BRACKET.finditer(_JSON_STRING.sub("", text)):
        if match.group(0) in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


class BoundedJSONParser(JSONParser):
    """JSON only, at most DATA_UPLOAD_MAX_MEMORY_SIZE bytes (checked on the declared length before any
    read, and again on what is read) and at most API_MAX_JSON_DEPTH levels of nesting."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = body_limit()
        request = (parser_context or {}).get("request")
        if request is not None and declared_length(request.META) > limit:
            raise RequestTooLarge(limit)
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise RequestTooLarge(limit)
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise exceptions.ParseError(INVALID_JSON) from exc
        depth = settings.API_MAX_JSON_DEPTH
        if json_depth_exceeds(text, depth):
            raise NestingTooDeep(depth)
        try:
            return json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            raise exceptions.ParseError(INVALID_JSON) from exc


def _reject_constant(name: str):
    # NaN and Infinity are not JSON; Python accepts them, PostgreSQL's jsonb does not.
    raise ValueError(f"{name} is not a JSON value")


# --- Throttling -------------------------------------------------------------------------------------

# A view names its bucket in `rate_bucket` when it has its own rate; the others count as reads or writes.
CONTEXT = "context"
GOVERNANCE = "governance"


def throttle_bucket(request, view) -> str:
    """Which rate applies: `context` (the per-turn recall and context packet), `governance` (what the
    governing people call: confirm, reject, retire, forget, review, grants, members, tokens, retention,
    summary, audit, outbox), `write` (other changes) or `read`."""
    bucket = getattr(view, "rate_bucket", None)
    if bucket:
        return bucket
    return "read" if request.method in ("GET", "HEAD", "OPTIONS") else "write"


# While Redis is away the counts are kept here, per process (governance/runtime/degraded.py): each web
# process then allows the full rate on its own, which is neither refusing every request nor letting every
# request through. /readyz (`throttle`) and `memory_degraded{part="throttle"}` say when it is so.
PER_PROCESS_COUNTS = LocMemCache(
    "throttle-per-process", {"TIMEOUT": None, "OPTIONS": {"MAX_ENTRIES": 100_000}}
)


class PrincipalRateThrottle(SimpleRateThrottle):
    """A rate per API token (a signed-in dashboard user: per user) and bucket, counted in the shared
    cache, so every web process sees the same counts; in this process while Redis is away. A 429 says
    when to retry (Retry-After)."""

    def __init__(self):  # the bucket, and so the rate, is known only per request (allow_request)
        pass

    def allow_request(self, request, view):
        self.scope = throttle_bucket(request, view)
        # Read the rates now rather than at import: settings (and tests) may change them.
        self.rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        allowed = None
        if degraded.THROTTLE.should_try():
            try:
                allowed = super().allow_request(request, view)
            except degraded.REDIS_DOWN as exc:
                degraded.THROTTLE.failed(exc)
            else:
                degraded.THROTTLE.succeeded()
        if allowed is None:
            self.cache = PER_PROCESS_COUNTS
            allowed = super().allow_request(request, view)
        if not allowed:
            THROTTLED.labels(bucket=self.scope).inc()
        return allowed

    def get_cache_key(self, request, view):
        token = getattr(request, "auth", None)
        if token is not None and getattr(token, "pk", None) is not None:
            ident = f"token-{token.pk}"
        elif request.user and request.user.is_authenticated and request.user.pk is not None:
            ident = f"user-{request.user.pk}"
        else:
            ident = f"ip-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}


# --- Bounded paging ---------------------------------------------------------------------------------


class CappedPagination(PageNumberPagination):
    """Page-number paging whose `count` stops at MEMORY_LIST_COUNT_CAP (`count_capped` then says more
    rows match): no list costs more than counting and skipping that many rows, whatever the table's size."""

    django_paginator_class = CappedPaginator

    def get_paginated_response(self, data):
        return Response(
            {
                "count": self.page.paginator.count,
                "count_capped": self.page.paginator.capped,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema):
        paginated = super().get_paginated_response_schema(schema)
        paginated["properties"]["count_capped"] = {
            "type": "boolean",
            "description": "More rows match than `count` says; narrow the filters to see them.",
        }
        paginated["required"] = sorted({*paginated.get("required", []), "count_capped"})
        return paginated
