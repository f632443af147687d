"""Governance API: one view per operation. Views parse input, call a service or selector, shape output.
Denials come from the services (403 with a reason; 404 when the object lies outside the caller's scopes)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api import output_types as t
from governance.api.auth import request_principal
from governance.api.governance_serializers import (
    ForgetIn,
    GrantIn,
    GrantOut,
    MemberIn,
    MemoryStateOut,
    ReasonIn,
    RequiredReasonIn,
    RetentionIn,
    TokenIn,
    TokenOut,
    outbox_state,
    review_item,
)
from governance.errors import InvalidInput, NotFound, PermissionDenied
from governance.models import Grant, Outbox, Principal, Status
from governance.permissions import (
    AUDIT_VERIFY_DENIED,
    can_verify_audit,
    governed_scope,
    governed_scopes,
    principal_visible,
    require_outbox_read,
    tokens_visible_to,
)
from governance.selectors.review import review_queue
from governance.services import grant_membership
from governance.services import memory as memory_services
from governance.services import principal as principal_services
from governance.services.audit import audit_verify_chain
from governance.services.retention import retention_policy_set
from governance.services.summary import summary_get

UNKNOWN_PRINCIPAL = "No principal with this name."


def _four_eyes_pending(memory, action: str) -> dict | None:
    """When the call only recorded the first of the two people's requests to end a long-term commitment."""
    request = memory_services.end_request_pending(memory, action)
    if request is None or memory.status != Status.ACTIVE:
        return None
    words = {"retire": "retire", "forget": "forget", "forget_hard": "hard-forget"}[action]
    return {"action": action, "requested_by": request.get("by_name"), "approvals": 1, "needed": 2,
            "message": memory_services.FOUR_EYES_REQUESTED.format(action=words)}


def _scope(path: str | None, principal):
    return governed_scope(principal, path)


def _principal(name: str, field: str = "principal", actor=None) -> Principal:
    """The principal named `name`. With `actor`: one it may not know of is the same NotFound as an
    unknown name (no enumeration of other workspaces' principals)."""
    found = Principal.objects.filter(name=name).first()
    if found is None:
        if actor is not None:
            raise NotFound()
        raise InvalidInput(UNKNOWN_PRINCIPAL, field=field)
    if actor is not None and not principal_visible(actor, found):
        raise NotFound()
    return found


def _valid(serializer_class, request):
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class MemoryConfirmView(APIView):
    @extend_schema(request=ReasonIn, responses=MemoryStateOut)
    def post(self, request, memory_id: int):
        data = _valid(ReasonIn, request)
        memory = memory_services.memory_confirm(memory_id=memory_id, actor=request_principal(request),
                                                reason=data["reason"])
        return Response(MemoryStateOut(memory).data)


class MemoryRejectView(APIView):
    @extend_schema(request=RequiredReasonIn, responses=MemoryStateOut)
    def post(self, request, memory_id: int):
        data = _valid(RequiredReasonIn, request)
        memory = memory_services.memory_reject(memory_id=memory_id, actor=request_principal(request),
                                               reason=data["reason"])
        return Response(MemoryStateOut(memory).data)


class MemoryRetireView(APIView):
    @extend_schema(request=RequiredReasonIn, responses=MemoryStateOut)
    def post(self, request, memory_id: int):
        data = _valid(RequiredReasonIn, request)
        memory = memory_services.memory_retire(memory_id=memory_id, actor=request_principal(request),
                                               reason=data["reason"])
        pending = _four_eyes_pending(memory, "retire")
        if pending is not None:  # 202: recorded, waiting for a second curator or owner
            return Response({**MemoryStateOut(memory).data, "four_eyes_pending": pending},
                            status=status.HTTP_202_ACCEPTED)
        return Response(MemoryStateOut(memory).data)


class MemoryForgetView(APIView):
    """202: the memory is out of every read now; the derived stores follow (state per store)."""

    @extend_schema(request=ForgetIn, responses={202: t.ForgetOut})
    def post(self, request, memory_id: int):
        data = _valid(ForgetIn, request)
        memory = memory_services.memory_forget(memory_id=memory_id, actor=request_principal(request),
                                               reason=data["reason"], hard=data["mode"] == "hard")
        pending = _four_eyes_pending(memory, "forget_hard" if data["mode"] == "hard" else "forget")
        if pending is not None:  # nothing forgotten yet: a second curator or owner must ask too
            return Response({"memory": MemoryStateOut(memory).data, "mode": data["mode"], "propagation": None,
                             "four_eyes_pending": pending}, status=status.HTTP_202_ACCEPTED)
        outbox = (Outbox.objects.filter(memory=memory, topic="memory.forgotten").prefetch_related("deliveries")
                  .order_by("-pk").first())
        body = {"memory": MemoryStateOut(memory).data, "mode": data["mode"],
                "propagation": outbox_state(outbox) if outbox else None}
        return Response(body, status=status.HTTP_202_ACCEPTED)


