"""The summary panel's rebuild button: which scope (resolved by the view through the permissions) and
an optional reason for the audit event."""

from __future__ import annotations

from django import forms

from memoryui.forms.inputs import text

SCOPE_REQUIRED = "Pick the scope whose summary to rebuild."
SCOPE_TOO_LONG = "A scope path is at most 512 characters."
REASON_TOO_LONG = "A reason is at most 200 characters."


class SummaryRebuildForm(forms.Form):
    scope = text(
        limit=512, message=SCOPE_TOO_LONG, required=True, error_messages={"required": SCOPE_REQUIRED}
    )
    reason = text(limit=200, message=REASON_TOO_LONG)
