import hashlib
import json

from django.db import models

GENESIS_HASH = "0" * 64


class AuditEvent(models.Model):
    """Append-only, hash-chained record of every change of state or grant. Each row carries the
    previous row's hash; UPDATE and DELETE are refused by a trigger. Never holds a memory's text."""

    at = models.DateTimeField()
    actor = models.ForeignKey("governance.Principal", null=True, on_delete=models.SET_NULL, related_name="+")
    actor_name = models.CharField(max_length=150)
    action = models.CharField(max_length=50)
    target_type = models.CharField(max_length=30)
    target_id = models.CharField(max_length=64)
    scope_path = models.CharField(max_length=512, blank=True, default="")
    # Which scope and workspace the event concerns, by identity: a path or slug is freed by a rename and
    # may be taken again, an id never is (the audit page, exports and imports filter by these). No
    # database constraint: the chain outlives a dropped evaluation sandbox. Not part of the hash (rows
    # written before they existed were filled in by migration 0027).
    scope = models.ForeignKey(
        "governance.Scope",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    workspace = models.ForeignKey(
        "governance.Workspace",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    before_status = models.CharField(max_length=20, blank=True, default="")
    after_status = models.CharField(max_length=20, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    class Meta:
        indexes = [
            models.Index(fields=["target_type", "target_id"]),
            models.Index(fields=["-at"]),
            # The audit tab filters by action or actor and pages by id (keyset): one range scan each.
            models.Index(fields=["action", "id"], name="audit_action_id"),
            models.Index(fields=["actor_name", "id"], name="audit_actor_id"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.target_type}:{self.target_id} by {self.actor_name}"

    def compute_hash(self) -> str:
        body = {
            "at": self.at.isoformat(),
            "actor": self.actor_name,
            "action": self.action,
            "target": f"{self.target_type}:{self.target_id}",
            "scope": self.scope_path,
            "before": self.before_status,
            "after": self.after_status,
            "reason": self.reason,
            "data": self.data,
            "prev": self.prev_hash,
        }
        return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
