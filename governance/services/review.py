"""Edit-then-confirm: a reviewer corrects a proposal's text, key or kind and confirms the corrected version.

Memories are immutable versions, so an edit is never written over the proposal. The service, in one
transaction: rejects the proposal as written (audited, the reason says it was edited and into which
memory), records the reviewer's version as a new proposal *by the reviewer* (source kind `reviewer`,
the original's provenance, scope, tier, confidence and supporting episodes kept, `derived_from` the
original), and confirms it with the reviewer as the actor through `memory_confirm`.

Four-eyes follows from that shape, not from a rule of its own: the edited text has been seen by one
person only (its author), so approvals the original gathered do not carry over, and where the
rulebook asks for two reviewers (`confirm_approvals_needed`) the editor's confirmation is approval 1 of
2 and the edited version waits in the queue for a second, different reviewer. Where one reviewer
decides, the editor could have written the text `active` directly (`puts_in_force`), so confirming it
at once gives them no right they did not have."""

from __future__ import annotations

from django.db import transaction

from governance.errors import InvalidInput, InvalidTransition
from governance.models import Memory, Principal, Relation, RelationKind, SourceKind, Status
from governance.permissions import Action, require
from governance.services.memory import (
    MemoryInput,
    lock_memory,
    memory_confirm,
    memory_record,
    transition,
    validate_input,
)

EDIT_REASON_REQUIRED = "Say why you edited the proposal: the reason is kept in the audit log."
EDIT_NOT_PROPOSAL = "Only a candidate or a proposal can be edited before confirming; this one is {status}."
EDITED_INTO = "Edited by the reviewer into memory {new_id}: {reason}"


def proposal_edit_confirm(
    *, memory_id: int, text: str, key: str | None, kind: str, reason: str, actor: Principal | None,
) -> Memory:
    """Replace a proposal by the reviewer's edit of it and confirm the edit (one approval of two where
    four-eyes applies). Returns the new memory: `active`, or `proposed` with the editor's approval."""
    if not reason or not reason.strip():
        raise InvalidInput(EDIT_REASON_REQUIRED, field="reason")
    key = (key or "").strip() or None
    text = (text or "").strip()
    with transaction.atomic():
        original = lock_memory(memory_id)
        require(actor, original.scope, Action.CONFIRM)
        if original.status not in (Status.CANDIDATE, Status.PROPOSED):
            raise InvalidTransition(EDIT_NOT_PROPOSAL.format(status=original.status))
        if (text, key, kind) == (original.text, original.key, original.kind):
            return memory_confirm(memory_id=original.pk, actor=actor, reason=reason)
        item = MemoryInput(
            scope=original.scope, kind=kind, key=key, text=text, source_kind=SourceKind.REVIEWER,
            source_ref=original.source_ref, status=Status.PROPOSED, confidence=original.confidence,
            importance=original.importance, tier=original.tier, task_type=original.task_type,
            session=original.session, valid_from=original.valid_from, valid_until=original.valid_until,
            meta=_edited_meta(original),
        )
        validate_input(item)  # before anything is written: a bad edit leaves the proposal as it was
        edited = memory_record(item=item, actor=actor)
        transition(original, Status.REJECTED, actor=actor, action="memory.reject",
                    reason=EDITED_INTO.format(new_id=edited.pk, reason=reason.strip()),
                    data={"edited_into": edited.pk})
        _carry_provenance(original, edited, actor)
        return memory_confirm(memory_id=edited.pk, actor=actor, reason=reason.strip())


def _edited_meta(original: Memory) -> dict:
    # What the queue shows about the edit; a promotion stays a promotion (its episode support is checked
    # again when the edit is confirmed). Approvals are not copied: they were given to another text.
    meta = {"edited_from": original.pk}
    for name in ("promotion", "rule", "extracted_by", "requested_status"):
        if name in original.meta:
            meta[name] = original.meta[name]
    if original.created_by_id is not None:
        meta["proposed_by"] = original.created_by_id
    return meta


def _carry_provenance(original: Memory, edited: Memory, actor: Principal | None) -> None:
    """The edit is derived from the original, and from the episodes the original was derived from."""
    episodes = list(
        Relation.objects.filter(source=original, kind=RelationKind.DERIVED_FROM).values_list("target_id", "reason")
    )
    Relation.objects.bulk_create(
        [Relation(source=edited, target=original, kind=RelationKind.DERIVED_FROM, actor=actor,
                  reason="the reviewer's edit of this proposal")]
        + [Relation(source=edited, target_id=target, kind=RelationKind.DERIVED_FROM, actor=actor, reason=why)
           for target, why in episodes],
        ignore_conflicts=True,
    )


__all__ = ["EDITED_INTO", "EDIT_NOT_PROPOSAL", "EDIT_REASON_REQUIRED", "proposal_edit_confirm"]
