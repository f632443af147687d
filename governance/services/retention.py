"""Retention policies per scope: retire active memories unused for N days, and archive cold ones
(activation below a threshold: taken out of the hot set, still found by a strong enough match).
Setting a policy is an owner's action; applying it is the system's, audited memory by memory. Retention
never retires a long-term commitment of a four-eyes scope: ending one takes two people (memory_retire)."""

from __future__ import annotations

import math
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from governance.errors import InvalidInput
from governance.models import Kind, Memory, Principal, RetentionPolicy, Scope, Status, Tier, activation
from governance.permissions import Action, four_eyes_scopes, require
from governance.services.audit import AuditEntry, audit_record
from governance.services.outbox import outbox_emit

BATCH = 500
# The columns are 32-bit integers; a day count past a century means "never" and is refused as a typo.
MAX_DAYS = 36_500
MAX_COUNT = 2**31 - 1


def retention_policy_set(
    *,
    scope: Scope,
    actor: Principal | None,
    retire_unused_days: int | None = None,
    archive_cold: bool = False,
    cold_threshold: float | None = None,
    kinds: list[str] | None = None,
    enabled: bool = True,
    turns_max_age_days: int | None = None,
    turns_max_count: int | None = None,
    archive_turns: bool = True,
) -> RetentionPolicy:
    """Create or replace the scope's policy (covers its subtree; turn limits: governance/services/turn_retention)."""
    if retire_unused_days is not None and (
        not isinstance(retire_unused_days, int) or not 1 <= retire_unused_days <= MAX_DAYS
    ):
        raise InvalidInput(
            f"retire_unused_days is a whole number of days, from 1 to {MAX_DAYS}.", field="retire_unused_days"
        )
    if cold_threshold is not None and not (0 < cold_threshold < 10):
        raise InvalidInput("cold_threshold is a number above 0 and below 10.", field="cold_threshold")
    for name, value, top in (
        ("turns_max_age_days", turns_max_age_days, MAX_DAYS),
        ("turns_max_count", turns_max_count, MAX_COUNT),
    ):
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= top
        ):
            raise InvalidInput(f"{name} is a whole number, from 1 to {top}.", field=name)
    kinds = list(kinds or [])
    if any(k not in Kind.values for k in kinds):
        raise InvalidInput(f"kinds are among: {', '.join(Kind.values)}.", field="kinds")
    with transaction.atomic():
        require(actor, scope, Action.MANAGE_POLICY)
        policy, created = RetentionPolicy.objects.select_for_update().get_or_create(scope=scope)
        before = "" if created else _describe(policy)
        policy.retire_unused_days = retire_unused_days
        policy.archive_cold = archive_cold
        policy.cold_threshold = cold_threshold
        policy.kinds = kinds
        policy.enabled = enabled
        policy.turns_max_age_days = turns_max_age_days
        policy.turns_max_count = turns_max_count
        policy.archive_turns = archive_turns
        policy.updated_by = actor
        policy.save()
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "retention.set",
                "retention_policy",
                str(policy.pk),
                scope.path,
                before,
                "enabled" if enabled else "disabled",
                "",
                {
                    "retire_unused_days": retire_unused_days,
                    "archive_cold": archive_cold,
                    "cold_threshold": cold_threshold,
                    "kinds": kinds,
                    "turns_max_age_days": turns_max_age_days,
                    "turns_max_count": turns_max_count,
                    "archive_turns": archive_turns,
                },
            ),
        )
        return policy


def _describe(policy: RetentionPolicy) -> str:
    return "enabled" if policy.enabled else "disabled"


def _covered(policy: RetentionPolicy):
    qs = Memory.objects.filter(scope__tree__descendant_of=policy.scope.tree, status=Status.ACTIVE)
    return qs.filter(kind__in=policy.kinds) if policy.kinds else qs.exclude(kind=Kind.EPISODIC)


def retention_apply(*, policy: RetentionPolicy, now=None) -> dict:
    """Apply one policy now: retire what went unused too long, archive what went cold. Idempotent."""
    from governance.services.memory import memory_retire

    now = now or timezone.now()
    retired = archived = 0
    if policy.retire_unused_days:
        cutoff = now - timedelta(days=policy.retire_unused_days)
        # A long-term commitment of a four-eyes scope is ended by two people, never by a policy one owner set.
        stale = list(
            _covered(policy)
            .exclude(tier=Tier.LONG, scope__in=four_eyes_scopes())
            .annotate(last_used=Coalesce("last_reinforced_at", "created_at"))
            .filter(last_used__lt=cutoff)
            .values_list("pk", flat=True)[:BATCH]
        )
        for memory_id in stale:
            memory_retire(
                memory_id=memory_id,
                actor=None,
                reason=f"retention: unused for {policy.retire_unused_days} days",
            )
            retired += 1
    if policy.archive_cold:
        threshold = policy.cold_threshold or settings.MEMORY_COLD_THRESHOLD
        # log A(t) = log K − λ·t: compare in log space so SQL uses the stored columns directly.
        t = activation.days(now)
        cold = list(
            _covered(policy)
            .filter(meta__archived_at__isnull=True)
            .extra(where=[f"{activation.log_activation_sql()} < %s"], params=[t, math.log(threshold)])
            .values_list("pk", flat=True)[:BATCH]
        )
        for memory_id in cold:
            archived += memory_archive(memory_id=memory_id, actor=None, now=now)
    RetentionPolicy.objects.filter(pk=policy.pk).update(last_run_at=now)
    return {"retired": retired, "archived": archived}


def memory_archive(*, memory_id: int, actor: Principal | None, now=None) -> int:
    """Mark a cold memory archived (out of the hot set; still active and findable). Returns 1 if it changed."""
    now = now or timezone.now()
    with transaction.atomic():
        memory = (
            Memory.objects.select_for_update(no_key=True, of=("self",))
            .select_related("scope")
            .filter(pk=memory_id)
            .first()
        )
        if memory is None or memory.meta.get("archived_at") or memory.status != Status.ACTIVE:
            return 0
        require(actor, memory.scope, Action.RETIRE)
        memory.meta = {**memory.meta, "archived_at": now.isoformat()}
        memory.save(update_fields=["meta", "updated_at"])
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "memory.archive",
                "memory",
                str(memory.pk),
                memory.scope.path,
                memory.status,
                memory.status,
                "retention: cold",
                {"archived_at": now.isoformat()},
            ),
        )
        outbox_emit(topic="memory.archived", memory=memory, payload={"memory_ids": [memory.pk]})
        return 1


def retention_apply_all(*, now=None) -> dict:
    totals = {"policies": 0, "retired": 0, "archived": 0}
    for policy in (
        RetentionPolicy.objects.filter(enabled=True)
        .select_related("scope")
        .filter(Q(retire_unused_days__isnull=False) | Q(archive_cold=True))
    ):
        result = retention_apply(policy=policy, now=now)
        totals["policies"] += 1
        totals["retired"] += result["retired"]
        totals["archived"] += result["archived"]
    return totals
