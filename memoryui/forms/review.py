"""Forms of the review queue's actions: what a decision reads from a POST, checked before any service is
asked. A bad value is an InvalidInput naming its field (a 400 with the field, as everywhere else); who may
decide and whether the item may still be decided is the services' and governance.permissions' answer."""

from __future__ import annotations

from django import forms

from governance.errors import DomainError
from governance.selectors.review import QueueFilter
from governance.services.dispute import BAD_HOLDS, REASON_NEEDED
from memoryui.forms.inputs import IdListField, TickField, given
from memoryui.forms.memory_actions import CONFIRM_IRREVERSIBLE

MAX_REASON = 2000
REASON_TOO_LONG = f"A reason is at most {MAX_REASON} characters."
NOTHING_SELECTED = "Select at least one item of the queue."
BAD_DECISION = "decision is confirm or reject."
BAD_ITEM_DECISION = "decision is confirm, reject, edit or repropose."
BAD_DISPUTE_DECISION = "decision is confirm or dismiss."
BAD_ID = "Memory ids are whole numbers."
FILTER_PARAMS = ("scope", "kind", "proposer", "older", "newer", "sort")


def _reason(**kwargs) -> forms.CharField:
    return forms.CharField(
        max_length=MAX_REASON, required=False, error_messages={"max_length": REASON_TOO_LONG}, **kwargs
    )


def _decision(choices: tuple[str, ...], message: str) -> forms.ChoiceField:
    return forms.ChoiceField(
        choices=[(c, c) for c in choices], error_messages={"required": message, "invalid_choice": message}
    )


class ReviewQueueForm(forms.Form):
    """The queue's query: its filters and the two lists' cursors, read by QueueFilter.parse (which names a
    bad value: a 400, never a filter dropped). `filters` in cleaned_data; each value too, as given, for the
    links that keep them."""

    scope = forms.Field(required=False)  # the focused scope (views.base reads it): kept on the links
    kind = forms.CharField(required=False, strip=False)
    proposer = forms.CharField(required=False, strip=False)
    older = forms.CharField(required=False, strip=False)
    newer = forms.CharField(required=False, strip=False)
    sort = forms.CharField(required=False, strip=False)
    after = forms.CharField(required=False, strip=False)
    disputes_after = forms.CharField(required=False, strip=False)

    def clean(self):
        data = super().clean()
        if not self.errors:
            try:
                data["filters"] = QueueFilter.parse(data)
            except DomainError as exc:
                self.add_error(exc.extra.get("field"), exc.message)
        return data


class QueueBackForm(forms.Form):
    """Where a decision returns to: the queue's query string it was made under (`back`). A plain Field:
    read after the decision is applied, it never refuses (a bad one is the queue without filters)."""

    back = forms.Field(required=False)

    def clean_back(self) -> str:
        back = self.cleaned_data["back"] or ""
        return back if "\n" not in back and "\x00" not in back else ""


class ReviewActForm(forms.Form):
    """One decision for every selected item, with one reason; a reject is ticked as irreversible."""

    memory = IdListField(message=BAD_ID, error_messages={"required": NOTHING_SELECTED})
    decision = _decision(("confirm", "reject"), BAD_DECISION)
    irreversible = TickField(value="yes")
    reason = _reason()

    def clean(self):
        data = super().clean()
        if data.get("decision") == "reject" and not data.get("irreversible"):
            self.add_error("irreversible", CONFIRM_IRREVERSIBLE)
        if "memory" in data:
            data["memory"] = sorted(data["memory"])
        return data


class ReviewDecideForm(forms.Form):
    """One item's decision; for an edit, the edited text, key and kind (the service checks them)."""

    decision = _decision(("confirm", "reject", "edit", "repropose"), BAD_ITEM_DECISION)
    reason = _reason()
    text = given()
    key = given()
    kind = given()


class DisputeDecisionForm(forms.Form):
    """Which decision a dispute's form sent; its own form (below) reads the rest."""

    decision = _decision(("confirm", "dismiss"), BAD_DISPUTE_DECISION)


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
