"""Administration: workspaces (create, rename, members), scopes (rename, move, archive, settings: PATCH
/scopes/{id}), teams, and invitations (create, list, withdraw, accept). Each action is one service;
the rules are governance.permissions' (asked by the services)."""

from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.administration.serializers import (
    InvitationAcceptedOutput,
    InvitationAcceptInput,
    InvitationCreatedOutput,
    InvitationInput,
    InvitationOutput,
    MembersInput,
    MembersOutput,
    ScopeAdminOutput,
    ScopePatchInput,
    ScopeSettingsOutput,
    ScopeStateOutput,
    TeamInput,
    TeamOutput,
    WorkspaceInput,
    WorkspaceOutput,
    WorkspaceRenameInput,
)
from governance.api.auth import request_principal
from governance.api.errors import ErrorBody
from governance.api.limits import GOVERNANCE
from governance.api.validation import valid
from governance.models import Scope
from governance.permissions import scope_by_id, scope_by_path, workspace_by_slug
from governance.selectors.members import scope_state, workspace_for, workspace_members, workspaces_for
from governance.services import grant_membership, scope_admin
from governance.services import invitation as invitations
from governance.services.workspace import workspace_create, workspace_rename

INVITE_PATH = "/invite/{token}/"


# --- Workspaces ---------------------------------------------------------------------------------------


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
