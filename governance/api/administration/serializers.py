"""Input and Output shapes of workspaces, members, scope settings, teams and invitations. Inputs validate
only; services do every write."""

from __future__ import annotations

from rest_framework import serializers

from governance.models import AgentWrite, Role, SessionOverrides
from governance.services import invitation as invitations


class WorkspaceInput(serializers.Serializer):
    slug = serializers.CharField(max_length=63, help_text="Short name: the first part of every path in it.")
    name = serializers.CharField(max_length=200)


class WorkspaceRenameInput(serializers.Serializer):
    slug = serializers.CharField(
        max_length=63, required=False, help_text="A new short name rewrites every path."
    )
    name = serializers.CharField(max_length=200, required=False)


class WorkspaceOutput(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    created_at = serializers.DateTimeField()


class MemberCellOutput(serializers.Serializer):
    scope = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())
    permissions = serializers.ListField(
        child=serializers.CharField(), help_text="Of: read, propose, confirm, revoke, administer."
    )
    via = serializers.ListField(
        child=serializers.CharField(),
        help_text="Where each role comes from: direct, from <path>, team <name>.",
    )


class MemberOutput(serializers.Serializer):
    principal = serializers.CharField()
    kind = serializers.CharField()
    teams = serializers.ListField(child=serializers.CharField())
    scopes = MemberCellOutput(many=True)


class MembersOutput(serializers.Serializer):
    workspace = serializers.CharField()
    scopes = serializers.ListField(
        child=serializers.CharField(), help_text="The matrix's columns, at most 100."
    )
    total_scopes = serializers.IntegerField(help_text="Scopes the matrix would have without the cap.")
    members = MemberOutput(many=True)


class MembersInput(serializers.Serializer):
    under = serializers.CharField(
        required=False, max_length=512, help_text="Only this scope and its subtree."
    )


class ScopePatchInput(serializers.Serializer):
    name = serializers.CharField(
        max_length=200, required=False, help_text="Rename (rewrites the subtree's paths)."
    )
    parent = serializers.CharField(
        max_length=512, required=False, help_text="Move under this scope (path), in the same workspace."
    )
    archived = serializers.BooleanField(required=False, help_text="Archive (true) or restore (false).")
    require_two_reviewers = serializers.BooleanField(required=False, help_text="Four-eyes on or off.")
    agent_write = serializers.ChoiceField(choices=AgentWrite.values, required=False)
    child_scope_role = serializers.ChoiceField(
        choices=["", Role.AGENT, Role.REVIEWER, Role.CURATOR, Role.OWNER], required=False, allow_blank=True
    )
    session_overrides = serializers.ChoiceField(
        choices=SessionOverrides.values,
        required=False,
        help_text="Whose account of a user's correction sets a rule aside for that session: any (also as an agent "
        "relayed it), end_user (only turns posted with a person's token), off.",
    )
    binding_keys = serializers.ListField(
        child=serializers.CharField(max_length=200),
        max_length=100,
        required=False,
        help_text="Keys of rules no session correction may set aside here and below (the whole list).",
    )
    rules_binding = serializers.BooleanField(
        required=False, help_text="Every rule here and below is binding for sessions."
    )
    reason = serializers.CharField(
        max_length=2000,
        required=False,
        allow_blank=True,
        default="",
        help_text="Kept in the audit event; required to turn four-eyes off.",
    )


class ScopeAdminOutput(serializers.Serializer):
    id = serializers.IntegerField()
    path = serializers.CharField()
    name = serializers.CharField()
    parent = serializers.CharField(source="parent.path", allow_null=True, default=None)
    workspace = serializers.CharField(source="workspace.slug")
    archived_at = serializers.DateTimeField(allow_null=True)
    require_two_reviewers = serializers.BooleanField()
    agent_write = serializers.CharField()
    child_scope_role = serializers.CharField()
    session_overrides = serializers.CharField()
    binding_keys = serializers.ListField(child=serializers.CharField())
    rules_binding = serializers.BooleanField()


class ScopeStateOutput(serializers.Serializer):
    archived = serializers.BooleanField(help_text="This scope or one above it is archived: no new writes.")
    four_eyes = serializers.BooleanField(help_text="In force here: set on this scope or one above it.")
    agent_write_in_force = serializers.CharField(help_text="The strictest policy on this scope or above it.")
    child_scope_role_in_force = serializers.CharField(
        help_text="The lowest role that may open a child scope here."
    )


class ScopeSettingsOutput(ScopeAdminOutput, ScopeStateOutput):
    """A scope with its own settings and those in force on it."""


class TeamInput(serializers.Serializer):
    name = serializers.CharField(max_length=150)
    workspace = serializers.CharField(
        max_length=63,
        required=False,
        help_text="The team's workspace (its short name); needed when the caller owns scopes in several.",
    )


class TeamOutput(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField()
    workspace = serializers.CharField(source="workspace.slug", allow_null=True, default=None)
    created_at = serializers.DateTimeField()


class InvitationInput(serializers.Serializer):
    scope = serializers.CharField(max_length=512)
    role = serializers.ChoiceField(choices=Role.values)
    note = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        default="",
        help_text="Who it is for (kept with the invitation and in the audit log).",
    )
    expires_in_days = serializers.IntegerField(
        required=False, default=7, min_value=1, max_value=invitations.MAX_DAYS
    )


class InvitationOutput(serializers.Serializer):
    id = serializers.IntegerField()
    scope = serializers.CharField(source="scope.path")
    role = serializers.CharField()
    note = serializers.CharField()
    prefix = serializers.CharField()
    created_by = serializers.CharField(source="created_by.name", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()


class InvitationCreatedOutput(InvitationOutput):
    token = serializers.CharField(help_text="Shown once; only its hash is kept.")
    link = serializers.CharField(help_text="The one-time sign-up link (relative to this service).")


class InvitationAcceptInput(serializers.Serializer):
    token = serializers.CharField(max_length=200)
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=200, trim_whitespace=False)


class InvitationAcceptedOutput(serializers.Serializer):
    principal = serializers.CharField()
    scope = serializers.CharField()
    role = serializers.CharField()
