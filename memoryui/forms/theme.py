"""The theme switch's input: which theme, and the page to go back to (checked in the view against the
host: never a redirect elsewhere)."""

from __future__ import annotations

from django import forms

from memoryui.forms.inputs import text

THEMES = ("system", "light", "dark")
BAD_THEME = "theme is system, light or dark."
NEXT_TOO_LONG = "The page to go back to is at most 2000 characters."


class ThemeForm(forms.Form):
    theme = forms.ChoiceField(
        choices=[(t, t) for t in THEMES],
        error_messages={"required": BAD_THEME, "invalid_choice": BAD_THEME},
    )
    next = text(limit=2000, message=NEXT_TOO_LONG)
