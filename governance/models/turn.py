from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models


class Turn(models.Model):
    """One assembled context packet, stored with its inputs, what was included and skipped and why,
    and per-stage timings, so it can be shown and replayed."""

    # No single-column index: (scope, session, -created_at) below serves scope lookups too.
    scope = models.ForeignKey(
        "governance.Scope", on_delete=models.PROTECT, related_name="turns", db_index=False
    )
    principal = models.ForeignKey("governance.Principal", null=True, on_delete=models.SET_NULL)
    session = models.CharField(max_length=200, blank=True, default="")
    query = models.TextField()
    strategy = models.CharField(max_length=20, default="full")
    as_of = models.DateTimeField(null=True, blank=True)
    request = models.JSONField(default=dict)
    packet = models.JSONField(default=dict)
    text = models.TextField(blank=True, default="")
    budget_limit = models.PositiveIntegerField(default=0)
    budget_used = models.PositiveIntegerField(default=0)
    token_counter = models.CharField(max_length=50, blank=True, default="")
    trace = models.JSONField(default=dict)
    replay_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["scope", "session", "-created_at"])]

    def __str__(self) -> str:
        return f"turn {self.pk} @ {self.scope_id}"


class TurnMemory(models.Model):
    """Which memories a stored turn cites, in which slot: lets a forget find every packet to redact."""

    # Indexes: turn_memory_unique (turn, memory, slot) serves lookups by turn, the Meta index by memory;
    # every stored packet inserts ~30 of these rows, so no index twice.
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="cited", db_index=False)
    memory = models.ForeignKey(
        "governance.Memory", on_delete=models.CASCADE, related_name="cited_by_turns", db_index=False
    )
    slot = models.CharField(max_length=20)
    included = models.BooleanField(default=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["turn", "memory", "slot"], name="turn_memory_unique")]
        indexes = [models.Index(fields=["memory"])]

    def __str__(self) -> str:
        return f"turn {self.turn_id} cites {self.memory_id} in {self.slot}"


class TurnArchive(models.Model):
    """A stored turn pruned from the hot table by a retention policy: the same columns, keyed by the turn's
    own id, with the ids of the memories it cited (GIN-indexed) so a forget finds and redacts every archived
    copy as it does the live turns (governance/propagation/turns.py)."""

    turn_id = models.BigIntegerField(primary_key=True)
    scope = models.ForeignKey("governance.Scope", on_delete=models.CASCADE, related_name="archived_turns")
    principal = models.ForeignKey(
        "governance.Principal", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    session = models.CharField(max_length=200, blank=True, default="")
    query = models.TextField()
    strategy = models.CharField(max_length=20, default="full")
    as_of = models.DateTimeField(null=True, blank=True)
    request = models.JSONField(default=dict)
    packet = models.JSONField(default=dict)
    text = models.TextField(blank=True, default="")
    budget_limit = models.PositiveIntegerField(default=0)
    budget_used = models.PositiveIntegerField(default=0)
    token_counter = models.CharField(max_length=50, blank=True, default="")
    trace = models.JSONField(default=dict)
    replay_of_id = models.BigIntegerField(null=True, blank=True)
    cited = ArrayField(models.BigIntegerField(), default=list, blank=True)
    created_at = models.DateTimeField()
    archived_at = models.DateTimeField()

    class Meta:
        indexes = [
            GinIndex(fields=["cited"], name="turnarchive_cited"),
            models.Index(fields=["scope", "-created_at"], name="turnarchive_scope_created"),
        ]

    def __str__(self) -> str:
        return f"archived turn {self.turn_id} @ {self.scope_id}"
