"""Who may do what: grants (principal × scope subtree × role), group membership, and agent tokens.
Denials come from the services through governance.permissions."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.access.serializers import (
    GrantInput,
    GrantListInput,
    GrantOutput,
    MemberInput,
    TeamMembersInput,
    TokenInput,
    TokenIssuedOutput,
    TokenListInput,
    TokenOutput,
)
from governance.api.auth import request_principal
from governance.api.limits import GOVERNANCE
from governance.api.memories.serializers import ReasonInput
from governance.api.validation import valid
from governance.errors import InvalidInput
from governance.models import Grant, PrincipalKind
from governance.permissions import (
    UNKNOWN_PRINCIPAL,
    governed_scopes,
    principal_by_name,
    scope_by_path,
    team_by_name,
    tokens_visible_to,
    workspace_by_slug,
)
from governance.services import grant_membership
from governance.services import principal as principal_services

MAX_LISTED = 500


TEAM_WORKSPACE = OpenApiParameter(
    "workspace",
    str,
    required=False,
    description="The team's workspace (its short name); needed when teams of this name are in several "
    "of the caller's workspaces.",
)


def _team_and_member(actor, request: Request, group: str, member: str):
    """The team named in the path (within `?workspace=` when given) and a person or agent a membership of
    its workspace may name: an unknown name, another workspace's and not-yours are one answer (404)."""
    slug = valid(TeamMembersInput, request.query_params)["workspace"]
    workspace = workspace_by_slug(actor, slug) if slug else None
    team = team_by_name(actor, group, workspace=workspace)
    who = principal_by_name(
        actor, member, workspace=team.workspace_id, kinds=(PrincipalKind.USER, PrincipalKind.AGENT)
    )
    return team, who


class GrantListView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(responses=GrantOutput(many=True))
    def get(self, request: Request) -> Response:
        principal = request_principal(request)
        query = valid(GrantListInput, request.query_params)
        grants = Grant.objects.select_related("principal", "scope", "granted_by").order_by(
            "scope__path", "pk"
        )
        if query.get("scope"):
            scope = scope_by_path(principal, query["scope"])
            grants = grants.filter(scope__tree__ancestor_of=scope.tree)
        else:
            grants = grants.filter(scope__in=governed_scopes(principal))
        return Response(GrantOutput(grants[:MAX_LISTED], many=True).data)

    @extend_schema(request=GrantInput, responses={201: GrantOutput})
    def post(self, request: Request) -> Response:
        data = valid(GrantInput, request.data)
        actor = request_principal(request)
        scope = scope_by_path(actor, data["scope"])
        # A name of another workspace (a team from elsewhere, a person the caller cannot know of) is the
        # same 400 as a name nobody has: no enumeration, and no foreign team reaching this workspace.
        who = principal_by_name(
            actor,
            data["principal"],
            workspace=scope.workspace_id,
            missing=InvalidInput(UNKNOWN_PRINCIPAL, field="principal"),
        )
        grant = principal_services.grant_add(principal=who, scope=scope, role=data["role"], actor=actor)
        return Response(GrantOutput(grant).data, status=status.HTTP_201_CREATED)


class GrantRevokeView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(request=ReasonInput, responses=None)
    def delete(self, request: Request, grant_id: int) -> Response:
        # Saying why: the service refuses an empty reason (400, field reason), as the dashboard's revoke
        # does, once the caller may revoke the grant (403/404 first).
        data = valid(ReasonInput, request.data)
        principal_services.grant_revoke(
            grant_id=grant_id, actor=request_principal(request), reason=data["reason"]
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class GroupMembersView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(request=MemberInput, responses={204: None}, parameters=[TEAM_WORKSPACE])
    def post(self, request: Request, group: str) -> Response:
        data = valid(MemberInput, request.data)
        actor = request_principal(request)
        team, member = _team_and_member(actor, request, group, data["member"])
        grant_membership.group_member_add(group=team, member=member, actor=actor)
        return Response(status=status.HTTP_204_NO_CONTENT)


class GroupMemberView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(responses={204: None}, parameters=[TEAM_WORKSPACE])
    def delete(self, request: Request, group: str, member: str) -> Response:
        actor = request_principal(request)
        team, who = _team_and_member(actor, request, group, member)
        grant_membership.group_member_remove(group=team, member=who, actor=actor)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenIssueView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(responses=TokenOutput(many=True))
    def get(self, request: Request) -> Response:
        """Tokens the caller may revoke: its own, and those bound inside a subtree it owns."""
        tokens = tokens_visible_to(request_principal(request)).order_by("-created_at", "-pk")
        query = valid(TokenListInput, request.query_params)
        if query.get("active") in ("1", "true"):
            tokens = tokens.filter(revoked_at__isnull=True)
        return Response(TokenOutput(tokens[:MAX_LISTED], many=True).data)

    @extend_schema(request=TokenInput, responses={201: TokenIssuedOutput})
    def post(self, request: Request) -> Response:
        data = valid(TokenInput, request.data)
        actor = request_principal(request)
        scope = scope_by_path(actor, data["scope"])
        raw = grant_membership.agent_token_issue(
            agent=principal_by_name(actor, data["principal"], workspace=scope.workspace_id),
            scope=scope,
            max_role=data["role"],
            expires_at=data["expires_at"],
            actor=actor,
        )
        return Response(
            {
                "token": raw,
                "scope": data["scope"],
                "role": data["role"],
                "expires_at": data["expires_at"],
                "note": "Shown once; only its hash is kept.",
            },
            status=status.HTTP_201_CREATED,
        )


class TokenRevokeView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(request=ReasonInput, responses={204: None})
    def delete(self, request: Request, token_id: int) -> Response:
        # Saying why, as for a grant: token_revoke refuses an empty reason once the caller may revoke it.
        data = valid(ReasonInput, request.data)
        principal_services.token_revoke(
            token_id=token_id, actor=request_principal(request), reason=data["reason"]
        )
        return Response(status=status.HTTP_204_NO_CONTENT)
