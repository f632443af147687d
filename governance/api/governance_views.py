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
    outbox_state,
    review_item,
)
from governance.errors import InvalidInput, NotFound, PermissionDenied
from governance.models import Grant, Outbox, Principal, Scope
from governance.permissions import AUDIT_VERIFY_DENIED, Action, can_verify_audit, readable_scopes, require
from governance.selectors.review import review_queue
from governance.services import grant_membership
from governance.services import memory as memory_services
from governance.services import principal as principal_services
from governance.services.audit import audit_verify_chain
from governance.services.retention import retention_policy_set
from governance.services.summary import summary_get

UNKNOWN_PRINCIPAL = "No principal with this name."


def _scope(path: str | None, principal) -> Scope:
    scope = Scope.objects.filter(path=(path or "").strip().strip("/")).first()
    if scope is None:
        raise NotFound()
    require(principal, scope, Action.READ)
    return scope


def _principal(name: str, field: str = "principal") -> Principal:
    found = Principal.objects.filter(name=name).first()
    if found is None:
        raise InvalidInput(UNKNOWN_PRINCIPAL, field=field)
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
        return Response(MemoryStateOut(memory).data)


class MemoryForgetView(APIView):
    """202: the memory is out of every read now; the derived stores follow (state per store)."""

    @extend_schema(request=ForgetIn, responses={202: t.ForgetOut})
    def post(self, request, memory_id: int):
        data = _valid(ForgetIn, request)
        memory = memory_services.memory_forget(memory_id=memory_id, actor=request_principal(request),
                                               reason=data["reason"], hard=data["mode"] == "hard")
        outbox = (Outbox.objects.filter(memory=memory, topic="memory.forgotten").prefetch_related("deliveries")
                  .order_by("-pk").first())
        body = {"memory": MemoryStateOut(memory).data, "mode": data["mode"],
                "propagation": outbox_state(outbox) if outbox else None}
        return Response(body, status=status.HTTP_202_ACCEPTED)


class OutboxView(APIView):
    @extend_schema(responses=t.OutboxStateOut)
    def get(self, request, outbox_id: int):
        principal = request_principal(request)
        outbox = Outbox.objects.select_related("memory__scope").prefetch_related("deliveries").filter(pk=outbox_id).first()
        if outbox is None:
            raise NotFound()
        scope = outbox.memory.scope if outbox.memory_id else Scope.objects.filter(
            pk=outbox.payload.get("scope_id")).first()
        if scope is None:
            if not can_verify_audit(principal):  # a batch row without one scope: owners only
                raise NotFound()
        else:
            require(principal, scope, Action.READ)
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
            grants = grants.filter(scope__in=readable_scopes(principal))
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
        grant_membership.group_member_add(group=_principal(group, "group"), member=_principal(data["member"], "member"),
                                          actor=request_principal(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class GroupMemberView(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, group: str, member: str):
        grant_membership.group_member_remove(group=_principal(group, "group"), member=_principal(member, "member"),
                                             actor=request_principal(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenIssueView(APIView):
    @extend_schema(request=TokenIn, responses={201: t.TokenIssuedOut})
    def post(self, request):
        data = _valid(TokenIn, request)
        raw = grant_membership.agent_token_issue(agent=_principal(data["principal"]), actor=request_principal(request))
        return Response({"token": raw, "note": "Shown once; only its hash is kept."}, status=status.HTTP_201_CREATED)


class TokenRevokeView(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, token_id: int):
        grant_membership.agent_token_revoke(token_id=token_id, actor=request_principal(request))
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


