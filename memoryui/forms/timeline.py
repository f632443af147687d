"""The timeline's query (memoryui/views/timeline.py): the period, how many memories, the ones picked and
the words that find them, checked before anything is looked up."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from memoryui.forms.inputs import BIGINT

PERIODS = {
    "1": "the last day",
    "7": "the last 7 days",
    "30": "the last 30 days",
    "90": "the last 90 days",
    "365": "the last year",
}
BAD_PERIOD = "days is one of 1, 7, 30, 90 or 365."
BAD_TOP = "top is a whole number from 1 to 50."
BAD_PICK = "m is a memory's number (a whole number); at most 50 of them."
MAX_PICKED = 50


class PickedField(forms.Field):
    """The memories picked on the timeline (`?m=<id>&m=<id>`): distinct, in order, blanks left out."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value) -> list[int]:
        raw = [v for v in (value or []) if v.strip()]
        if len(raw) > MAX_PICKED:
            raise ValidationError(BAD_PICK, code="too_many")
        try:
            picked = list(dict.fromkeys(int(v) for v in raw))
        except ValueError as exc:
            raise ValidationError(BAD_PICK, code="invalid") from exc
        if any(not 0 < pk < BIGINT for pk in picked):
            raise ValidationError(BAD_PICK, code="invalid")
        return picked


class TimelineForm(forms.Form):
    """The period (`days`), how many of the most activated memories (`top`), the picked ones (`m`) and
    the words that find memories to pick (`q`)."""

    days = forms.ChoiceField(
        required=False, choices=list(PERIODS.items()), error_messages={"invalid_choice": BAD_PERIOD}
    )
    top = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=50,
        error_messages={k: BAD_TOP for k in ("invalid", "min_value", "max_value")},
    )
    m = PickedField(required=False)
    q = forms.CharField(required=False)

    def clean_days(self) -> int:
        return int(self.cleaned_data["days"] or "30")

    def clean_top(self) -> int:
        top = self.cleaned_data["top"]
        return 12 if top is None else top

    def clean_q(self) -> str:
        return self.cleaned_data["q"][:200]
