"""One decision applied to many memories at once (the memories list's bulk actions): retire, forget or
confirm a selection with one reason, in one transaction.

Each memory goes through its own service (memory_retire, memory_forget, memory_confirm), so the rights,
the four-eyes rules and the audit event of each are exactly those of a single action. Each runs in a
savepoint: a memory that is refused (no right here, a transition its status does not allow, the same
reviewer twice) is reported and rolled back alone, and the others go ahead; an error that is not a
refusal rolls the whole batch back."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from governance.errors import DomainError, InvalidInput
from governance.models import Principal, Status
from governance.services import memory as memory_services
from governance.services.review import proposal_confirm

BULK_ACTIONS = {"retire": "Retire", "forget": "Forget (soft)", "confirm": "Confirm"}
# Memories one bulk action may touch: each is a row lock, an audit event and an outbox row in one
# transaction, and a person should look at what they decide on.
BULK_CAP = 500

BULK_UNKNOWN_ACTION = "Choose retire, forget or confirm."
BULK_REASON_REQUIRED = memory_services.REASON_REQUIRED  # one sentence for every ending, one or many
BULK_NOTHING = "Select at least one memory."
BULK_TOO_MANY = "At most {cap} memories at once: narrow the filters or select fewer rows."


@dataclass(frozen=True)
class BulkOutcome:
    memory_id: int
    outcome: str  # "done" | "requested" (four-eyes: first of two) | "refused"
    status: str  # the memory's status afterwards ("" when refused before it was read)
    message: str


def memory_bulk_act(
    *, memory_ids: list[int], action: str, reason: str, actor: Principal | None
) -> list[BulkOutcome]:
    """Apply `action` to each memory through its own service, in one transaction; one outcome per id,
    in the order given (duplicates once)."""
    if action not in BULK_ACTIONS:
        raise InvalidInput(BULK_UNKNOWN_ACTION, field="action")
    reason = reason.strip()
    if not reason:
        raise InvalidInput(BULK_REASON_REQUIRED, field="reason")
    ids = list(dict.fromkeys(int(i) for i in memory_ids))
    if not ids:
        raise InvalidInput(BULK_NOTHING, field="ids")
    if len(ids) > BULK_CAP:
        raise InvalidInput(BULK_TOO_MANY.format(cap=BULK_CAP), field="ids")
    outcomes = []
    with transaction.atomic():
        for memory_id in ids:
            try:
                with transaction.atomic():
                    memory = _apply(memory_id, action, reason, actor)
            except DomainError as exc:
                outcomes.append(BulkOutcome(memory_id, "refused", "", str(exc.message)))
                continue
            outcomes.append(_outcome(memory_id, action, memory.status))
    return outcomes


def _apply(memory_id: int, action: str, reason: str, actor: Principal | None):
    if action == "retire":
        return memory_services.memory_retire(memory_id=memory_id, actor=actor, reason=reason)
    if action == "forget":
        return memory_services.memory_forget(memory_id=memory_id, actor=actor, reason=reason)
    return proposal_confirm(memory_id=memory_id, actor=actor, reason=reason)


def _outcome(memory_id: int, action: str, status: str) -> BulkOutcome:
    target = {"retire": Status.RETIRED, "forget": Status.FORGOTTEN, "confirm": Status.ACTIVE}[action]
    if status == target:
        return BulkOutcome(memory_id, "done", status, "done")
    if action == "confirm":
        return BulkOutcome(
            memory_id, "requested", status, "approval recorded: a second, different reviewer must confirm it"
        )
    return BulkOutcome(
        memory_id, "requested", status, "request recorded: a second, different person must agree (four-eyes)"
    )
