"""Dates a query names, as the spans of time they cover. rank.py moves the memories said within such a
span up: a question that names the day something was said ("What painting did Melanie show Caroline on
October 13, 2023?") is answered by a turn of that day, however many other days talk of paintings.

- Calendar dates with a year ("on October 13, 2023", "in July 2023", "on 1 February, 2023"; English month
  names, full or three-letter, day before or after the month): the day, or the whole month.
- Times relative to the asker's present (`now`: the request's time, or its `as_of` for a question asked
  in the past), read as a person means them, not to the minute:
  - "two months ago", "four weeks ago", "a couple of days ago": that far back, give or take half the unit
    (a day at least; a vague count, "a few", "a couple", "several", gives or takes a whole unit);
    with a weekday ("the Wednesday two months ago") the day of that name nearest to it;
  - "yesterday", "the day before yesterday", "last Saturday" (the last one before today): that day;
  - "last May", "in May", "in January and March": the last such month (before this one for "last", up
    to this one for "in"); "since March": from the last March until now;
  - "in the last month", "the past few months", "the last 3 weeks", "last week", "this month": from that
    far back until now (the last week read both ways, the previous calendar week and the past seven days).
  A span that asks for the number ("how many weeks ago …?") names none. Without `now`, none is read."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from dateutil.relativedelta import relativedelta

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_PATTERNS = (
    # 13 October 2023, 1 February, 2023
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
    # October 13, 2023
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    # July 2023, in October of 2023
    re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE),
)


# A day named without a time zone is the asker's day: in UTC it may begin up to this much earlier or end
# this much later.
DAY_SLACK = timedelta(hours=12)


_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
# Vague counts: the number a person means, and how far either side of it they may mean.
_VAGUE = {
    "a couple of": (2, 1.0),
    "couple of": (2, 1.0),
    "a few": (3, 1.5),
    "few": (3, 1.5),
    "several": (4, 2.0),
}
_COUNT = (
    "(?P<count>"
    + "|".join(sorted([*_VAGUE, *_NUMBERS], key=len, reverse=True)).replace(" ", r"\s+")
    + r"|\d{1,3})"
)
_UNIT = r"(?P<unit>day|week|month|year)s?"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = "(?P<weekday>" + "|".join(_WEEKDAYS) + ")"
_MONTH_ALONE = "|".join(n for n in _MONTHS if len(n) > 3 or n == "may")
_MONTH_NAME = f"(?P<month>{_MONTH_ALONE})"
_RELATIVE = (
    # two months ago, a couple of days ago (and "the Wednesday two months ago", a weekday before it)
    ("ago", re.compile(rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", re.IGNORECASE)),
    ("day_before_yesterday", re.compile(r"\bthe\s+day\s+before\s+yesterday\b", re.IGNORECASE)),
    ("yesterday", re.compile(r"\byesterday\b", re.IGNORECASE)),
    ("last_weekday", re.compile(rf"\b(?:last|this\s+past|past)\s+{_WEEKDAY}\b", re.IGNORECASE)),
    ("last_month_name", re.compile(rf"\blast\s+{_MONTH_NAME}\b", re.IGNORECASE)),
    # in May, during May and June, since March (from March until now)
    (
        "in_month_name",
        re.compile(
            rf"\b(?P<word>in|during|since)\s+{_MONTH_NAME}"
            rf"(?P<more>(?:\s*(?:,|,?\s*and|,?\s*or)\s+(?:{_MONTH_ALONE}))*)\b(?!\s+\d)",
            re.IGNORECASE,
        ),
    ),
    # the past few months, in the last 3 weeks, last week, over the past month
    (
        "past",
        re.compile(rf"\b(?:last|past|previous)\s+(?:{_COUNT}\s+)?{_UNIT}\b(?!\s+of\b)", re.IGNORECASE),
    ),
    ("this", re.compile(rf"\bthis\s+{_UNIT}\b", re.IGNORECASE)),
)
# The words each kind of relative time cannot be written without.
_NEEDS = {
    "ago": ("ago",),
    "day_before_yesterday": ("yesterday",),
    "yesterday": ("yesterday",),
    "last_weekday": ("last", "past"),
    "last_month_name": ("last",),
    "in_month_name": tuple(_MONTH_ALONE.split("|")),
    "past": ("last", "past", "previous"),
    "this": ("this",),
}
_WEEKDAY_NAMED = re.compile(rf"\b{_WEEKDAY}\b", re.IGNORECASE)


# The frame of a question that asks for a count or a length of time ("How many months ago did I …", "How
# many days had passed since …", "How long ago was …", "How many times has …"): its words say what kind of
# answer is wanted, not what the memory is about, and the memory never holds them ("I went to a 3-day
# photography workshop today").
_FRAME = re.compile(
    r"\bhow\s+(?:many|much|long)(?:\s+(?:days?|weeks?|months?|years?|hours?|minutes?|times?))?"
    r"(?:\s+(?:ago|before|after|earlier|later|since|(?:had|have|has)\s+passed|passed))?\b",
    re.IGNORECASE,
)


def frame(query: str) -> list[str]:
    """The text of the count-or-time frames the question is asked in (none for most questions)."""
    if "how" not in query.lower():
        return []
    return [m.group(0) for m in _FRAME.finditer(query)]


def spans_named(query: str, now: datetime | None = None) -> list[tuple[datetime, datetime]]:
    """[start, end) of every date the query names (a day widened by DAY_SLACK on each side, a month from
    its first day to the next month's, UTC); a day inside a month counts once, as the day. Relative times
    are read against `now` (none without it)."""
    spans: list[tuple[datetime, datetime]] = []
    taken: list[tuple[int, int]] = []

    def free(match) -> bool:
        if any(match.start() < end and start < match.end() for start, end in taken):
            return False
        taken.append((match.start(), match.end()))
        return True

    for pattern in _PATTERNS:
        for match in pattern.finditer(query):
            if not free(match):
                continue
            span = _span(match.groupdict())  # a day that does not exist is no month either
            if span is not None:
                spans.append(span)
    if now is None:
        return spans
    lowered = query.lower()
    for kind, pattern in _RELATIVE:
        if not any(word in lowered for word in _NEEDS[kind]):
            continue  # most questions name no relative time: a substring test spares the pattern
        for match in pattern.finditer(query):
            if free(match):
                spans.extend(_relative(kind, match, query, now))
    return list(dict.fromkeys(spans))  # "in May and May" is one span


def _back(now: datetime, unit: str, count: float) -> datetime:
    """`now` minus `count` units; months and years by the calendar (two months before 1 April is 1
    February), a fraction of one in days."""
    if unit in ("day", "week"):
        return now - timedelta(days=count * (7 if unit == "week" else 1))
    whole = int(count)
    back = now - relativedelta(**{f"{unit}s": whole})
    return back - timedelta(days=(count - whole) * (30.44 if unit == "month" else 365.25))


def _day(at: datetime) -> tuple[datetime, datetime]:
    start = at.replace(hour=0, minute=0, second=0, microsecond=0)
    return start - DAY_SLACK, start + timedelta(days=1) + DAY_SLACK


def _relative(kind: str, match: re.Match, query: str, now: datetime) -> list[tuple[datetime, datetime]]:
    if kind == "in_month_name":
        return _months_named(match, now)
    span = _relative_span(kind, match, query, now)
    return [] if span is None else [span]


def _months_named(match: re.Match, now: datetime) -> list[tuple[datetime, datetime]]:
    """ "in May", "in January and March": the last such months up to this one; "since March": from the
    last March until now."""
    now = now.astimezone(UTC)
    names = [match.group("month"), *re.findall(_MONTH_ALONE, match.group("more") or "", re.IGNORECASE)]
    spans = []
    for name in names:
        month = _MONTHS[name.lower()]
        span = _span({"year": now.year if month <= now.month else now.year - 1, "month": name, "day": None})
        if span is not None:
            spans.append(span)
    if match.group("word").lower() == "since" and spans:
        return [(spans[0][0], now + DAY_SLACK)]
    return spans


def _relative_span(kind: str, match: re.Match, query: str, now: datetime) -> tuple[datetime, datetime] | None:
    now = now.astimezone(UTC)
    parts = match.groupdict()
    if kind == "yesterday":
        return _day(now - timedelta(days=1))
    if kind == "day_before_yesterday":
        return _day(now - timedelta(days=2))
    if kind == "last_weekday":
        back = (now.weekday() - _WEEKDAYS.index(parts["weekday"].lower()) - 1) % 7 + 1
        return _day(now - timedelta(days=back))
    if kind == "last_month_name":
        month = _MONTHS[parts["month"].lower()]
        return _span(
            {"year": now.year if month < now.month else now.year - 1, "month": parts["month"], "day": None}
        )
    unit = parts["unit"].lower()
    if kind == "this":
        start = {
            "day": now.replace(hour=0, minute=0, second=0, microsecond=0),
            "week": now - timedelta(days=7),
            "month": now.replace(day=1, hour=0, minute=0, second=0, microsecond=0),
            "year": now.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0),
        }[unit]
        return start - DAY_SLACK, now + DAY_SLACK
    text = " ".join((parts.get("count") or "").lower().split())
    count, vague = _VAGUE.get(text, (None, 0.0))
    if count is None:
        count = _NUMBERS.get(text) or (int(text) if text.isdigit() else 1)
    if count < 1:
        return None
    if kind == "past":
        # From that far back until now; "last week" also as the whole previous calendar week.
        reach = count + vague + (1 if count == 1 and unit == "week" else 0)
        return _back(now, unit, reach) - DAY_SLACK, now + DAY_SLACK
    # "N units ago": that far back, give or take half the unit (a day at least), or a whole unit if vague.
    center = _back(now, unit, count)
    half = max(_back(now, unit, count - max(vague, 0.5)) - center, timedelta(days=1))
    weekday = _WEEKDAY_NAMED.search(query)
    if weekday and half >= timedelta(days=3):
        # "the Wednesday two months ago": the day of that name nearest to the time it points at.
        shift = (_WEEKDAYS.index(weekday.group("weekday").lower()) - center.weekday()) % 7
        return _day(center + timedelta(days=shift if shift <= 3 else shift - 7))
    return center - half, center + half


def _span(parts: dict) -> tuple[datetime, datetime] | None:
    year, month = int(parts["year"]), _MONTHS[str(parts["month"]).lower()]
    try:
        if parts.get("day"):
            start = datetime(year, month, int(parts["day"]), tzinfo=UTC)
            return start - DAY_SLACK, start + timedelta(days=1) + DAY_SLACK
        start = datetime(year, month, 1, tzinfo=UTC)
    except ValueError:  # 31 February
        return None
    end = datetime(year + 1, 1, 1, tzinfo=UTC) if month == 12 else datetime(year, month + 1, 1, tzinfo=UTC)
    return start, end


def within(at: datetime | None, spans: list[tuple[datetime, datetime]]) -> bool:
    return at is not None and any(start <= at < end for start, end in spans)
