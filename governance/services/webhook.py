"""A workspace's webhook subscriptions: create, change, delete, rotate the secret, redeliver. Owners of
the whole workspace only (permissions.require_manage_webhooks); every change audited. A secret is shown
once, in the result of create and rotate; only its encrypted form is kept (docs/webhooks.md)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from governance.errors import InvalidInput, NotFound
from governance.models import EventType, Principal, WebhookDelivery, WebhookSubscription, Workspace
from governance.permissions import require_manage_webhooks, workspace_root
from governance.propagation.webhook_transport import TargetRefused, check_url
from governance.services.audit import AuditEntry, audit_record

EVENT_TYPES_REQUIRED = "Choose at least one event type: " + ", ".join(EventType.values) + "."
EVENT_TYPE_UNKNOWN = "Unknown event type; the event types are: " + ", ".join(EventType.values) + "."
DESCRIPTION_TOO_LONG = "A description has at most 200 characters."
MAX_SUBSCRIPTIONS = 50  # per workspace: each one is a request per event
TOO_MANY = f"A workspace has at most {MAX_SUBSCRIPTIONS} webhook subscriptions."


@dataclass
class Created:
    subscription: WebhookSubscription
    secret: str  # shown once


def _new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def _clean_url(url: str) -> str:
    url = (url or "").strip()
    try:
        check_url(url)
    except TargetRefused as exc:
        raise InvalidInput(exc.message, field="url") from exc
    return url


def _clean_types(event_types) -> list[str]:
    if not isinstance(event_types, list | tuple) or not event_types:
        raise InvalidInput(EVENT_TYPES_REQUIRED, field="event_types")
    if any(t not in EventType.values for t in event_types):
        raise InvalidInput(EVENT_TYPE_UNKNOWN, field="event_types")
    return sorted(set(event_types))


def _clean_description(description: str) -> str:
    description = (description or "").strip()
    if len(description) > 200:
        raise InvalidInput(DESCRIPTION_TOO_LONG, field="description")
    return description


def _audit(
    actor: Principal | None,
    action: str,
    sub: WebhookSubscription,
    before: str = "",
    after: str = "",
    data: dict | None = None,
) -> None:
    audit_record(
        actor=actor,
        entry=AuditEntry(
            action,
            "webhook",
            str(sub.pk),
            workspace_root(sub.workspace).path,
            before,
            after,
            "",
            {"url": sub.url, "event_types": list(sub.event_types), **(data or {})},
        ),
    )


def webhook_create(
    *,
    workspace: Workspace,
    url: str,
    event_types: list[str],
    actor: Principal | None,
    description: str = "",
    active: bool = True,
) -> Created:
    """Subscribe `url` to the workspace's events of `event_types`; the result carries the new secret."""
    require_manage_webhooks(actor, workspace)
    url, types, description = _clean_url(url), _clean_types(event_types), _clean_description(description)
    raw = _new_secret()
    with transaction.atomic():
        Workspace.objects.select_for_update().filter(pk=workspace.pk).first()  # count and insert in turn
        if WebhookSubscription.objects.filter(workspace=workspace).count() >= MAX_SUBSCRIPTIONS:
            raise InvalidInput(TOO_MANY, field="url")
        sub = WebhookSubscription(
            workspace=workspace,
            url=url,
            event_types=types,
            description=description,
            active=bool(active),
            created_by=actor,
        )
        sub.set_secret(raw)
        sub.save()
        _audit(actor, "webhook.create", sub, "", "active" if sub.active else "paused")
    return Created(sub, raw)


def _locked(subscription_id: int, actor: Principal | None) -> WebhookSubscription:
    sub = (
        WebhookSubscription.objects.select_for_update()
        .select_related("workspace")
        .filter(pk=subscription_id)
        .first()
    )
    if sub is None:
        raise NotFound()
    require_manage_webhooks(actor, sub.workspace)
    return sub


def webhook_update(
    *,
    subscription_id: int,
    actor: Principal | None,
    url: str | None = None,
    event_types: list[str] | None = None,
    description: str | None = None,
    active: bool | None = None,
) -> WebhookSubscription:
    """Change what is given; what is None stays."""
    with transaction.atomic():
        sub = _locked(subscription_id, actor)
        before = "active" if sub.active else "paused"
        fields = []
        if url is not None:
            sub.url = _clean_url(url)
            fields.append("url")
        if event_types is not None:
            sub.event_types = _clean_types(event_types)
            fields.append("event_types")
        if description is not None:
            sub.description = _clean_description(description)
            fields.append("description")
        if active is not None:
            sub.active = bool(active)
            fields.append("active")
        if fields:
            sub.save(update_fields=[*fields, "updated_at"])
            _audit(
                actor,
                "webhook.update",
                sub,
                before,
                "active" if sub.active else "paused",
                {"changed": fields},
            )
        return sub


def webhook_delete(*, subscription_id: int, actor: Principal | None) -> None:
    """Remove the subscription and its delivery log."""
    with transaction.atomic():
        sub = _locked(subscription_id, actor)
        _audit(actor, "webhook.delete", sub, "active" if sub.active else "paused", "deleted")
        sub.delete()


def webhook_rotate_secret(*, subscription_id: int, actor: Principal | None) -> Created:
    """A new secret at once; the old one signs nothing more (retries of older events use the new one)."""
    raw = _new_secret()
    with transaction.atomic():
        sub = _locked(subscription_id, actor)
        sub.set_secret(raw)
        sub.save(update_fields=["secret_encrypted", "updated_at"])
        _audit(actor, "webhook.rotate_secret", sub)
    return Created(sub, raw)


def webhook_redeliver(*, delivery_id: int, actor: Principal | None) -> WebhookDelivery:
    """Send a delivery again (failed or delivered): a fresh round of attempts with the same event id and
    body, so a receiver that already has it can tell."""
    from governance.propagation.webhooks import queue_deliveries

    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(of=("self",))
            .select_related("subscription__workspace")
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None:
            raise NotFound()
        require_manage_webhooks(actor, delivery.subscription.workspace)
        before = delivery.state
        delivery.state = WebhookDelivery.State.PENDING
        delivery.attempts = 0
        delivery.next_attempt_at = timezone.now()
        delivery.claimed_until = None
        delivery.save(update_fields=["state", "attempts", "next_attempt_at", "claimed_until"])
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "webhook.redeliver",
                "webhook_delivery",
                str(delivery.pk),
                workspace_root(delivery.subscription.workspace).path,
                before,
                WebhookDelivery.State.PENDING,
                "",
                {
                    "subscription": delivery.subscription_id,
                    "event_id": str(delivery.event_id),
                    "event_type": delivery.event_type,
                },
            ),
        )
        transaction.on_commit(lambda: queue_deliveries([delivery.pk]))
        return delivery
