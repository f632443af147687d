"""The turn pages' POST actions: "Try a query" (a dry-run packet) and "why not…?" for a memory of that packet.
Each form reads and checks the fields; the view resolves the scope and the memory through
governance.permissions (the one resolver per kind); a bad field is views.base.cleaned's 400."""

from __future__ import annotations

from django import forms

from governance.errors import DomainError
from governance.runtime import dates
from governance.selectors import dashboard as sel
from memoryui.forms.inputs import IdField, ParsedField

TRY_BAD_BUDGET = "budget is a whole number of tokens."
TRY_BAD_AS_OF = "as of is a date and time, such as 2026-11-30T14:00."
TRY_DEFAULT_BUDGET = 2000
BAD_MEMORY = "memory is a memory number, such as 42 or #42."
BAD_MODE = "mode is words or meaning."


BIGINT = 2**63  # a memory's id is a bigint: a larger number cannot name one (and must not reach SQL)


class TryQueryForm(forms.Form):
    """Assemble a packet for a typed query (nothing stored). The query and strategy are checked by the
    recall itself (governance.recall.packet), with its own sentences."""

    query = forms.CharField(required=False, strip=False)
    try_scope = forms.CharField(required=False)
    budget = forms.CharField(required=False)
    strategy = forms.CharField(required=False)
    as_of = forms.CharField(required=False)

    def clean_budget(self) -> int:
        raw = (self.cleaned_data.get("budget") or "").strip()
        try:
            return int(raw) if raw else TRY_DEFAULT_BUDGET
        except ValueError as exc:
            raise forms.ValidationError(TRY_BAD_BUDGET) from exc

    def clean_strategy(self) -> str:
        return self.cleaned_data.get("strategy") or "full"

    def clean_as_of(self):
        # the browser's datetime-local field is naive: the viewer's own zone
        try:
            return dates.parse_instant(self.cleaned_data.get("as_of", ""), "as_of", TRY_BAD_AS_OF)
        except DomainError as exc:
            raise forms.ValidationError(exc.message) from exc


class TryWhyNotForm(TryQueryForm):
    """Why not this memory, for the packet of the query tried (`memory`: a number, `#42` too), or the
    memories to pick from (`memory_q`: words or `#id`, found by `mode`: words or meaning)."""

    memory = forms.CharField(required=False)
    memory_q = forms.CharField(required=False)
    mode = forms.CharField(required=False)

    def clean_memory(self) -> int | None:
        raw = (self.cleaned_data.get("memory") or "").strip().lstrip("#")
        if not raw:
            return None
        if not raw.isdigit() or not 0 < int(raw) < BIGINT:
            raise forms.ValidationError(BAD_MEMORY)
        return int(raw)

    def clean_memory_q(self) -> str:
        return (self.cleaned_data.get("memory_q") or "")[:200]  # as the stored turns' picker reads it

    def clean_mode(self) -> str:
        mode = self.cleaned_data.get("mode") or "words"
        if mode not in ("words", "meaning"):
            raise forms.ValidationError(BAD_MODE)
        return mode


BAD_USED = "used is used or skipped."


def _cut() -> forms.CharField:
    """A search text as typed; TurnListForm.clean cuts it to what the search reads (as the list always did)."""
    return forms.CharField(required=False, strip=False)


class TurnListForm(forms.Form):
    """The turn list's search: words, agent, session, strategy, a date range (`from`, `to`), a memory
    used or skipped, and the keyset cursors (`before=`/`after=`)."""

    used = forms.ChoiceField(
        required=False, choices=[(u, u) for u in sel.TURN_USED], error_messages={"invalid_choice": BAD_USED}
    )
    memory = IdField(required=False, message=BAD_MEMORY)
    before = ParsedField(parse=sel.turn_cursor_id, name="before")
    after = ParsedField(parse=sel.turn_cursor_id, name="after")
    q = _cut()
    agent = _cut()
    session = _cut()
    strategy = _cut()

    LIMITS = {"q": 200, "agent": 150, "session": 200, "strategy": 20}

    def __init__(self, data, **kwargs):
        super().__init__(data, **kwargs)
        # "from" is a Python keyword, so the days are added here; checked first, as the page always did.
        self.fields["from"] = ParsedField(parse=dates.parse_day, name="from")
        self.fields["to"] = ParsedField(parse=dates.parse_day, name="to")
        self.order_fields(["from", "to", "used", "memory", "before", "after"])

    def clean(self):
        data = super().clean()
        for name, limit in self.LIMITS.items():
            if name in data:
                data[name] = data[name][:limit]
        return data

    def filters(self) -> sel.TurnFilters:
        """The selector's filters; only for a valid form (a range ending before it starts is a 400)."""
        d = self.cleaned_data
        since, until = dates.day_range(d["from"], d["to"])
        return sel.TurnFilters(
            q=d["q"],
            agent=d["agent"],
            session=d["session"],
            strategy=d["strategy"],
            used=d["used"],
            memory_id=d["memory"],
            since=since,
            until=until,
        )


class WhyNotQueryForm(forms.Form):
    """A stored turn's "why not…?" panel: `?q=…&mode=words|meaning` for the picker's choices, or
    `?memory=<id>` for the answer about that memory."""

    mode = forms.CharField(required=False)
    q = forms.CharField(required=False, strip=False)
    memory = IdField(required=False, message=BAD_MEMORY)

    def clean_mode(self) -> str:
        mode = self.cleaned_data["mode"] or "words"
        if mode not in ("words", "meaning"):
            raise forms.ValidationError(BAD_MODE)
        return mode

    def clean_q(self) -> str:
        return self.cleaned_data["q"][:200]
