from django.db import models

# Every derived copy of memory data that a change must reach. Each outbox row gets one delivery per store.
# `webhooks` (outbound events) is added only to rows that a webhook subscription takes.
DERIVED_STORES = ("embedding", "keyword", "cache", "summaries", "turns", "webhooks")


class Outbox(models.Model):
    """One change that derived stores must learn of, written in the same transaction as the change."""

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        DONE = "done", "Done"

    topic = models.CharField(
        max_length=40
    )  # memory.created, memory.status, memory.forgotten, grant.changed …
    memory = models.ForeignKey("governance.Memory", null=True, blank=True, on_delete=models.CASCADE)
    payload = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "outbox"
        indexes = [
            models.Index(fields=["created_at"], name="outbox_pending", condition=models.Q(state="pending"))
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(state__in=["pending", "done"]), name="outbox_state_valid"
            )
        ]

    def __str__(self) -> str:
        return f"{self.topic} #{self.pk} ({self.state})"


class OutboxDelivery(models.Model):
    """That one derived store has applied one outbox row (claimed with a conditional UPDATE)."""

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        DONE = "done", "Done"
        FAILED = "failed", "Failed (will be retried by the reconciler)"

    outbox = models.ForeignKey(Outbox, on_delete=models.CASCADE, related_name="deliveries")
    store = models.CharField(max_length=20)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    error = models.TextField(blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    # A worker claims a delivery for a lease; a worker that dies leaves the lease to expire.
    claimed_until = models.DateTimeField(null=True, blank=True)
    # When a message for it was last handed to the broker; a worker taking it up clears it. The
    # reconciler dispatches it again only once RECONCILE_REQUEUE_AFTER_SECONDS have passed since, so a
    # row waiting behind a backlog is not queued once more on every pass (propagation/reconcile.py).
    queued_at = models.DateTimeField(null=True, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # The propagation tab counts open deliveries per store; done ones (nearly all) stay out of it.
        indexes = [
            models.Index(
                fields=["store", "state", "outbox"],
                name="delivery_open",
                condition=models.Q(state__in=["pending", "failed"]),
            )
        ]
        constraints = [
            models.UniqueConstraint(fields=["outbox", "store"], name="delivery_unique"),
            models.CheckConstraint(
                condition=models.Q(state__in=["pending", "done", "failed"]), name="delivery_state_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.store} of outbox {self.outbox_id} ({self.state})"


class LsnField(models.CharField):
    """A PostgreSQL WAL position (pg_lsn), read and written as its text form (e.g. "0/3000148")."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("max_length", 32)
        super().__init__(*args, **kwargs)

    def db_type(self, connection) -> str:
        return "pg_lsn"


class ReadFence(models.Model):
    """Read-your-forgets (docs/scaling.md, "Read replicas"): per workspace, the WAL position a replica must
    have replayed before it may answer a read there, because a change at or before it took something out of
    force (a forget, a supersede, a retire, a grant change). Written with the change's outbox row:
    `commit_lsn` is NULL inside the change's transaction and stamped right after its commit; a NULL that
    stayed (a process died in between) means "the primary's position now". workspace_id 0 fences every
    workspace (a team membership change, which belongs to no single scope)."""

    workspace_id = models.BigIntegerField(primary_key=True)
    commit_lsn = LsnField(null=True, blank=True)
    changed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"workspace {self.workspace_id} fenced at {self.commit_lsn or 'pending'}"
