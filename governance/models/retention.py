from django.contrib.postgres.fields import ArrayField
from django.db import models


class RetentionPolicy(models.Model):
    """How long memories of a scope's subtree live unused: retire active memories not used for N days,
    and archive cold ones (activation below a threshold: out of the hot set, still findable). And how long
    stored turns (context packets) stay in the hot table: older than N days or beyond the newest N of a
    scope, they are copied into the turn archive and deleted (governance/services/turn_retention.py)."""

    scope = models.OneToOneField(
        "governance.Scope", on_delete=models.CASCADE, related_name="retention_policy"
    )
    retire_unused_days = models.PositiveIntegerField(null=True, blank=True)
    archive_cold = models.BooleanField(default=False)
    cold_threshold = models.FloatField(null=True, blank=True)  # None: settings.MEMORY_COLD_THRESHOLD
    # Kinds the policy applies to; empty means every kind except episodic traces, which are the record.
    kinds = ArrayField(models.CharField(max_length=12), default=list, blank=True)
    enabled = models.BooleanField(default=True)
    updated_by = models.ForeignKey("governance.Principal", null=True, blank=True, on_delete=models.SET_NULL)
    updated_at = models.DateTimeField(auto_now=True)
    last_run_at = models.DateTimeField(null=True, blank=True)
    # Stored turns: None means no limit. The count is per scope of the subtree.
    turns_max_age_days = models.PositiveIntegerField(null=True, blank=True)
    turns_max_count = models.PositiveIntegerField(null=True, blank=True)
    archive_turns = models.BooleanField(default=True)  # False: pruned turns are deleted, not archived
    # Running totals of what this policy removed from the turn table, read by /metrics.
    turns_pruned = models.BigIntegerField(default=0)
    turns_archived = models.BigIntegerField(default=0)

    class Meta:
        verbose_name_plural = "retention policies"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(retire_unused_days__isnull=True) | models.Q(retire_unused_days__gte=1),
                name="retention_days_positive",
            ),
            models.CheckConstraint(
                condition=models.Q(cold_threshold__isnull=True)
                | models.Q(cold_threshold__gt=0, cold_threshold__lt=10),
                name="retention_threshold_range",
            ),
            models.CheckConstraint(
                condition=models.Q(turns_max_age_days__isnull=True) | models.Q(turns_max_age_days__gte=1),
                name="retention_turn_days_positive",
            ),
            models.CheckConstraint(
                condition=models.Q(turns_max_count__isnull=True) | models.Q(turns_max_count__gte=1),
                name="retention_turn_count_positive",
            ),
        ]

    def __str__(self) -> str:
        return f"retention @ {self.scope_id}"
