"""Outbound events: a workspace's webhook subscriptions, their delivery log, redelivery. Owners of the
whole workspace only (governance.permissions.require_manage_webhooks); a secret is returned once, by
create and by rotate-secret. See docs/webhooks.md for the events, the body and the signature."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.auth import request_principal
from governance.api.limits import GOVERNANCE
from governance.api.validation import valid
from governance.api.webhooks.serializers import (
    DeliveryListInput,
    WebhookDeliveryOutput,
    WebhookInput,
    WebhookListInput,
    WebhookOutput,
    WebhookSecretOutput,
    WebhookUpdateInput,
)
from governance.permissions import webhook_workspaces
from governance.selectors import webhooks as sel
from governance.services import webhook as services

SECRET_NOTE = "Shown once: store it now. Verify each request's X-Memgov-Signature with it (docs/webhooks.md)."


def _with_secret(created: services.Created) -> dict:
    return {**WebhookOutput(created.subscription).data, "secret": created.secret, "note": SECRET_NOTE}


class WebhookListView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(responses=WebhookOutput(many=True))
    def get(self, request: Request) -> Response:
        actor = request_principal(request)
        query = valid(WebhookListInput, request.query_params)
        if query.get("workspace"):
            workspaces = [sel.workspace_for(actor, query["workspace"])]
        else:
            workspaces = webhook_workspaces(actor)
        return Response(WebhookOutput(sel.subscriptions_in(workspaces), many=True).data)

    @extend_schema(request=WebhookInput, responses={201: WebhookSecretOutput})
    def post(self, request: Request) -> Response:
        data = valid(WebhookInput, request.data)
        actor = request_principal(request)
        created = services.webhook_create(
            workspace=sel.workspace_for(actor, data.pop("workspace")),
            actor=actor,
            **data,
        )
        return Response(_with_secret(created), status=status.HTTP_201_CREATED)


class WebhookDetailView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(responses=WebhookOutput)
    def get(self, request: Request, webhook_id: int) -> Response:
        return Response(WebhookOutput(sel.subscription_for(request_principal(request), webhook_id)).data)

    @extend_schema(request=WebhookUpdateInput, responses=WebhookOutput)
    def patch(self, request: Request, webhook_id: int) -> Response:
        data = valid(WebhookUpdateInput, request.data)
        sub = services.webhook_update(subscription_id=webhook_id, actor=request_principal(request), **data)
        return Response(WebhookOutput(sub).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, webhook_id: int) -> Response:
        services.webhook_delete(subscription_id=webhook_id, actor=request_principal(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookRotateSecretView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(request=None, responses=WebhookSecretOutput)
    def post(self, request: Request, webhook_id: int) -> Response:
        created = services.webhook_rotate_secret(subscription_id=webhook_id, actor=request_principal(request))
        return Response(_with_secret(created))


class WebhookDeliveriesView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(responses=WebhookDeliveryOutput(many=True))
    def get(self, request: Request, webhook_id: int) -> Response:
        query = valid(DeliveryListInput, request.query_params)
        sub = sel.subscription_for(request_principal(request), webhook_id)
        return Response(
            WebhookDeliveryOutput(sel.deliveries_of([sub], query.get("state", "")), many=True).data
        )


class WebhookRedeliverView(APIView):
    rate_bucket = GOVERNANCE

    @extend_schema(request=None, responses={202: WebhookDeliveryOutput})
    def post(self, request: Request, delivery_id: int) -> Response:
        delivery = services.webhook_redeliver(delivery_id=delivery_id, actor=request_principal(request))
        return Response(WebhookDeliveryOutput(delivery).data, status=status.HTTP_202_ACCEPTED)
