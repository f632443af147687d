"""The one parser of dates and instants typed into a request (a query string, a form): a bad value is an
InvalidInput (400) naming the field, never a 500 and never ignored.

A day is kept to the years 1000 to 9998: filters turn `to=<day>` into "before the start of the next day"
in the viewer's time zone, and that next day (in any zone) must still be a date Python and PostgreSQL
can hold (`to=9999-12-31` overflowed)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from governance.errors import InvalidInput

BAD_DATE = "Dates are written YYYY-MM-DD (years 1000 to 9998)."
BAD_RANGE = "from is a day on or before to."
BAD_INSTANT = "Write a date and time, such as 2026-11-30T14:00."
FIRST_YEAR, LAST_YEAR = 1000, 9998


def parse_day(raw: str, field: str, message: str = BAD_DATE) -> date | None:
    """A day written YYYY-MM-DD, or None when `raw` is empty."""
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        day = date.fromisoformat(raw)
    except ValueError as exc:
        raise InvalidInput(message, field=field) from exc
    if not FIRST_YEAR <= day.year <= LAST_YEAR:
        raise InvalidInput(message, field=field)
    return day


def parse_instant(
    raw: str, field: str, message: str = BAD_INSTANT, *, aware: bool = False
) -> datetime | None:
    """An ISO 8601 date and time, or None when `raw` is empty. A naive one is taken in the current time
    zone (a browser's datetime-local field), unless `aware` asks for an offset (then it is refused)."""
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        when = parse_datetime(raw)  # None when badly written; ValueError for a well-written impossible one
    except ValueError as exc:
        raise InvalidInput(message, field=field) from exc
    if when is None or not FIRST_YEAR <= when.year <= LAST_YEAR:
        raise InvalidInput(message, field=field)
    if timezone.is_naive(when):
        if aware:
            raise InvalidInput(message, field=field)
        when = timezone.make_aware(when)
    return when


def day_start(day: date) -> datetime:
    """The first instant of `day` in the current time zone."""
    return timezone.make_aware(datetime.combine(day, time.min), timezone.get_current_timezone())


def day_end(day: date) -> datetime:
    """The first instant after `day` (the start of the next day) in the current time zone."""
    return day_start(day + timedelta(days=1))


def day_range(
    first: date | None, last: date | None, field: str = "from"
) -> tuple[datetime | None, datetime | None]:
    """Whole days `first` to `last`, both included, as [since, until): until is the start of the day after
    `last`. A range that ends before it starts is a 400."""
    if first and last and first > last:
        raise InvalidInput(BAD_RANGE, field=field)
    return (day_start(first) if first else None, day_end(last) if last else None)
