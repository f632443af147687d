"""The scope a dashboard page is focused on (`?scope=<path>` on every page), read by views.base."""

from __future__ import annotations

from django import forms


class FocusForm(forms.Form):
    # A plain Field, not a CharField: a path with a NUL byte is the same 404 as any unknown path
    # (selectors.dashboard.scope_for_path), not a form error that would tell it apart.
    scope = forms.Field(required=False)
