"""Limits that keep a careless or hostile client's requests cheap: a JSON parser that refuses a body
over the size limit before reading it and a nesting depth over the limit before decoding it, and a
throttle per API token (or signed-in user) with separate rates for context/recall, other reads,
writes and governance. Settings: docs/operations.md, "Abuse limits"."""

from __future__ import annotations

import json
import re
import secrets

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache import cache as default_cache
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
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


# DRF's SimpleRateThrottle keeps each caller's request times as one pickled list in the cache: a GET and a
# SET per request, two round trips to Redis on every API call (and the list, up to the rate's count of
# floats, pickled both ways). The same sliding log as a sorted set, trimmed, counted and added to in one
# script: one round trip. Scores are the request times; members are made unique by a random suffix.
SLIDING_LOG = """
local key, now, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2] or ARGV[1]
if count >= limit then
  return {0, count, oldest}
end
redis.call('ZADD', key, now, ARGV[1] .. ':' .. ARGV[4])
redis.call('PEXPIRE', key, math.ceil(window * 1000))
return {1, count + 1, oldest}
"""
_scripts: dict[int, object] = {}  # the registered script per Redis client (one per cache connection pool)


def _sliding_log(cache):
    """The script bound to `cache`'s Redis, or None when the shared cache is not Redis."""
    if cache is default_cache:  # DRF's `cache`: the proxy of the current default cache
        cache = caches[DEFAULT_CACHE_ALIAS]
    if not isinstance(cache, RedisCache):
        return None, None
    client = cache._cache.get_client(write=True)
    script = _scripts.get(id(client.connection_pool))
    if script is None:
        script = _scripts[id(client.connection_pool)] = client.register_script(SLIDING_LOG)
    return script, client


class PrincipalRateThrottle(SimpleRateThrottle):
    """A rate per API token (a signed-in dashboard user: per user) and bucket, counted in the shared
    cache, so every web process sees the same counts; in this process while Redis is away. A 429 says
    when to retry (Retry-After). Counted as DRF counts (a sliding log of the last `duration` seconds),
    in Redis in one round trip (SLIDING_LOG)."""

    def __init__(self):  # the bucket, and so the rate, is known only per request (allow_request)
        self._logged: tuple[int, float] | None = None  # (requests in the window, the oldest one's time)

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
                allowed = self._allow_in_redis(request, view)
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

    def _allow_in_redis(self, request, view) -> bool:
        script, client = _sliding_log(self.cache)
        if script is None:
            return super().allow_request(request, view)
        self.key = self.get_cache_key(request, view)
        self.now = self.timer()
        allowed, count, oldest = script(
            # Not DRF's key: a process of the version before keeps its pickled list there.
            keys=[caches[DEFAULT_CACHE_ALIAS].make_and_validate_key(f"{self.key}:log")],
            args=[repr(self.now), self.duration, self.num_requests, secrets.token_hex(4)],
            client=client,
        )
        self._logged = (int(count), float(oldest))
        return bool(allowed)

    def wait(self):
        """Seconds until a request would be allowed again (DRF's estimate, from the same log)."""
        if self._logged is None:
            return super().wait()
        count, oldest = self._logged
        available = self.num_requests - count + 1
        if available <= 0:
            return None
        return (self.duration - (self.now - oldest)) / available

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
