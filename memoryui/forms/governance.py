"""The governance pages' input: add a grant, revoke a grant or an API token (the confirm page's GET and its
POST), and the audit tab's filters and keyset cursors. Names are turned into objects by the permission
resolvers in the views; what a revoke needs (a reason) the services decide, the same for the API."""

from __future__ import annotations

from django import forms

from governance.runtime import cursor as codec
from governance.runtime import dates
from governance.selectors import dashboard as sel
from memoryui.forms.inputs import IdField, ParsedField, text

BAD_GRANT_ID = "grant is a whole number."
BAD_TOKEN_ID = "token is a whole number."
REASON_TOO_LONG = "A reason is at most 500 characters."
NAME_TOO_LONG = "A name is at most 150 characters."
SCOPE_TOO_LONG = "A scope path is at most 512 characters."
FILTER_TOO_LONG = "{field} is at most {n} characters: no audit event holds a longer one."
BAD_DATE = dates.BAD_DATE
BAD_RANGE = dates.BAD_RANGE
BAD_CURSOR = codec.BAD_CURSOR


class GrantAddForm(forms.Form):
    # Empty and unknown are one answer, given by the resolvers (UNKNOWN_SCOPE, UNKNOWN_PRINCIPAL), and a
    # role outside Role by the service (grant_add): the form only bounds what is sent.
    grant_scope = text(limit=512, message=SCOPE_TOO_LONG)
    principal = text(limit=150, message=NAME_TOO_LONG)
    role = text(limit=20, message="role is one of the roles listed.")


class GrantRevokeForm(forms.Form):
    """The confirm page (GET: which grant) and the revoke (POST: which grant and why). The reason may be
    empty here: grant_revoke refuses an empty one, for the API and the dashboard alike."""

    grant = IdField(message=BAD_GRANT_ID)
    reason = text(limit=500, message=REASON_TOO_LONG)


class TokenRevokeForm(forms.Form):
    """The token's confirm page and its revoke; token_revoke is asked for the reason's rule."""

    token = IdField(message=BAD_TOKEN_ID)
    reason = text(limit=500, message=REASON_TOO_LONG)


def _filter(name: str, limit: int) -> forms.CharField:
    return text(limit=limit, message=FILTER_TOO_LONG.format(field=name, n=limit))


class AuditFilterForm(forms.Form):
    """The audit tab's query: action, actor, target, whole days `from`..`to` in the viewer's zone (both
    included) and one keyset cursor (`before` for older, `after` for newer)."""

    action = _filter("action", 50)
    actor = _filter("actor", 150)
    target = _filter("target", 64)
    before = ParsedField(parse=sel.audit_cursor_id, name="before")
    after = ParsedField(parse=sel.audit_cursor_id, name="after")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # `from` is a keyword in Python: the two day fields are named here rather than in the class body.
        self.fields["from"] = ParsedField(parse=dates.parse_day, name="from")
        self.fields["to"] = ParsedField(parse=dates.parse_day, name="to")

    def clean(self):
        data = super().clean()
        if not self.errors:
            first, last = data.get("from"), data.get("to")
            if first and last and first > last:
                self.add_error("from", BAD_RANGE)
        return data
