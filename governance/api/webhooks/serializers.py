"""Input and Output shapes of webhooks and their deliveries. Inputs validate only; services do every write."""

from __future__ import annotations

from rest_framework import serializers

from governance.models import EventType, WebhookDelivery


class WebhookListInput(serializers.Serializer):
    """GET /webhooks: the query string (not in the schema)."""

    workspace = serializers.CharField(required=False, allow_blank=True, max_length=63)


class WebhookInput(serializers.Serializer):
    workspace = serializers.CharField(
        max_length=63, help_text="The workspace's slug (the first part of its paths)."
    )
    url = serializers.CharField(
        max_length=2048, help_text="http(s) URL of a public address; redirects are not followed."
    )
    event_types = serializers.ListField(
        child=serializers.ChoiceField(choices=EventType.values),
        min_length=1,
        max_length=len(EventType.values),
    )
    description = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    active = serializers.BooleanField(required=False, default=True)


class WebhookUpdateInput(serializers.Serializer):
    url = serializers.CharField(max_length=2048, required=False)
    event_types = serializers.ListField(
        child=serializers.ChoiceField(choices=EventType.values),
        min_length=1,
        max_length=len(EventType.values),
        required=False,
    )
    description = serializers.CharField(max_length=200, required=False, allow_blank=True)
    active = serializers.BooleanField(required=False)


class WebhookOutput(serializers.Serializer):
    id = serializers.IntegerField()
    workspace = serializers.CharField(source="workspace.slug")
    url = serializers.CharField()
    event_types = serializers.ListField(child=serializers.CharField())
    description = serializers.CharField()
    active = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class WebhookSecretOutput(WebhookOutput):
    secret = serializers.CharField(help_text="The signing secret: shown once, stored only encrypted.")
    note = serializers.CharField()


class DeliveryListInput(serializers.Serializer):
    """GET /webhooks/<id>/deliveries: the query string (not in the schema)."""

    state = serializers.ChoiceField(choices=WebhookDelivery.State.values, required=False)


class WebhookDeliveryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    subscription = serializers.IntegerField(source="subscription_id")
    event_id = serializers.UUIDField()
    event_type = serializers.CharField()
    state = serializers.CharField()
    attempts = serializers.IntegerField()
    last_status_code = serializers.IntegerField(allow_null=True)
    last_error = serializers.CharField(allow_blank=True)
    response_ms = serializers.IntegerField(allow_null=True)
    next_attempt_at = serializers.DateTimeField()
    last_attempt_at = serializers.DateTimeField(allow_null=True)
    delivered_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    body = serializers.JSONField(help_text="The event as sent (ids and hashes; never a memory's text).")
