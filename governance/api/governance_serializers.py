"""Input and output shapes of the governance API. Inputs only validate; writes happen in services."""

from __future__ import annotations

from rest_framework import serializers

from governance.masking import masked_text
from governance.models import Grant, Memory, OutboxDelivery, Role


class ReasonIn(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class RequiredReasonIn(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)


class ForgetIn(serializers.Serializer):
    mode = serializers.ChoiceField(choices=["soft", "hard"])
    reason = serializers.CharField(max_length=2000)


class GrantIn(serializers.Serializer):
    principal = serializers.CharField(max_length=150)
    scope = serializers.CharField(max_length=512)
    role = serializers.ChoiceField(choices=Role.values)


class MemberIn(serializers.Serializer):
    member = serializers.CharField(max_length=150)


class TokenIn(serializers.Serializer):
    principal = serializers.CharField(max_length=150)
    scope = serializers.CharField(max_length=512, help_text="The token acts only in this scope's subtree.")
    role = serializers.ChoiceField(choices=Role.values, help_text="The highest role the token may use.")
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class TokenOut(serializers.Serializer):
    id = serializers.IntegerField()
    principal = serializers.CharField(source="principal.name")
    prefix = serializers.CharField()
    scope = serializers.CharField(source="scope.path", allow_null=True, default=None)
    role = serializers.CharField(source="max_role")
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)


class RetentionIn(serializers.Serializer):
    scope = serializers.CharField(max_length=512)
    retire_unused_days = serializers.IntegerField(required=False, allow_null=True, min_value=1, default=None)
    archive_cold = serializers.BooleanField(required=False, default=False)
    cold_threshold = serializers.FloatField(required=False, allow_null=True, default=None)
    kinds = serializers.ListField(child=serializers.CharField(max_length=12), required=False, default=list)
    enabled = serializers.BooleanField(required=False, default=True)


class GrantOut(serializers.ModelSerializer):
    principal = serializers.CharField(source="principal.name")
    principal_kind = serializers.CharField(source="principal.kind")
    scope = serializers.CharField(source="scope.path")
    granted_by = serializers.CharField(source="granted_by.name", default=None, allow_null=True)

    class Meta:
        model = Grant
        fields = ["id", "principal", "principal_kind", "scope", "role", "granted_by", "created_at"]


class MemoryStateOut(serializers.ModelSerializer):
    scope = serializers.CharField(source="scope.path")
    approvals = serializers.SerializerMethodField()
    approvals_needed = serializers.SerializerMethodField()

    class Meta:
        model = Memory
        fields = ["id", "scope", "kind", "key", "revision", "status", "tier", "approvals", "approvals_needed",
                  "purged_at", "updated_at"]

    def get_approvals(self, memory: Memory) -> int:
        from governance.permissions import approvers

        return len(approvers(memory))

    def get_approvals_needed(self, memory: Memory) -> int:
        from governance.permissions import approvals_needed

        # memory_confirm keeps a higher count on the row when the memory would replace a long-term rule.
        return max(approvals_needed(memory), int(memory.meta.get("approvals_needed") or 1))


def outbox_state(outbox) -> dict:
    deliveries = {d.store: d for d in outbox.deliveries.all()}
    return {
        "id": outbox.pk,
        "topic": outbox.topic,
        "state": outbox.state,
        "created_at": outbox.created_at,
        "done_at": outbox.done_at,
        "stores": {
            store: {"state": d.state, "attempts": d.attempts, "done_at": d.done_at,
                    "error": d.error if d.state == OutboxDelivery.State.FAILED else ""}
            for store, d in sorted(deliveries.items())
        },
    }


def review_item(item) -> dict:
    def brief(m):
        # A supporting episode forgotten since the proposal was made shows no text (governance.masking).
        return {"id": m.pk, "scope": m.scope.path, "kind": m.kind, "key": m.key, "revision": m.revision,
                "status": m.status, "text": masked_text(m.status, m.text), "session": m.session}

    return {
        "kind": item.kind,
        "memory": {**brief(item.memory), "tier": item.memory.tier, "source_kind": item.memory.source_kind},
        "supporting_episodes": [brief(e) for e in item.supporting],
        "conflicting": brief(item.conflicting) if item.conflicting else None,
        "approvals": item.approvals,
        "approvals_needed": item.approvals_needed,
        "can_confirm": item.can_confirm,
    }
