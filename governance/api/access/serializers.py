"""Input and Output shapes of grants, group membership and agent tokens. Inputs validate only; services do
every write."""

from __future__ import annotations

from rest_framework import serializers

from governance.models import Grant, Role


class GrantListInput(serializers.Serializer):
    """GET /grants: the query string (not in the schema)."""

    scope = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class GrantInput(serializers.Serializer):
    principal = serializers.CharField(max_length=150)
    scope = serializers.CharField(max_length=512)
    role = serializers.ChoiceField(choices=Role.values)


class GrantOutput(serializers.ModelSerializer):
    principal = serializers.CharField(source="principal.name")
    principal_kind = serializers.CharField(source="principal.kind")
    scope = serializers.CharField(source="scope.path")
    granted_by = serializers.CharField(source="granted_by.name", default=None, allow_null=True)

    class Meta:
        model = Grant
        fields = ["id", "principal", "principal_kind", "scope", "role", "granted_by", "created_at"]


class MemberInput(serializers.Serializer):
    member = serializers.CharField(max_length=150)


class TeamMembersInput(serializers.Serializer):
    """`?workspace=<short name>`: the team's workspace (a team's name is unique within its workspace only;
    needed when teams of that name are in several of the caller's workspaces)."""

    workspace = serializers.CharField(max_length=63, required=False, allow_blank=True, default="")


class TokenListInput(serializers.Serializer):
    """GET /tokens: the query string (not in the schema); `active=1` or `active=true` lists live ones only."""

    active = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class TokenInput(serializers.Serializer):
    principal = serializers.CharField(max_length=150)
    scope = serializers.CharField(max_length=512, help_text="The token acts only in this scope's subtree.")
    role = serializers.ChoiceField(choices=Role.values, help_text="The highest role the token may use.")
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class TokenOutput(serializers.Serializer):
    id = serializers.IntegerField()
    principal = serializers.CharField(source="principal.name")
    prefix = serializers.CharField()
    scope = serializers.CharField(source="scope.path", allow_null=True, default=None)
    role = serializers.CharField(source="max_role")
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)


class TokenIssuedOutput(serializers.Serializer):
    token = serializers.CharField(help_text="The raw token: shown once, only its hash is kept.")
    scope = serializers.CharField(help_text="The token acts only in this scope's subtree.")
    role = serializers.CharField(help_text="The highest role the token may use.")
    expires_at = serializers.DateTimeField(allow_null=True)
    note = serializers.CharField()
