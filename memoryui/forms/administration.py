"""Forms of the administration pages (memoryui/views/administration.py): one class per action."""

from __future__ import annotations

from django import forms

from governance.errors import InvalidInput
from governance.models import Role
from governance.services.invitation import BAD_DAYS, MAX_DAYS, NOTE_TOO_LONG

UNKNOWN_SCOPE = "Choose one of the scopes listed."
BAD_ROLE = f"role must be one of: {', '.join(Role.values)}."


class InvitationForm(forms.Form):
    """Create an invitation link: for whom (a note for the records), which role, on which scope, how long."""

    invite_scope = forms.CharField(max_length=512, error_messages={"required": UNKNOWN_SCOPE})
    role = forms.ChoiceField(
        choices=Role.choices, error_messages={"required": BAD_ROLE, "invalid_choice": BAD_ROLE}
    )
    note = forms.CharField(max_length=200, required=False, error_messages={"max_length": NOTE_TOO_LONG})
    days = forms.IntegerField(
        min_value=1,
        max_value=MAX_DAYS,
        initial=7,
        error_messages={k: BAD_DAYS for k in ("required", "invalid", "min_value", "max_value")},
    )

    def clean_note(self) -> str:
        return self.cleaned_data["note"].strip()

    def error(self) -> InvalidInput:
        """The first refusal as the domain's 400 (its sentence and the field it names)."""
        name, errors = next(iter(self.errors.items()))
        return InvalidInput(str(errors[0]), field=name)
