"""Forms of the review queue's actions: what a decision reads from a POST, checked before any service is
asked. A bad value is an InvalidInput naming its field (a 400 with the field, as everywhere else); who may
decide and whether the item may still be decided is the services' and governance.permissions' answer."""

from __future__ import annotations

from django import forms

from governance.errors import InvalidInput
from governance.services.dispute import BAD_HOLDS, REASON_NEEDED

MAX_REASON = 2000
REASON_TOO_LONG = f"A reason is at most {MAX_REASON} characters."


def cleaned(form: forms.Form) -> dict:
    """The form's cleaned data, or an InvalidInput for its first error (the field in the form's order)."""
    if form.is_valid():
        return form.cleaned_data
    field = next(name for name in form.fields if name in form.errors)
    raise InvalidInput(str(form.errors[field][0]), field=field)


class DisputeConfirmForm(forms.Form):
    """Settle a dispute: the memory that holds (one of the two; the service checks which) and why."""

    holds = forms.IntegerField(error_messages={"required": BAD_HOLDS, "invalid": BAD_HOLDS})
    reason = forms.CharField(
        max_length=MAX_REASON,
        error_messages={"required": REASON_NEEDED, "max_length": REASON_TOO_LONG},
    )


class DisputeDismissForm(forms.Form):
    """Dismiss a dispute (the two do not disagree): an optional note."""

    reason = forms.CharField(
        max_length=MAX_REASON, required=False, error_messages={"max_length": REASON_TOO_LONG}
    )
