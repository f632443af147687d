"""Proposed contradictions between unkeyed memories (a Dispute): the system proposes, a person decides.

- `dispute_propose`: the system (never an agent's request) records that a later memory seems to replace an
  earlier one of the same scope. Nothing changes status: both stay evidence, and the packet marks the pair
  as in dispute, saying which is newer (governance/recall/adjudicate.py).
- `dispute_confirm`: a person with the supersede right on the scope says which one holds; the other is
  superseded by it (a `supersedes` relation, audited), so packets list it under "no longer in force" with
  what replaced it. A candidate or proposal that loses is rejected instead (it was never in force).
- `dispute_dismiss`: a reviewer says the two do not disagree; the pair is kept dismissed, so it is never
  proposed again.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from governance.errors import FourEyesRequired, InvalidInput, InvalidTransition
from governance.models import (
    RECALLABLE,
    Dispute,
    DisputeState,
    Memory,
    Principal,
    Relation,
    RelationKind,
    Status,
)
from governance.permissions import Action, dispute_for_reader, ending_needs_two_people, require
from governance.services.audit import AuditEntry, audit_record
from governance.services.memory.lifecycle import lock_memory, transition
from governance.services.memory.record import FOUR_EYES_SUPERSEDE
from governance.services.outbox import outbox_emit

BAD_HOLDS = "holds is the id of one of the two memories of this dispute."
REASON_NEEDED = "A reason is required: say why this one holds."
ALREADY_DECIDED = "This dispute was already decided ({state})."
NOT_CURRENT = "Both memories must still be active, candidates or proposals; one is {status}."


def _linked(a: int, b: int) -> bool:
    pair = Q(source_id=a, target_id=b) | Q(source_id=b, target_id=a)
    return Relation.objects.filter(
        pair, kind__in=(RelationKind.SUPERSEDES, RelationKind.CONTRADICTS)
    ).exists()


def dispute_propose(
    *, newer: Memory, older: Memory, similarity: float, reason: str, cues: list[str]
) -> Dispute | None:
    """Record the system's proposal that `newer` contradicts `older` (same scope), audited; None when the
    pair is already linked, proposed or decided either way (a dismissed pair is never proposed again)."""
    if newer.pk == older.pk or newer.scope_id != older.scope_id:
        return None
    with transaction.atomic():
        if Dispute.objects.filter(
            Q(newer=newer, older=older) | Q(newer=older, older=newer)
        ).exists() or _linked(newer.pk, older.pk):
            return None
        try:
            with transaction.atomic():
                dispute = Dispute.objects.create(
                    newer=newer,
                    older=older,
                    similarity=round(float(similarity), 4),
                    reason=reason,
                    cues=list(cues),
                )
        except IntegrityError:
            return None  # proposed at the same moment by another writer, either way round
        audit_record(
            actor=None,
            entry=AuditEntry(
                "memory.dispute_proposed",
                "memory",
                str(newer.pk),
                newer.scope.path,
                newer.status,
                newer.status,
                reason,
                {
                    "dispute": dispute.pk,
                    "contradicts": older.pk,
                    "similarity": dispute.similarity,
                    "cues": cues,
                },
            ),
        )
        # Cached packets of the scope must show the pair as in dispute.
        outbox_emit(topic="memory.disputed", memory=newer, payload={"memory_ids": [newer.pk, older.pk]})
    return dispute


def _decidable(dispute_id: int, actor: Principal | None) -> Dispute:
    dispute = dispute_for_reader(actor, dispute_id)
    dispute = (
        Dispute.objects.select_for_update(of=("self",)).select_related("newer__scope").get(pk=dispute.pk)
    )
    if dispute.state != DisputeState.PROPOSED:
        raise InvalidTransition(ALREADY_DECIDED.format(state=dispute.state), current_status=dispute.state)
    return dispute


def _decided(
    dispute: Dispute, state: str, actor: Principal | None, reason: str, holds: Memory | None
) -> None:
    dispute.state = state
    dispute.holds = holds
    dispute.decided_by = actor
    dispute.decided_at = timezone.now()
    dispute.decision_reason = reason
    dispute.save(update_fields=["state", "holds", "decided_by", "decided_at", "decision_reason"])


def dispute_confirm(*, dispute_id: int, holds_id: int, reason: str, actor: Principal | None) -> Dispute:
    """A person settles a proposed contradiction: `holds_id` (one of the two) stays, the other is
    superseded by it (rejected, when it was only a candidate or proposal). Needs the supersede right on the
    scope; a long-term commitment of a four-eyes scope cannot be ended this way by one person."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput(REASON_NEEDED, field="reason")
    with transaction.atomic():
        dispute = _decidable(dispute_id, actor)
        if holds_id not in (dispute.newer_id, dispute.older_id):
            raise InvalidInput(BAD_HOLDS, field="holds")
        loser_id = dispute.older_id if holds_id == dispute.newer_id else dispute.newer_id
        # Both rows locked in id order (two decisions over a shared memory never deadlock).
        rows = {pk: lock_memory(pk) for pk in sorted((holds_id, loser_id))}
        holder, loser = rows[holds_id], rows[loser_id]
        require(actor, loser.scope, Action.SUPERSEDE)
        for memory in (holder, loser):
            if memory.status not in RECALLABLE or memory.purged_at:
                raise InvalidTransition(
                    NOT_CURRENT.format(status=memory.status), current_status=memory.status
                )
        if actor is not None and ending_needs_two_people(loser):
            raise FourEyesRequired(FOUR_EYES_SUPERSEDE)
        data = {"dispute": dispute.pk, "holds": holder.pk}
        if loser.status == Status.ACTIVE:
            transition(
                loser, Status.SUPERSEDED, actor=actor, action="memory.superseded", reason=reason, data=data
            )
            Relation.objects.get_or_create(
                source=holder,
                target=loser,
                kind=RelationKind.SUPERSEDES,
                defaults={"reason": reason, "actor": actor, "by_hand": True},
            )
        else:
            transition(loser, Status.REJECTED, actor=actor, action="memory.reject", reason=reason, data=data)
        _decided(dispute, DisputeState.CONFIRMED, actor, reason, holder)
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "dispute.confirm",
                "dispute",
                str(dispute.pk),
                loser.scope.path,
                DisputeState.PROPOSED,
                DisputeState.CONFIRMED,
                reason,
                {"holds": holder.pk, "superseded": loser.pk},
            ),
        )
    return dispute


def dispute_dismiss(*, dispute_id: int, reason: str = "", actor: Principal | None) -> Dispute:
    """A reviewer says the two memories do not disagree: both stay as they are, the pair is no longer
    marked in dispute and never proposed again."""
    with transaction.atomic():
        dispute = _decidable(dispute_id, actor)
        require(actor, dispute.newer.scope, Action.CONFIRM)
        _decided(dispute, DisputeState.DISMISSED, actor, (reason or "").strip(), None)
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "dispute.dismiss",
                "dispute",
                str(dispute.pk),
                dispute.newer.scope.path,
                DisputeState.PROPOSED,
                DisputeState.DISMISSED,
                reason or "",
                {"newer": dispute.newer_id, "older": dispute.older_id},
            ),
        )
        outbox_emit(
            topic="memory.disputed",
            memory=dispute.newer,
            payload={"memory_ids": [dispute.newer_id, dispute.older_id]},
        )
    return dispute
