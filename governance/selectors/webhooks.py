"""Reads of webhook subscriptions and their delivery log, for the API and the dashboard. Callers have
asked governance.permissions first (require_manage_webhooks / webhook_workspaces); these only filter,
join and count, in a fixed number of queries."""

from __future__ import annotations

from django.db.models import Count, Max, Q, QuerySet

from governance.errors import NotFound
from governance.models import Principal, WebhookDelivery, WebhookSubscription, Workspace
from governance.permissions import require_manage_webhooks

DELIVERY_PAGE = 100


def subscriptions_in(workspaces) -> QuerySet[WebhookSubscription]:
    """The subscriptions of these workspaces, with their failed and pending counts and last delivery time."""
    return (
        WebhookSubscription.objects.filter(workspace__in=workspaces)
        .select_related("workspace", "created_by")
        .annotate(
            failed_count=Count("deliveries", filter=Q(deliveries__state=WebhookDelivery.State.FAILED)),
            pending_count=Count("deliveries", filter=Q(deliveries__state=WebhookDelivery.State.PENDING)),
            last_delivery_at=Max("deliveries__created_at"),
        )
        .order_by("workspace__slug", "pk")
    )


def subscription_for(principal: Principal | None, subscription_id: int) -> WebhookSubscription:
    """The subscription, if `principal` manages its workspace; NotFound for unknown ids."""
    sub = WebhookSubscription.objects.select_related("workspace").filter(pk=subscription_id).first()
    if sub is None:
        raise NotFound()
    require_manage_webhooks(principal, sub.workspace)
    return sub


def workspace_for(principal: Principal | None, slug: str) -> Workspace:
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None:
        raise NotFound()
    require_manage_webhooks(principal, workspace)
    return workspace


def deliveries_of(subscriptions, state: str = "", limit: int = DELIVERY_PAGE) -> list[WebhookDelivery]:
    """The newest deliveries of these subscriptions (one state, or all), newest first."""
    qs = WebhookDelivery.objects.filter(subscription__in=subscriptions).select_related("subscription")
    if state:
        qs = qs.filter(state=state)
    return list(qs.order_by("-created_at", "-pk")[:limit])
