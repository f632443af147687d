"""Forms of the administration pages (memoryui/views/administration.py): one class per action. Names and
texts go to the permission resolvers and the services as posted (`given`): those say what an unknown name
or a bad text is, in their own sentences; the forms refuse what is not even of the right type."""

from __future__ import annotations

from django import forms

from governance.models import Role
from governance.services.invitation import BAD_DAYS, MAX_DAYS, NOTE_TOO_LONG
from memoryui.forms.inputs import TextListField, TickField, given

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


BAD_INVITATION = "invitation is a whole number."
UNKNOWN_ACTION = "Unknown action."


def _number(name: str) -> str:
    return f"{name} is a whole number."


class WorkspaceNewForm(forms.Form):
    slug = given()
    name = given()


class WorkspaceEditForm(forms.Form):
    """Rename a workspace: an empty field leaves that part as it is."""

    slug = forms.CharField(required=False)
    name = forms.CharField(required=False)


class MemberAddForm(forms.Form):
    principal = given()
    grant_scope = given()
    role = given()


class MembersPageForm(forms.Form):
    """The Members page's query: the invitation just made (`?invited=<id>`); anything else shows none."""

    invited = given()

    def clean_invited(self) -> int | None:
        raw = self.cleaned_data["invited"]
        return int(raw) if raw.isdigit() and len(raw) <= 18 else None


class InvitationWithdrawForm(forms.Form):
    invitation = forms.IntegerField(error_messages={"required": BAD_INVITATION, "invalid": BAD_INVITATION})


class TeamNewForm(forms.Form):
    team = given()


class TeamMemberAddForm(forms.Form):
    team = given()
    member = given()


class TeamMemberRemoveForm(TeamMemberAddForm):
    reason = given()


class ScopeNewForm(forms.Form):
    parent = given()
    name = given()


class ScopeActionForm(forms.Form):
    """Which of the scope settings page's forms was sent (its button's `action`)."""

    action = forms.ChoiceField(
        choices=[(a, a) for a in ("rename", "move", "archive", "restore", "settings", "retention")],
        error_messages={"required": UNKNOWN_ACTION, "invalid_choice": UNKNOWN_ACTION},
    )


class ScopeRenameForm(forms.Form):
    name = given()


class ScopeMoveForm(forms.Form):
    parent = given()


class ScopeArchiveForm(forms.Form):
    """Archive or restore a scope, with a reason."""

    reason = given()


class ScopeSettingsForm(forms.Form):
    """Four-eyes, the agents' write policy and the role on new child scopes; a choice not sent is None
    (kept as it is), while an empty child_scope_role is the site default."""

    require_two_reviewers = TickField()
    agent_write = given()
    child_scope_role = given()
    reason = given()

    def clean(self):
        data = super().clean()
        for name in ("agent_write", "child_scope_role"):
            if name not in self.data:
                data[name] = None
        return data


def _whole(name: str) -> forms.IntegerField:
    message = _number(name)
    return forms.IntegerField(required=False, error_messages={"invalid": message})


class RetentionForm(forms.Form):
    retire_unused_days = _whole("retire_unused_days")
    archive_cold = TickField()
    cold_threshold = forms.FloatField(
        required=False, error_messages={"invalid": "cold_threshold is a number."}
    )
    kinds = TextListField(required=False)
    enabled = TickField()
    turns_max_age_days = _whole("turns_max_age_days")
    turns_max_count = _whole("turns_max_count")
    archive_turns = TickField()


class InviteAcceptForm(forms.Form):
    """The invitation link's form: a user name and a password, as typed (the service checks both)."""

    username = given()
    password = given()
