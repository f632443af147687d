"""Administration: workspaces (create, rename, members), scopes (rename, move, archive, settings: PATCH
/scopes/{id}), teams, and invitations (create, list, withdraw, accept). Each action is one service;
the rules are governance.permissions' (asked by the services)."""

from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.errors import ErrorBody
from governance.api.limits import GOVERNANCE
from governance.api.validation import valid
from governance.models import AgentWrite, Role, Scope, SessionOverrides
from governance.permissions import scope_by_id, scope_by_path, workspace_by_slug
from governance.selectors.members import scope_state, workspace_for, workspace_members, workspaces_for
from governance.services import grant_membership, scope_admin
from governance.services import invitation as invitations
from governance.services.workspace import workspace_create, workspace_rename

INVITE_PATH = "/invite/{token}/"


# --- Workspaces ---------------------------------------------------------------------------------------


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


class WorkspacesView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(
        operation_id="workspaces_list",
        responses=WorkspaceOutput(many=True),
        summary="Workspaces where the caller holds a role (a site administrator: all).",
    )
    def get(self, request: Request) -> Response:
        return Response(WorkspaceOutput(workspaces_for(request_principal(request))[:500], many=True).data)

    @extend_schema(
        operation_id="workspaces_create",
        request=WorkspaceInput,
        responses={201: WorkspaceOutput},
        summary="Create a workspace and its root scope; site administrators only. The creator owns it.",
    )
    def post(self, request: Request) -> Response:
        data = valid(WorkspaceInput, request.data)
        workspace = workspace_create(slug=data["slug"], name=data["name"], actor=request_principal(request))
        return Response(WorkspaceOutput(workspace).data, status=status.HTTP_201_CREATED)


class WorkspaceView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(operation_id="workspaces_read", responses=WorkspaceOutput)
    def get(self, request: Request, slug: str) -> Response:
        return Response(WorkspaceOutput(workspace_for(request_principal(request), slug)).data)

    @extend_schema(
        operation_id="workspaces_rename",
        request=WorkspaceRenameInput,
        responses=WorkspaceOutput,
        summary="Rename a workspace (name and/or short name); owners of its root scope.",
    )
    def patch(self, request: Request, slug: str) -> Response:
        data = valid(WorkspaceRenameInput, request.data)
        actor = request_principal(request)
        workspace = workspace_rename(
            workspace=workspace_for(actor, slug), actor=actor, name=data.get("name"), slug=data.get("slug")
        )
        return Response(WorkspaceOutput(workspace).data)


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


class WorkspaceMembersView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(
        operation_id="workspaces_members",
        parameters=[MembersInput],
        responses=MembersOutput,
        summary="Who can do what where: effective roles (direct, inherited, via teams) per scope the "
        "caller governs in the workspace (at most 100 scopes in tree order; `under` narrows).",
    )
    def get(self, request: Request, slug: str) -> Response:
        query = valid(MembersInput, request.query_params)
        actor = request_principal(request)
        workspace = workspace_for(actor, slug)
        within = scope_by_path(actor, query["under"], workspace=workspace) if query.get("under") else None
        members = workspace_members(actor, workspace, within)
        return Response(
            {
                "workspace": members.workspace.slug,
                "scopes": [s.path for s in members.scopes],
                "total_scopes": members.total_scopes,
                "members": [
                    {
                        "principal": row.principal.name,
                        "kind": row.principal.kind,
                        "teams": row.teams,
                        "scopes": [
                            {"scope": s.path, "roles": c.roles, "permissions": c.permissions, "via": c.via}
                            for s, c in zip(members.scopes, row.cells, strict=True)
                            if c is not None
                        ],
                    }
                    for row in members.rows
                ],
            }
        )


# --- Scopes: rename, move, archive, settings ----------------------------------------------------------


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


def scope_settings(scope: Scope) -> dict:
    """The scope with its own settings and those in force (inherited), as the API and the page show them."""
    scope = Scope.objects.select_related("parent", "workspace").get(pk=scope.pk)
    return {**ScopeAdminOutput(scope).data, **ScopeStateOutput(scope_state(scope)).data}


def _scope(actor, scope_id: int) -> Scope:
    """The scope with this id if the caller holds a role there; the same NotFound otherwise."""
    return scope_by_id(actor, scope_id)


