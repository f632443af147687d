"""The one date parser and the one cursor codec of request input (governance.runtime.dates / .cursor)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from django.utils import timezone

from governance.errors import InvalidInput
from governance.runtime import cursor as codec
from governance.runtime import dates


def test_a_day_is_parsed_or_refused_with_the_field_named():
    assert dates.parse_day("", "from") is None
    assert dates.parse_day(" 2026-05-01 ", "from") == date(2026, 5, 1)
    for bad in ("yesterday", "2026-13-01", "31/12/2026", "9999-12-31", "0001-01-01"):
        with pytest.raises(InvalidInput) as caught:
            dates.parse_day(bad, "to")
        assert caught.value.message == dates.BAD_DATE and caught.value.extra == {"field": "to"}


def test_the_last_day_accepted_still_has_a_day_after():
    last = dates.parse_day("9998-12-31", "to")
    since, until = dates.day_range(last, last)
    assert until - since == timedelta(days=1)
    with pytest.raises(InvalidInput) as caught:
        dates.day_range(date(2026, 5, 2), date(2026, 5, 1))
    assert caught.value.message == dates.BAD_RANGE


def test_an_instant_is_parsed_or_refused():
    assert dates.parse_instant("", "as_of") is None
    naive = dates.parse_instant("2026-11-30T14:00", "as_of")
    assert timezone.is_aware(naive)
    for bad in ("2026-02-30T10:00", "soon", "0001-01-01T00:00"):
        with pytest.raises(InvalidInput):
            dates.parse_instant(bad, "as_of")
    with pytest.raises(InvalidInput):
        dates.parse_instant("2026-11-30T14:00", "after", aware=True)  # a cursor's instant carries its offset


def test_a_cursor_comes_back_only_unchanged_and_for_its_own_list():
    made = codec.encode("audit", [42])
    assert codec.decode(made, "audit", "before") == [42]
    assert codec.decode("", "audit", "before") is None
    edited = made[:-1] + ("A" if made[-1] != "A" else "B")
    for bad, kind in ((made, "review"), (edited, "audit"), ("42", "audit"), ("x" * 1000, "audit")):
        with pytest.raises(InvalidInput) as caught:
            codec.decode(bad, kind, "before")
        assert caught.value.message == codec.BAD_CURSOR and caught.value.extra == {"field": "before"}
    for bad_id in (0, -3, True, "7", 2**63):
        with pytest.raises(InvalidInput):
            codec.id_of(bad_id, "before")
