"""Fields the dashboard's forms share: an id typed or posted (with the page's own sentence for anything
else), a list of ids, and a value parsed by one of the domain's parsers (a day, a cursor) whose 400
sentence becomes the form's error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from governance.errors import InvalidInput

BIGINT = 2**63  # a key is a bigint: anything outside 1..2**63-1 cannot exist


def _whole_number(value: Any, message: str) -> int:
    try:
        number = int(str(value).strip().lstrip("#"))
    except ValueError as exc:
        raise ValidationError(message, code="invalid") from exc
    if not 0 < number < BIGINT:
        raise ValidationError(message, code="invalid")
    return number


class IdField(forms.Field):
    """One object's id ("12", " 12 " or "#12"); `message` for a missing or a bad one."""

    def __init__(self, *, message: str, **kwargs):
        kwargs.setdefault("error_messages", {"required": message})
        super().__init__(**kwargs)
        self.message = message

    def to_python(self, value):
        if value in self.empty_values:
            return None
        return _whole_number(value, self.message)


class IdListField(forms.Field):
    """Ids posted under one name (ticked boxes), distinct and in the order given."""

    widget = forms.MultipleHiddenInput

    def __init__(self, *, message: str, **kwargs):
        kwargs.setdefault("error_messages", {"required": message})
        super().__init__(**kwargs)
        self.message = message

    def to_python(self, value):
        if not value:
            return []
        return list(dict.fromkeys(_whole_number(v, self.message) for v in value))


class ParsedField(forms.Field):
    """A text parsed by one of the domain's parsers (`parse(raw, field)`); its InvalidInput sentence is the
    form's error, so the dashboard says what the API and the other pages say for the same bad value."""

    def __init__(self, *, parse: Callable[[str, str], Any], name: str, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)
        self.parse, self.name = parse, name

    def to_python(self, value):
        try:
            return self.parse(value or "", self.name)
        except InvalidInput as exc:
            raise ValidationError(exc.message, code="invalid") from exc


def text(
    *, limit: int, message: str, required: bool = False, error_messages: dict | None = None
) -> forms.CharField:
    """A text of at most `limit` characters (a longer one is refused with `message`, never cut)."""
    return forms.CharField(
        required=required, max_length=limit, error_messages={"max_length": message, **(error_messages or {})}
    )


class TextListField(forms.Field):
    """Texts posted under one name (ticked boxes), as given: which of them are allowed, the service says."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value):
        return [str(v) for v in value] if value else []


def given(**kwargs) -> forms.CharField:
    """A text handed to the service as posted (not stripped, empty when absent): the service checks it and
    says what is wrong in its own sentence. The form still refuses a NUL character, which no column holds."""
    return forms.CharField(required=False, strip=False, **kwargs)


class TickField(forms.Field):
    """A checkbox: ticked when posted with `value` ("on", a box without a value attribute), else not (any
    other text too, as the pages always read it: CheckboxInput would take "off" for ticked)."""

    def __init__(self, *, value: str = "on", **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)
        self.value = value

    def to_python(self, value) -> bool:
        return value == self.value
