"""Dates a query names ("on October 13, 2023", "in July 2023", "on 1 February, 2023"), as the spans of
time they cover: a day, or a whole month. rank.py moves the memories said within such a span up: a
question that names the day something was said ("What painting did Melanie show Caroline on October 13,
2023?") is answered by a turn of that day, however many other days talk of paintings.

Only explicit calendar dates with a year (English month names, full or three-letter, day before or after
the month): a bare "May" or "last week" says too little to read without the asker's present."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

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


def spans_named(query: str) -> list[tuple[datetime, datetime]]:
    """[start, end) of every calendar date the query names (a day widened by DAY_SLACK on each side, a
    month from its first day to the next month's, UTC); a day inside a month counts once, as the day."""
    spans: list[tuple[datetime, datetime]] = []
    taken: list[tuple[int, int]] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(query):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            span = _span(match.groupdict())
            taken.append((match.start(), match.end()))  # a day that does not exist is no month either
            if span is not None:
                spans.append(span)
    return spans


def _span(parts: dict) -> tuple[datetime, datetime] | None:
    year, month = int(parts["year"]), _MONTHS[parts["month"].lower()]
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
