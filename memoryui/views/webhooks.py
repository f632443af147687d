"""Webhooks: a workspace's outbound-event subscriptions (add, pause or resume, rotate the secret, delete)
and their delivery log (state, status code, attempts, time; failed ones only on demand) with a redeliver
button. Owners of the whole workspace only, as in the API (governance.permissions); a new secret is shown
once, on the page that answers the POST, and kept nowhere in the browser."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from governance.errors import DomainError, NotFound
from governance.models import EventType, Workspace
from governance.permissions import (
    NO_GRANT,
    Action,
    holders,
    standings,
    webhook_workspaces,
    workspace_root,
)
from governance.selectors import webhooks as sel
from governance.services import webhook as services
from memoryui.forms.webhooks import (  # noqa: F401  (its message, where it was)
    BAD_ACTION,
    WebhookActForm,
    WebhookCreateForm,
    WebhookPageForm,
    WebhookRedeliverForm,
)
from memoryui.views.base import cleaned, dashboard_view, page

NONE_MANAGED = "Webhooks are managed by the owners of a whole workspace (the owner role on its root scope)."


def _workspace(request, slug: str) -> Workspace | None:
    """The chosen workspace (checked), else the first one the viewer manages, else None."""
    if slug:
        return sel.workspace_for(request.principal, slug)
    return webhook_workspaces(request.principal).first()


def _url(workspace: Workspace | None, state: str = "") -> str:
    if workspace is None:
        return "/webhooks/"
    return "/webhooks/?" + urlencode({"workspace": workspace.slug, **({"state": state} if state else {})})


def _render(
    request,
    workspace: Workspace | None,
    *,
    error: DomainError | None = None,
    secret: dict | None = None,
    status: int = 200,
    form: dict | None = None,
    state: str = "",
):
    subscriptions = list(sel.subscriptions_in([workspace])) if workspace else []
    context = {
        "nav": "webhooks",
        "workspace": workspace,
        "workspaces": list(webhook_workspaces(request.principal)),
        "subscriptions": subscriptions,
        "deliveries": sel.deliveries_of(subscriptions, state) if subscriptions else [],
        "state": state,
        "event_types": EventType.choices,
        "error": error,
        "secret": secret,
        "form": form or {"event_types": list(EventType.values)},
        "none_managed": NONE_MANAGED,
    }
    if workspace is None:
        context.update(_who_to_ask(request.principal))
    return page(request, "dashboard/webhooks/index.html", context, status=status)


def _who_to_ask(principal) -> dict:
    """For a person who manages no webhook: what their grants let them do, and who owns each workspace."""
    standing = standings(principal)
    workspaces = {s.scope.workspace_id: s.scope.path.split("/")[0] for s in standing}
    return {
        "standing": standing,
        "no_grant": NO_GRANT,
        "webhook_owners": [
            (slug, holders(workspace_root(ws), Action.MANAGE_WEBHOOKS))
            for ws, slug in sorted(workspaces.items())
        ],
    }


@dashboard_view()
def webhooks(request):
    query = cleaned(WebhookPageForm(request.GET))
    return _render(request, _workspace(request, query["workspace"]), state=query["state"])


@require_POST
@dashboard_view()
def webhook_create(request):
    data = cleaned(WebhookCreateForm(request.POST))
    workspace = _workspace(request, data.pop("workspace"))
    if workspace is None:
        raise NotFound()
    form = data
    try:
        created = services.webhook_create(workspace=workspace, actor=request.principal, **form)
    except DomainError as exc:
        return _render(request, workspace, error=exc, status=exc.status, form=form)
    return _render(request, workspace, secret={"subscription": created.subscription, "value": created.secret})


@require_POST
@dashboard_view()
def webhook_act(request, webhook_id: int):
    sub = sel.subscription_for(request.principal, webhook_id)
    action = cleaned(WebhookActForm(request.POST))["action"]
    if action == "rotate":
        created = services.webhook_rotate_secret(subscription_id=sub.pk, actor=request.principal)
        return _render(
            request, sub.workspace, secret={"subscription": created.subscription, "value": created.secret}
        )
    if action in ("pause", "resume"):
        services.webhook_update(subscription_id=sub.pk, actor=request.principal, active=action == "resume")
        messages.success(request, f"Webhook to {sub.url} {'resumed' if action == 'resume' else 'paused'}.")
    else:
        services.webhook_delete(subscription_id=sub.pk, actor=request.principal)
        messages.success(request, f"Webhook to {sub.url} deleted, with its delivery log.")
    return redirect(_url(sub.workspace))


@require_POST
@dashboard_view()
def webhook_redeliver(request, delivery_id: int):
    state = cleaned(WebhookRedeliverForm(request.POST))["state"]
    delivery = services.webhook_redeliver(delivery_id=delivery_id, actor=request.principal)
    messages.success(request, f"Event {delivery.event_type} queued for redelivery.")
    return redirect(_url(delivery.subscription.workspace, state))
