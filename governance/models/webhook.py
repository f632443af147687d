"""Outbound events: a workspace's webhook subscriptions and the log of every delivery to them
(docs/webhooks.md). The events are made from outbox rows by the `webhooks` propagation store."""

from __future__ import annotations

import base64
import hashlib
import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models


class EventType(models.TextChoices):
    MEMORY_CONFIRMED = "memory.confirmed", "A memory was confirmed (is now in force)"
    MEMORY_SUPERSEDED = "memory.superseded", "A memory was superseded by a newer revision"
    MEMORY_RETIRED = "memory.retired", "A memory was retired"
    MEMORY_FORGOTTEN = "memory.forgotten", "A memory was forgotten"
    GRANT_CHANGED = "grant.changed", "A grant on a scope was added or revoked"
    REVIEW_WAITING = "review.waiting", "A proposal waits for a reviewer"


def _fernet():
    """Secrets are stored encrypted (Fernet) under a key derived from WEBHOOK_SECRET_KEY, or SECRET_KEY
    when that is empty; SECRET_KEY_FALLBACKS still decrypt, so rotating SECRET_KEY keeps subscriptions
    working until each is rotated."""
    from cryptography.fernet import Fernet, MultiFernet

    own = getattr(settings, "WEBHOOK_SECRET_KEY", "") or ""
    roots = [own] if own else [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    keys = [
        base64.urlsafe_b64encode(hashlib.sha256(b"memgov-webhook-secret\x00" + r.encode()).digest())
        for r in roots
    ]
    return MultiFernet([Fernet(k) for k in keys])


class WebhookSubscription(models.Model):
    """One receiver of a workspace's change events: where to POST, which event types, and the secret the
    bodies are signed with (encrypted at rest: the service must sign, so it cannot keep only a hash)."""

    workspace = models.ForeignKey("governance.Workspace", on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=2048)
    event_types = ArrayField(models.CharField(max_length=32, choices=EventType.choices))
    description = models.CharField(max_length=200, blank=True, default="")
    secret_encrypted = models.TextField()
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        "governance.Principal", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["workspace"], name="webhook_active_ws", condition=models.Q(active=True))
        ]
        constraints = [
            models.CheckConstraint(condition=~models.Q(event_types=[]), name="webhook_has_event_types"),
        ]

    def __str__(self) -> str:
        return f"webhook #{self.pk} of {self.workspace_id} → {self.url}"

    def set_secret(self, raw: str) -> None:
        self.secret_encrypted = _fernet().encrypt(raw.encode()).decode()

    def secret(self) -> str:
        return _fernet().decrypt(self.secret_encrypted.encode()).decode()


class WebhookDelivery(models.Model):
    """One event for one subscription: its frozen body (never a memory's text), and how sending it went."""

    class State(models.TextChoices):
        PENDING = "pending", "Pending (will be sent or retried)"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed (retries used up; a person may redeliver)"

    subscription = models.ForeignKey(WebhookSubscription, on_delete=models.CASCADE, related_name="deliveries")
    outbox = models.ForeignKey(
        "governance.Outbox", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The same id for every subscription and every attempt of one event: the receiver's idempotency key.
    event_id = models.UUIDField(default=uuid.uuid4)
    event_type = models.CharField(max_length=32, choices=EventType.choices)
    body = models.JSONField()
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    # A worker sending it holds it this long; one that dies leaves the claim to expire.
    claimed_until = models.DateTimeField(null=True, blank=True)
    # When the message last handed to the broker for it becomes runnable (now, or now + its countdown):
    # the reconciler queues it again only once that is WEBHOOK_REQUEUE_AFTER_SECONDS past, so a row
    # waiting behind a backlog is not queued once more on every pass (propagation/webhooks.py).
    queued_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    response_ms = models.PositiveIntegerField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(fields=["subscription", "-created_at"], name="webhook_delivery_log"),
            models.Index(
                fields=["next_attempt_at"], name="webhook_delivery_due", condition=models.Q(state="pending")
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["subscription", "event_id"], name="webhook_delivery_once"),
            models.CheckConstraint(
                condition=models.Q(state__in=["pending", "delivered", "failed"]),
                name="webhook_delivery_state_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.event_id} → webhook #{self.subscription_id} ({self.state})"
