from django.db import models
from django.db.models.functions import Greatest, Least


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


class DisputeState(models.TextChoices):
    PROPOSED = "proposed", "Proposed"
    CONFIRMED = "confirmed", "Confirmed"
    DISMISSED = "dismissed", "Dismissed"


class Dispute(models.Model):
    """A `contradicts` link the system proposes between two unkeyed memories that seem to say different
    things about the same subject ("We use MySQL." / "The team has moved to PostgreSQL."), found by
    similarity and the wording of a change (governance/services/conflict.py). It is no Relation until a
    person decides: while proposed, both memories stay evidence and the packet marks the pair as in
    dispute; a person confirms (the one that holds supersedes the other) or dismisses it. A dismissed
    pair is kept, so the same pair is never proposed again."""

    newer = models.ForeignKey("governance.Memory", on_delete=models.CASCADE, related_name="disputes_newer")
    older = models.ForeignKey("governance.Memory", on_delete=models.CASCADE, related_name="disputes_older")
    similarity = models.FloatField()
    cues = models.JSONField(default=list, blank=True)  # the wording that made it a candidate
    reason = models.TextField(blank=True, default="")
    state = models.CharField(max_length=10, choices=DisputeState.choices, default=DisputeState.PROPOSED)
    holds = models.ForeignKey(
        "governance.Memory", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_by = models.ForeignKey("governance.Principal", null=True, blank=True, on_delete=models.SET_NULL)
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # One dispute per pair, whichever side is the newer: the worker and a person (or two workers)
            # proposing the same pair at once store one row (services/dispute.py).
            models.UniqueConstraint(
                Least("newer", "older"), Greatest("newer", "older"), name="dispute_unique_pair"
            ),
            models.CheckConstraint(condition=~models.Q(newer=models.F("older")), name="dispute_not_self"),
            models.CheckConstraint(
                condition=models.Q(state__in=[s.value for s in DisputeState]), name="dispute_state_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["newer", "state"], name="dispute_newer_state"),
            models.Index(fields=["older", "state"], name="dispute_older_state"),
        ]

    def __str__(self) -> str:
        return f"{self.newer_id} disputes {self.older_id} ({self.state})"