class OutboxView(APIView):
    @extend_schema(responses=t.OutboxStateOut)
    def get(self, request, outbox_id: int):
        outbox = Outbox.objects.select_related("memory__scope").prefetch_related("deliveries").filter(pk=outbox_id).first()
        if outbox is None:
            raise NotFound()
        require_outbox_read(request_principal(request), outbox)
        return Response(outbox_state(outbox))


class AuditVerifyView(APIView):
    @extend_schema(responses=t.AuditVerifyOut)
    def get(self, request):
        if not can_verify_audit(request_principal(request)):
            raise PermissionDenied(AUDIT_VERIFY_DENIED)
        report = audit_verify_chain()
        return Response({"ok": report.ok, "checked": report.checked, "first_bad_id": report.first_bad_id,
                         "problem": report.problem})


class GrantListView(APIView):
    @extend_schema(responses=GrantOut(many=True))
    def get(self, request):
        principal = request_principal(request)
        grants = Grant.objects.select_related("principal", "scope", "granted_by").order_by("scope__path", "pk")
        if request.query_params.get("scope"):
            scope = _scope(request.query_params["scope"], principal)
            grants = grants.filter(scope__tree__ancestor_of=scope.tree)
        else:
            grants = grants.filter(scope__in=governed_scopes(principal))
        return Response(GrantOut(grants[:500], many=True).data)

    @extend_schema(request=GrantIn, responses={201: GrantOut})
    def post(self, request):
        data = _valid(GrantIn, request)
        actor = request_principal(request)
        scope = _scope(data["scope"], actor)
        grant = principal_services.grant_add(principal=_principal(data["principal"]), scope=scope,
                                             role=data["role"], actor=actor)
        return Response(GrantOut(grant).data, status=status.HTTP_201_CREATED)


class GrantRevokeView(APIView):
    @extend_schema(request=ReasonIn, responses=None)
    def delete(self, request, grant_id: int):
        data = _valid(ReasonIn, request)
        principal_services.grant_revoke(grant_id=grant_id, actor=request_principal(request), reason=data["reason"])
        return Response(status=status.HTTP_204_NO_CONTENT)


class GroupMembersView(APIView):
    @extend_schema(request=MemberIn, responses={204: None})
    def post(self, request, group: str):
        data = _valid(MemberIn, request)
        actor = request_principal(request)
        grant_membership.group_member_add(group=_principal(group, "group", actor),
                                          member=_principal(data["member"], "member", actor), actor=actor)
        return Response(status=status.HTTP_204_NO_CONTENT)


class GroupMemberView(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, group: str, member: str):
        actor = request_principal(request)
        grant_membership.group_member_remove(group=_principal(group, "group", actor),
                                             member=_principal(member, "member", actor), actor=actor)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenIssueView(APIView):
    @extend_schema(responses=TokenOut(many=True))
    def get(self, request):
        """Tokens the caller may revoke: its own, and those bound inside a subtree it owns."""
        tokens = tokens_visible_to(request_principal(request)).order_by("-created_at", "-pk")
        if request.query_params.get("active") in ("1", "true"):
            tokens = tokens.filter(revoked_at__isnull=True)
        return Response(TokenOut(tokens[:500], many=True).data)

    @extend_schema(request=TokenIn, responses={201: t.TokenIssuedOut})
    def post(self, request):
        data = _valid(TokenIn, request)
        actor = request_principal(request)
        raw = grant_membership.agent_token_issue(
            agent=_principal(data["principal"], actor=actor), scope=_scope(data["scope"], actor),
            max_role=data["role"], expires_at=data["expires_at"], actor=actor,
        )
        return Response({"token": raw, "scope": data["scope"], "role": data["role"], "expires_at": data["expires_at"],
                         "note": "Shown once; only its hash is kept."}, status=status.HTTP_201_CREATED)


class TokenRevokeView(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, token_id: int):
        principal_services.token_revoke(token_id=token_id, actor=request_principal(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ReviewQueueView(APIView):
    @extend_schema(responses=t.ReviewItemOut(many=True))
    def get(self, request):
        principal = request_principal(request)
        scope = _scope(request.query_params["scope"], principal) if request.query_params.get("scope") else None
        return Response([review_item(i) for i in review_queue(principal=principal, scope=scope)])


class RetentionPolicyView(APIView):
    @extend_schema(request=RetentionIn, responses=t.RetentionPolicyOut)
    def put(self, request):
        data = _valid(RetentionIn, request)
        actor = request_principal(request)
        policy = retention_policy_set(
            scope=_scope(data.pop("scope"), actor), actor=actor, **data,
        )
        return Response({"scope": policy.scope.path, "retire_unused_days": policy.retire_unused_days,
                         "archive_cold": policy.archive_cold, "cold_threshold": policy.cold_threshold,
                         "kinds": policy.kinds, "enabled": policy.enabled})


class SummaryView(APIView):
    @extend_schema(responses=t.SummaryOut)
    def get(self, request):
        principal = request_principal(request)
        summary = summary_get(scope=_scope(request.query_params.get("scope"), principal), actor=principal)
        return Response({"scope": summary.scope.path, "built_at": summary.built_at, "writer": summary.writer,
                         "lines": summary.lines, "text": summary.text})


