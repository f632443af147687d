"""Writes of memories, part three: reinforcement (a use or a reviewer's boost raises a memory's activation)."""
from __future__ import annotations

import math
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from governance.errors import (
    InvalidInput,
)
from governance.models import (
    Memory,
    Principal,
    ReinforcementEvent,
    Status,
    activation,
)
from governance.permissions import (
    Action,
    require,
)
from governance.services.audit import AuditEntry, audit_record_many


def reinforce_rows(
    memories: list[Memory], *, weight: float, reason: str, actor: Principal | None, at: datetime | None = None,
    turn_id: int | None = None,
) -> None:
    at = at or timezone.now()
    for memory in memories:
        memory.activation_log_k = activation.reinforced_log_k(memory.activation_log_k, memory.decay_rate, weight, at)
        memory.last_reinforced_at = at
        memory.reinforcement_count += 1
        memory.save(update_fields=["activation_log_k", "last_reinforced_at", "reinforcement_count"])
    ReinforcementEvent.objects.bulk_create(
        ReinforcementEvent(memory=m, at=at, weight=weight, reason=reason, actor=actor, turn_id=turn_id)
        for m in memories
    )


def memory_reinforce(
    *, memory_ids: list[int], weight: float, reason: str, actor: Principal | None,
    at: datetime | None = None, turn_id: int | None = None,
) -> int:
    """Add wᵢ·e^(−λ(t−tᵢ)) to the memories' activation and log each reinforcement. Returns how many."""
    if not (weight > 0 and math.isfinite(weight)):
        raise InvalidInput("weight is a positive number.", field="weight")
    with transaction.atomic():
        rows = list(
            Memory.objects.select_for_update(no_key=True, of=("self",)).select_related("scope")
            .filter(pk__in=memory_ids).exclude(status=Status.FORGOTTEN).order_by("pk")
        )
        if reason == ReinforcementEvent.Reason.REVIEW:
            for memory in rows:
                require(actor, memory.scope, Action.CONFIRM)
            audit_record_many(actor=actor, entries=[
                AuditEntry("memory.boost", "memory", str(m.pk), m.scope.path, m.status, m.status, "",
                           {"weight": weight}) for m in rows
            ])
        reinforce_rows(rows, weight=weight, reason=reason, actor=actor, at=at, turn_id=turn_id)
        return len(rows)
