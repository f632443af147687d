"""Reinforcement: a use, a reviewer's boost or a repeated write raises a memory's activation
(governance.models.activation), each logged as a ReinforcementEvent. `near_duplicate_merge` is the write a
repeat makes instead of a row of its own (governance/services/near_duplicate.py has the rule)."""

from __future__ import annotations

import math
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from governance.errors import InvalidInput
from governance.models import NEAR_DUPLICATES, Memory, Principal, ReinforcementEvent, Status, activation
from governance.permissions import Action, require
from governance.services import near_duplicate
from governance.services.audit import AuditEntry, audit_record, audit_record_many


def reinforce_rows(
    memories: list[Memory],
    *,
    weight: float,
    reason: str,
    actor: Principal | None,
    at: datetime | None = None,
    turn_id: int | None = None,
    said_at: datetime | None = None,
) -> None:
    """`said_at`: when the use happened, if not at the write (a repeat in an imported history was said
    then): the activation decays from it and its logged event carries it; `last_reinforced_at` stays the
    write's time, which retention's "unused for N days" reads beside `created_at`."""
    at = at or timezone.now()
    decays_from = said_at or at
    for memory in memories:
        memory.activation_log_k = activation.reinforced_log_k(
            memory.activation_log_k, memory.decay_rate, weight, decays_from
        )
        memory.last_reinforced_at = at
        memory.reinforcement_count += 1
        memory.save(update_fields=["activation_log_k", "last_reinforced_at", "reinforcement_count"])
    ReinforcementEvent.objects.bulk_create(
        ReinforcementEvent(
            memory=m, at=decays_from, weight=weight, reason=reason, actor=actor, turn_id=turn_id
        )
        for m in memories
    )


def near_duplicate_merge(
    *, kept_id: int, source: dict, share: float, actor: Principal | None, at=None, said_at=None
) -> Memory:
    """Reinforce the kept memory with a repeat, list the repeat's source on it and audit the decision
    (no text in the audit event: a forget must reach every copy). Call in the write's transaction.
    `said_at`: when the repeat was said (its `occurred_at`; an imported turn's time), which its
    reinforcement decays from; the audit event and the listed entry keep the write's time."""
    kept = Memory.objects.select_for_update(no_key=True, of=("self",)).select_related("scope").get(pk=kept_id)
    at = at or timezone.now()
    entry = {**source, "share": round(share, 3), "at": at.isoformat(), "by": actor.name if actor else None}
    merged = [*(kept.meta.get(NEAR_DUPLICATES) or []), entry][-near_duplicate.MERGED_KEPT :]
    kept.meta = {
        **kept.meta,
        NEAR_DUPLICATES: merged,
        "near_duplicates_count": (kept.meta.get("near_duplicates_count") or 0) + 1,
    }
    kept.save(update_fields=["meta", "updated_at"])
    reinforce_rows(
        [kept],
        weight=near_duplicate.REINFORCE_WEIGHT,
        reason=ReinforcementEvent.Reason.WRITE,
        actor=actor,
        at=at,
        said_at=said_at,
    )
    audit_record(
        actor=actor,
        entry=AuditEntry(
            "memory.near_duplicate",
            "memory",
            str(kept.pk),
            kept.scope.path,
            kept.status,
            kept.status,
            "",
            {
                "decision": "reinforced",
                "share": round(share, 3),
                **{k: source[k] for k in ("source_kind", "source_ref") if k in source},
            },
        ),
    )
    kept.near_duplicate = {"decision": "reinforced", "memory_id": kept.pk, "share": round(share, 3)}
    return kept


# --- Reinforcement: a use or a reviewer's boost raises a memory's activation -------------------------


def memory_reinforce(
    *,
    memory_ids: list[int],
    weight: float,
    reason: str,
    actor: Principal | None,
    at: datetime | None = None,
    turn_id: int | None = None,
) -> int:
    """Add wᵢ·e^(−λ(t−tᵢ)) to the memories' activation and log each reinforcement. Returns how many."""
    if not (weight > 0 and math.isfinite(weight)):
        raise InvalidInput("weight is a positive number.", field="weight")
    with transaction.atomic():
        rows = list(
            Memory.objects.select_for_update(no_key=True, of=("self",))
            .select_related("scope")
            .filter(pk__in=memory_ids)
            .exclude(status=Status.FORGOTTEN)
            .order_by("pk")
        )
        if reason == ReinforcementEvent.Reason.REVIEW:
            for memory in rows:
                require(actor, memory.scope, Action.CONFIRM)
            audit_record_many(
                actor=actor,
                entries=[
                    AuditEntry(
                        "memory.boost",
                        "memory",
                        str(m.pk),
                        m.scope.path,
                        m.status,
                        m.status,
                        "",
                        {"weight": weight},
                    )
                    for m in rows
                ],
            )
        reinforce_rows(rows, weight=weight, reason=reason, actor=actor, at=at, turn_id=turn_id)
        return len(rows)
