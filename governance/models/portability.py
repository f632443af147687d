from django.db import models


class ScopeImport(models.Model):
    """One import of an exported scope subtree (governance.services.portability): where from, into which
    scope, by whom, what it held. The source's audit events are kept beside it, read-only."""

    root = models.ForeignKey("governance.Scope", on_delete=models.PROTECT, related_name="imports")
    actor = models.ForeignKey(
        "governance.Principal", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source_installation = models.CharField(max_length=200)
    source_host = models.CharField(max_length=255, blank=True, default="")
    source_root = models.CharField(max_length=512)
    exported_at = models.DateTimeField()
    format_version = models.PositiveIntegerField()
    counts = models.JSONField(default=dict, blank=True)
    # The event this installation's chain holds for the import ("scope.import"), set when it commits.
    audit_event = models.ForeignKey(
        "governance.AuditEvent", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    imported_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"import of {self.source_root} ({self.source_installation}) into {self.root_id}"


class ImportedAuditEvent(models.Model):
    """An audit event of the source installation, kept as it was exported (its own hash and the hash it
    chained to there). It cannot join this installation's chain; the import's own event stands for them.
    UPDATE and DELETE are refused by a trigger, as for the audit log."""

    scope_import = models.ForeignKey(ScopeImport, on_delete=models.PROTECT, related_name="audit_events")
    source_id = models.BigIntegerField()
    at = models.DateTimeField()
    actor_name = models.CharField(max_length=150)
    action = models.CharField(max_length=50)
    target_type = models.CharField(max_length=30)
    target_id = models.CharField(max_length=64)
    # The memory (or scope) here that the event's target became, when the import carried it.
    local_target_id = models.BigIntegerField(null=True, blank=True)
    scope_path = models.CharField(max_length=512, blank=True, default="")
    before_status = models.CharField(max_length=20, blank=True, default="")
    after_status = models.CharField(max_length=20, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        indexes = [models.Index(fields=["target_type", "local_target_id"], name="imported_audit_target")]

    def __str__(self) -> str:
        return f"{self.action} {self.target_type}:{self.target_id} (imported)"
