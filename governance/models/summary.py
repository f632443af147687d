from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models


class Summary(models.Model):
    """The derived hand-off summary of one scope, rebuilt in place (never versioned: an old version would
    keep the text of a memory forgotten since). Every line cites the memory ids it was built from."""

    scope = models.OneToOneField("governance.Scope", on_delete=models.CASCADE, related_name="summary")
    # [{"section": "goal" | "constraints" | ..., "text": str, "memory_ids": [int, ...]}, ...]
    lines = models.JSONField(default=list)
    text = models.TextField(blank=True, default="")
    # Every memory id any line cites: a GIN index answers "which summaries cite memory m?".
    cited_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    writer = models.CharField(max_length=50, default="deterministic")
    stale = models.BooleanField(default=False)
    stale_reason = models.CharField(max_length=200, blank=True, default="")
    built_at = models.DateTimeField()
    built_by = models.ForeignKey("governance.Principal", null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        verbose_name_plural = "summaries"
        indexes = [GinIndex(fields=["cited_ids"], name="summary_cited_ids_gin")]

    def __str__(self) -> str:
        return f"summary of {self.scope_id}{' (stale)' if self.stale else ''}"
