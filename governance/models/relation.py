from django.db import models


class RelationKind(models.TextChoices):
    SUPERSEDES = "supersedes", "Supersedes"
    CONTRADICTS = "contradicts", "Contradicts"
    SUPPORTS = "supports", "Supports"
    DERIVED_FROM = "derived_from", "Derived from"


class Relation(models.Model):
    """A directed, explained link between two memories: `source` supersedes/contradicts/supports/
    is derived from `target`."""

    source = models.ForeignKey("governance.Memory", on_delete=models.CASCADE, related_name="relations_out")
    target = models.ForeignKey("governance.Memory", on_delete=models.CASCADE, related_name="relations_in")
    kind = models.CharField(max_length=12, choices=RelationKind.choices)
    reason = models.TextField(blank=True, default="")
    actor = models.ForeignKey("governance.Principal", null=True, blank=True, on_delete=models.SET_NULL)
    # Made by a person on the dashboard or the API (relation_link), not inferred by the system: a hand-made
    # `contradicts` brings its other end into the packet (governance/recall/adjudicate.py).
    by_hand = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "kind"], name="relation_unique"),
            models.CheckConstraint(
                condition=models.Q(kind__in=[k.value for k in RelationKind]), name="relation_kind_valid"
            ),
            models.CheckConstraint(condition=~models.Q(source=models.F("target")), name="relation_not_self"),
        ]
        indexes = [models.Index(fields=["target", "kind"])]

    def __str__(self) -> str:
        return f"{self.source_id} {self.kind} {self.target_id}"
