"""The memories list's filters, read from the query string (every filter is in the URL: a link shares the
view). A value the list does not know is an error the page names, never a filter silently dropped: the
bulk action "every memory matching these filters" acts on what the list says it shows."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from governance.errors import InvalidInput
from governance.models import Kind, SourceKind, Status, Tier
from governance.selectors import dashboard as sel

BAD_CHOICE = "“%(value)s” is not one of the choices; pick one from the list."
TOO_LONG = "At most %(limit_value)d characters (this has %(show_value)d)."
# What the list's heading says when a filter cannot be read: nothing is listed until it is fixed.
FILTERS_INVALID = "No memory is listed: a filter cannot be read. Fix it in Filters and search again."

# The filters folded behind "Filters (n active)"; the text search (q, mode) stays outside, always visible.
FOLDED = ("status", "kind", "source", "tier", "cold", "from", "to", "key", "key_match", "session", "ref")
# Modifiers of another filter: they change nothing alone, so they are not counted as active.
MODIFIERS = ("key_match",)


class FilterText(forms.CharField):
    """A free-text filter as PostgreSQL can hold it: a NUL character is dropped, not refused (it cannot be
    in any stored value, so it can only come from a pasted or forged URL); too long is an error."""

    def __init__(self, *, limit: int, **kwargs):
        super().__init__(required=False, max_length=limit, error_messages={"max_length": TOO_LONG}, **kwargs)

    def to_python(self, value):
        return super().to_python(value.replace("\x00", "") if isinstance(value, str) else value)


def _choice(label: str, choices, *, blank: str | None = "any") -> forms.ChoiceField:
    options = ([("", blank)] if blank is not None else []) + list(choices)
    return forms.ChoiceField(
        label=label, required=False, choices=options, error_messages={"invalid_choice": BAD_CHOICE}
    )


class FilterDay(forms.CharField):
    """A whole day, YYYY-MM-DD (the browser's date field), in the viewer's zone; empty is no bound."""

    widget = forms.DateInput(attrs={"type": "date"})

    def __init__(self, **kwargs):
        super().__init__(required=False, **kwargs)

    def clean(self, value):
        try:
            return sel.parse_date(super().clean(value), "date")
        except InvalidInput as exc:
            raise ValidationError(exc.message, code="bad_date") from exc


class MemoryListForm(forms.Form):
    """Every input of the list but the scope (the page's focused scope, resolved by dashboard_view) and
    the paging cursors (the selector decodes them)."""

    q = FilterText(limit=200, label="Text", widget=forms.TextInput(attrs={"type": "search"}))
    mode = _choice("Search by", [(m, m) for m in sel.SEARCH_MODES], blank=None)
    status = _choice("Status", Status.choices)
    kind = _choice("Kind", Kind.choices)
    source = _choice("Source", SourceKind.choices)
    tier = _choice("Tier", Tier.choices)
    cold = _choice("Hot or cold", [("hot", "hot"), ("cold", "cold")])
    key = FilterText(limit=200, label="Key")
    key_match = _choice("Key matching", [("exact", "exactly"), ("prefix", "as a prefix")], blank=None)
    session = FilterText(limit=200, label="Session")
    ref = FilterText(limit=500, label="Source ref")
    sort = _choice("Sort by", sel.SORT_LABELS.items(), blank="")
    dir = _choice("Direction", [("asc", "ascending"), ("desc", "descending")], blank="")

    def __init__(self, data, **kwargs):
        super().__init__(data, auto_id="f-%s", **kwargs)
        # "from" is a Python keyword, so these two are added here rather than declared above.
        self.fields["from"] = FilterDay(label="Written from")
        self.fields["to"] = FilterDay(label="Written to")
        self.order_fields(["q", "mode", *FOLDED])
        for name in ("key", "session", "ref"):
            self.fields[name].widget.attrs["autocomplete"] = "off"
        self.fields["key"].widget.attrs["placeholder"] = "export_format"
        self.fields["ref"].widget.attrs["placeholder"] = "event:42, or conv-7:* for a prefix"
        self.fields["q"].widget.attrs["placeholder"] = "words in the memory, or what it is about"

    def full_clean(self):
        super().full_clean()
        for name in self.errors:
            if name in self.fields:  # a field's message is read with the field
                attrs = self.fields[name].widget.attrs
                attrs["aria-invalid"] = "true"
                attrs["aria-describedby"] = f"f-{name}-error"

    def filters(self) -> sel.MemoryFilters:
        """The selector's filters; only for a valid form."""
        d = self.cleaned_data
        sort = d["sort"] or sel.DEFAULT_SORT
        return sel.MemoryFilters(
            status=d["status"],
            kind=d["kind"],
            source=d["source"],
            tier=d["tier"],
            q=d["q"],
            cold=d["cold"],
            mode=d["mode"] or "words",
            written_from=d["from"],
            written_to=d["to"],
            key=d["key"],
            key_prefix=d["key_match"] == "prefix",
            session=d["session"],
            ref=d["ref"],
            sort=sort,
            dir=d["dir"] or sel.FIRST_DIR[sort],
        )

    def folded_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in FOLDED]

    def active_count(self) -> int:
        """How many folded filters narrow the list (what "Filters (n active)" says), as asked, valid or not."""
        return sum(1 for name in FOLDED if name not in MODIFIERS and (self.data.get(name) or "").strip())

    def error_lines(self) -> list[str]:
        """One sentence per refused field, named as the form labels it."""
        return [f"{self.fields[n].label}: {' '.join(e)}" for n, e in self.errors.items() if n in self.fields]

    def first_error(self) -> InvalidInput:
        name, errors = next(iter(self.errors.items()))
        return InvalidInput(f"{self.fields[name].label}: {errors[0]}", field=name)


class MemoryCursorForm(forms.Form):
    """The list's keyset position (`after=` / `before=` a cursor); the selector decodes it and names a
    bad one (governance.selectors.dashboard)."""

    after = forms.CharField(required=False, strip=False)
    before = forms.CharField(required=False, strip=False)


# Meaning search's relevance cut-off: how far below the best match a result may be and still be shown
# (relative to the best, so it holds for any embedding model); the reader widens it step by step.
REACH = {"near": 0.05, "wider": 0.10, "all": None}
DEFAULT_REACH = "near"
BAD_REACH = f"reach is one of: {', '.join(REACH)}."


class MemoryReachForm(forms.Form):
    """How far a meaning search reaches (`?reach=near|wider|all`); read only when searching by meaning."""

    reach = forms.ChoiceField(
        required=False, choices=[(r, r) for r in REACH], error_messages={"invalid_choice": BAD_REACH}
    )

    def clean_reach(self) -> str:
        return self.cleaned_data["reach"] or DEFAULT_REACH


class ScopeOptionsForm(forms.Form):
    """The type-ahead scope picker's typed text (`?q=`), as PostgreSQL can hold it and cut to 200."""

    q = FilterText(limit=None)

    def clean_q(self) -> str:
        return self.cleaned_data["q"][:200]
