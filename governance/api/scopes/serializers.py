"""Input and Output shapes of the scopes. Inputs validate only; services do every write."""

from __future__ import annotations

from rest_framework import serializers


class ScopeCreateInput(serializers.Serializer):
    parent = serializers.CharField(max_length=512, help_text="Path of an existing scope you may write in.")
    name = serializers.CharField(
        max_length=200, help_text="The new child's name: lowercase letters, digits, - and _."
    )


class ScopeListInput(serializers.Serializer):
    under = serializers.CharField(
        required=False, max_length=512, help_text="Only this scope and its subtree."
    )


class ScopeOutput(serializers.Serializer):
    id = serializers.IntegerField()
    path = serializers.CharField()
    name = serializers.CharField()
    parent = serializers.CharField(source="parent.path", allow_null=True, default=None)
    workspace = serializers.CharField(source="workspace.slug")
    created_at = serializers.DateTimeField()


class ScopeCreatedOutput(ScopeOutput):
    created = serializers.BooleanField(
        help_text="False when the scope already existed (then the status is 200)."
    )