class ScopeDetailView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(operation_id="scopes_read", responses=ScopeSettingsOutput)
    def get(self, request: Request, scope_id: int) -> Response:
        return Response(scope_settings(_scope(request_principal(request), scope_id)))

    @extend_schema(
        operation_id="scopes_update",
        request=ScopePatchInput,
        responses=ScopeSettingsOutput,
        summary="Rename, move, archive/restore a scope or change its settings; owners of the scope. "
        "Several fields are applied together or not at all.",
    )
    def patch(self, request: Request, scope_id: int) -> Response:
        data = valid(ScopePatchInput, request.data)
        actor = request_principal(request)
        scope = _scope(actor, scope_id)
        reason = data.get("reason", "")
        with transaction.atomic():  # each service is one transaction; together, one request commits whole
            settings = {
                k: data[k]
                for k in (
                    "require_two_reviewers",
                    "agent_write",
                    "child_scope_role",
                    "session_overrides",
                    "binding_keys",
                    "rules_binding",
                )
                if k in data
            }
            if settings:
                scope = scope_admin.scope_settings_set(scope=scope, actor=actor, reason=reason, **settings)
            if "name" in data:
                scope = scope_admin.scope_rename(scope=scope, name=data["name"], actor=actor)
            if "parent" in data:
                parent = scope_by_path(actor, data["parent"])
                scope = scope_admin.scope_move(scope=scope, new_parent=parent, actor=actor)
            if data.get("archived") is True:
                scope = scope_admin.scope_archive(scope=scope, actor=actor, reason=reason)
            elif data.get("archived") is False:
                scope = scope_admin.scope_restore(scope=scope, actor=actor, reason=reason)
        return Response(scope_settings(scope))


# --- Teams --------------------------------------------------------------------------------------------


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


class TeamsView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(
        operation_id="teams_create",
        request=TeamInput,
        responses={201: TeamOutput},
        summary="Create a team (a group principal) of one workspace, its home (it holds roles there "
        "only); owners of some scope there. Add members with POST /teams/{team}/members, "
        "roles with POST /grants.",
    )
    def post(self, request: Request) -> Response:
        data = valid(TeamInput, request.data)
        actor = request_principal(request)
        workspace = workspace_by_slug(actor, data["workspace"]) if data.get("workspace") else None
        team = grant_membership.team_create(name=data["name"], workspace=workspace, actor=actor)
        return Response(TeamOutput(team).data, status=status.HTTP_201_CREATED)


# --- Invitations --------------------------------------------------------------------------------------


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


class InvitationsView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(
        operation_id="invitations_list",
        responses=InvitationOutput(many=True),
        summary="Open invitations to scopes where the caller may change grants.",
    )
    def get(self, request: Request) -> Response:
        actor = request_principal(request)
        rows = []
        for workspace in workspaces_for(actor):
            rows += workspace_members(actor, workspace).invitations
        return Response(InvitationOutput(rows[:500], many=True).data)

    @extend_schema(
        operation_id="invitations_create",
        request=InvitationInput,
        responses={201: InvitationCreatedOutput},
        summary="Invite someone without an account to a role on a scope: a one-time link with expiry.",
    )
    def post(self, request: Request) -> Response:
        data = valid(InvitationInput, request.data)
        actor = request_principal(request)
        invitation, raw = invitations.invitation_create(
            scope=scope_by_path(actor, data["scope"]),
            role=data["role"],
            note=data["note"],
            expires_in_days=data["expires_in_days"],
            actor=actor,
        )
        body = {**InvitationOutput(invitation).data, "token": raw, "link": INVITE_PATH.format(token=raw)}
        return Response(body, status=status.HTTP_201_CREATED)


class InvitationView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(operation_id="invitations_revoke", responses={204: None})
    def delete(self, request: Request, invitation_id: int) -> Response:
        invitations.invitation_revoke(invitation_id=invitation_id, actor=request_principal(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class InvitationAcceptView(APIView):
    """Open to anyone holding the link: the token is the credential. Throttled by client address."""

    rate_bucket = GOVERNANCE
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="invitations_accept",
        request=InvitationAcceptInput,
        auth=[],
        responses={201: InvitationAcceptedOutput, 410: ErrorBody},
        summary="Use an invitation: creates the user (then sign in) with the invited role.",
    )
    def post(self, request: Request) -> Response:
        data = valid(InvitationAcceptInput, request.data)
        invitation = invitations.invitation_for_token(data["token"])
        principal = invitations.invitation_accept(
            token=data["token"], username=data["username"], password=data["password"]
        )
        return Response(
            {"principal": principal.name, "scope": invitation.scope.path, "role": invitation.role},
            status=status.HTTP_201_CREATED,
        )
