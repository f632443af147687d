"""Arguments shared by the `context` and `recall` commands."""

from __future__ import annotations

import json

from django.core.management.base import CommandError
from django.utils.dateparse import parse_datetime

from governance.errors import DomainError
from governance.permissions import principal_by_name
from governance.recall import STRATEGIES


def add_common(parser) -> None:
    parser.add_argument("--scope", required=True)
    parser.add_argument("--query", required=True)
    parser.add_argument("--strategy", default="full", choices=list(STRATEGIES))
    parser.add_argument("--as-of", dest="as_of", default=None, help="ISO date-time with a time zone")
    parser.add_argument("--principal", default=None,
                        help="act as this principal (its grants apply); default: the system")
    parser.add_argument("--json", action="store_true", help="print what the API returns")


def parse_common(options) -> dict:
    as_of = None
    if options["as_of"]:
        as_of = parse_datetime(options["as_of"])
        if as_of is None or as_of.tzinfo is None:
            raise CommandError("--as-of is an ISO date-time with a time zone, e.g. 2026-01-05T10:00:00Z")
    principal = None
    if options["principal"]:
        principal = principal_by_name(None, options["principal"],
                                      missing=CommandError(f"no principal named {options['principal']!r}"))
    return {"principal": principal, "scope": options["scope"], "query": options["query"],
            "strategy": options["strategy"], "as_of": as_of}


def run(fn, **kwargs):
    try:
        return fn(**kwargs)
    except DomainError as exc:
        raise CommandError(json.dumps(exc.as_dict(), ensure_ascii=False)) from exc
