"""The actions on memories from the dashboard: one memory's page (confirm, reject, supersede, retire,
forget) and the list's bulk action on the ticked rows or on every row its filters match. The reason an
ending needs, the actions a role may take and the bulk cap are the services' rules; what only a person
at a page does, ticking "cannot be undone", is checked here."""

from __future__ import annotations

from django import forms

from governance.services.memory_bulk import BULK_CAP, BULK_TOO_MANY
from memoryui.forms.inputs import IdListField, text

CONFIRM_IRREVERSIBLE = "This action cannot be undone: tick the box that says so to go ahead."
UNKNOWN_ACTION = "Unknown action."
REASON_TOO_LONG = "A reason is at most 2000 characters."
QUERY_TOO_LONG = "The list's filters are at most 4000 characters."
BULK_BAD_IDS = "Memory ids are whole numbers."
BULK_IRREVERSIBLE = "Retiring or forgetting cannot be undone: tick the box that says so to go ahead."
BULK_IRREVERSIBLE_ACTIONS = ("retire", "forget")
TICKED = [("", "not ticked"), ("yes", "ticked")]


def _ticked(message: str) -> forms.ChoiceField:
    return forms.ChoiceField(choices=TICKED, required=False, error_messages={"invalid_choice": message})


class MemoryActForm(forms.Form):
    """`actions`: the names the page offers; `irreversible`: those that need the tick."""

    action = forms.ChoiceField(error_messages={"required": UNKNOWN_ACTION, "invalid_choice": UNKNOWN_ACTION})
    reason = text(limit=2000, message=REASON_TOO_LONG)
    text = forms.CharField(required=False)  # a supersede's new text; its rules are memory_supersede's
    irreversible = _ticked(CONFIRM_IRREVERSIBLE)

    def __init__(self, *args, actions: list[str], irreversible: set[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["action"].choices = [(name, name) for name in actions]
        self.needs_tick = irreversible

    def clean(self):
        data = super().clean()
        if not self.errors and data["action"] in self.needs_tick and data["irreversible"] != "yes":
            self.add_error("irreversible", CONFIRM_IRREVERSIBLE)
        return data


class MemoryBulkForm(forms.Form):
    """The ticked rows (`ids`), or every row the list's filters match (`all=yes` with the list's `query`)."""

    action = text(limit=20, message=UNKNOWN_ACTION)  # which actions exist is memory_bulk_act's rule
    reason = text(limit=2000, message=REASON_TOO_LONG)
    query = text(limit=4000, message=QUERY_TOO_LONG)
    irreversible = _ticked(BULK_IRREVERSIBLE)
    all = _ticked("all is yes or empty.")
    ids = IdListField(message=BULK_BAD_IDS, required=False)

    def clean_ids(self) -> list[int]:
        ids = self.cleaned_data["ids"]
        if len(ids) > BULK_CAP:
            raise forms.ValidationError(BULK_TOO_MANY.format(cap=BULK_CAP))
        return ids

    def clean(self):
        data = super().clean()
        if not self.errors and data["action"] in BULK_IRREVERSIBLE_ACTIONS and data["irreversible"] != "yes":
            self.add_error("irreversible", BULK_IRREVERSIBLE)
        return data
