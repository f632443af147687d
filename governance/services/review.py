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
at once gives them no right they did not have.

Confirming the user's correction of part of a keyed rule ("可以发布了。" for "只处理我确认的 v3,别覆盖原文件,也先不要
发布。") takes the same shape (`proposal_confirm`): the rule's next revision is the rule as the correction leaves it
(services/parts.revised), not the correction's words alone, which would drop the clauses it never touched."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from governance.errors import InvalidInput, InvalidTransition
from governance.models import Memory, Principal, Relation, RelationKind, SourceKind, Status
from governance.permissions import Action, require, require_writable
from governance.services.audit import AuditEntry, audit_record
from governance.services.conflict import conflict_detect
from governance.services.four_eyes import fix_at_proposal, replaced_rule_id
from governance.services.memory import (
    REASON_REQUIRED,
    MemoryInput,
    build_memory,
    integrity_to_domain,
    lock_key,
    lock_memory,
    memory_confirm,
    memory_record,
    transition,
    validate_input,
)
from governance.services.outbox import outbox_emit
from governance.services.parts import revised

EDIT_REASON_REQUIRED = "Say why you edited the proposal: the reason is kept in the audit log."
EDIT_NOT_PROPOSAL = "Only a candidate or a proposal can be edited before confirming; this one is {status}."
EDITED_INTO = "Edited by the reviewer into memory {new_id}: {reason}"
REVISED = "confirmed as the rule it corrects in part reads now (revision {revision} with this correction)"


def merged_revision(memory: Memory, rule: Memory | None = None) -> tuple[str, Memory | None]:
    """The text confirming `memory` puts in force when it is a user's correction of part of the rule it
    corrects (the rule's clauses it leaves standing, then its own: parts.revised), and that rule; ("", None)
    when it is no such correction or replaces the whole rule. The rule: the active revision of its key in the
    corrected rule's scope, or the unkeyed rule of its own scope it replaces (four_eyes.replaced_rule_id).
    `rule`: that rule, when the caller holds it (the review queue)."""
    meta = memory.meta or {}
    if not isinstance(meta.get("requirement"), dict) or memory.status not in (
        Status.CANDIDATE,
        Status.PROPOSED,
    ):
        return "", None
    corrects = meta.get("corrects") if memory.key else None
    if rule is None and isinstance(corrects, dict):
        scope_of = Memory.objects.filter(pk=corrects.get("memory_id")).values("scope_id")[:1]
        rule = Memory.objects.filter(
            scope_id__in=scope_of, key=memory.key, status=Status.ACTIVE, purged_at__isnull=True
        ).first()
    elif rule is None and not memory.key and (replaced := replaced_rule_id(memory)) is not None:
        rule = Memory.objects.filter(pk=replaced, status=Status.ACTIVE, purged_at__isnull=True).first()
    if rule is None or rule.status != Status.ACTIVE or rule.pk == memory.pk:
        return "", None
    if rule.key != memory.key or (rule.key is None and rule.scope_id != memory.scope_id):
        return "", None
    text = revised(rule.text, memory.text)
    return (text, rule) if text else ("", None)


def with_revisions(items: list) -> list:
    """Review items (selectors.review.ReviewItem), each with `revision` set to the text confirming it puts in
    force when it is a user's correction of part of the rule it conflicts with (merged_revision); read from
    the rules the queue holds already, no query."""
    for item in items:
        memory, replaced = item.memory, replaced_rule_id(item.memory)
        rule = next(
            (
                c
                for c in item.conflicting_all
                if c.status == Status.ACTIVE and (c.key == memory.key if memory.key else c.pk == replaced)
            ),
            None,
        )
        if rule is not None:
            item.revision = merged_revision(memory, rule)[0]
    return items


def proposal_confirm(*, memory_id: int, actor: Principal | None, reason: str = "") -> Memory:
    """Confirm a candidate or proposal (memory_confirm). A user's correction of part of a rule is confirmed
    as the rule it leaves (merged_revision): an edit of it into that text, confirmed (one approval of two
    where four-eyes applies), derived from the rule as well, which it supersedes once in force (by its key,
    or as the rule it revises). Returns the memory confirmed (the new one when merged)."""
    memory = Memory.objects.filter(pk=memory_id).first()
    text, rule = merged_revision(memory) if memory is not None else ("", None)
    if not text:
        return memory_confirm(memory_id=memory_id, actor=actor, reason=reason)
    why = REVISED.format(revision=rule.revision) + (f": {reason.strip()}" if (reason or "").strip() else "")
    revises = {} if rule.key else {"revises": {"memory_id": rule.pk}}
    with transaction.atomic():
        confirmed = proposal_edit_confirm(
            memory_id=memory_id,
            text=text,
            key=memory.key,
            kind=memory.kind,
            reason=why,
            actor=actor,
            meta=revises,
        )
        Relation.objects.get_or_create(
            source=confirmed,
            target=rule,
            kind=RelationKind.DERIVED_FROM,
            defaults={"actor": actor, "reason": "the part of it the correction left standing"},
        )
    return confirmed


def proposal_edit_confirm(
    *,
    memory_id: int,
    text: str,
    key: str | None,
    kind: str,
    reason: str,
    actor: Principal | None,
    meta: dict | None = None,
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
            scope=original.scope,
            kind=kind,
            key=key,
            text=text,
            source_kind=SourceKind.REVIEWER,
            source_ref=original.source_ref,
            status=Status.PROPOSED,
            confidence=original.confidence,
            importance=original.importance,
            tier=original.tier,
            task_type=original.task_type,
            session=original.session,
            valid_from=original.valid_from,
            valid_until=original.valid_until,
            meta={**_edited_meta(original), **(meta or {})},
        )
        validate_input(item)  # before anything is written: a bad edit leaves the proposal as it was
        edited = memory_record(item=item, actor=actor)
        transition(
            original,
            Status.REJECTED,
            actor=actor,
            action="memory.reject",
            reason=EDITED_INTO.format(new_id=edited.pk, reason=reason.strip()),
            data={"edited_into": edited.pk},
        )
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


def _carry_provenance(
    original: Memory,
    edited: Memory,
    actor: Principal | None,
    why_original: str = "the reviewer's edit of this proposal",
) -> None:
    """The edit (or re-proposal) is derived from the original, and from the episodes the original was
    derived from."""
    episodes = list(
        Relation.objects.filter(source=original, kind=RelationKind.DERIVED_FROM).values_list(
            "target_id", "reason"
        )
    )
    Relation.objects.bulk_create(
        [
            Relation(
                source=edited,
                target=original,
                kind=RelationKind.DERIVED_FROM,
                actor=actor,
                reason=why_original,
            )
        ]
        + [
            Relation(source=edited, target_id=target, kind=RelationKind.DERIVED_FROM, actor=actor, reason=why)
            for target, why in episodes
        ],
        ignore_conflicts=True,
    )


# --- Undoing a rejection: propose the same memory again ------------------------------------------------

REPROPOSE_NOT_REJECTED = "Only a rejected memory can be proposed again; this one is {status}."
REPROPOSED_FROM = "proposed again after it was rejected"


def memory_repropose(*, memory_id: int, actor: Principal | None, reason: str) -> Memory:
    """Undo a rejection the only way versions allow: write a *new* proposal with the rejected memory's
    text, kind, key, scope and source, `derived_from` it (and from its episodes), its four-eyes count
    fixed at proposal like any other. The rejected row stays rejected. Needs the right to reject there;
    a forgotten memory (soft or hard) is never proposed again."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput(REASON_REQUIRED, field="reason")
    try:
        with transaction.atomic():
            original = lock_memory(memory_id)
            require(actor, original.scope, Action.CONFIRM)
            if original.status != Status.REJECTED or original.purged_at is not None:
                raise InvalidTransition(
                    REPROPOSE_NOT_REJECTED.format(status=original.status),
                    current_status=original.status,
                    requested_status=Status.PROPOSED,
                )
            require_writable(actor, original.scope, episodes_only=False)
            item = MemoryInput(
                scope=original.scope,
                kind=original.kind,
                key=original.key,
                text=original.text,
                source_kind=original.source_kind,
                source_ref=original.source_ref,
                status=Status.PROPOSED,
                confidence=original.confidence,
                importance=original.importance,
                tier=original.tier,
                task_type=original.task_type,
                session=original.session,
                valid_from=original.valid_from,
                valid_until=original.valid_until,
                meta=_reproposed_meta(original, actor, reason),
            )
            validate_input(item)
            if item.key is not None:
                lock_key(original.scope_id, item.key)
                latest = Memory.objects.filter(scope=original.scope, key=item.key).aggregate(
                    m=Max("revision")
                )["m"]
                item.revision = (latest or 0) + 1
            memory = build_memory(item, actor, timezone.now())
            memory.save()
            audit_record(
                actor=actor,
                entry=AuditEntry(
                    "memory.repropose",
                    "memory",
                    str(memory.pk),
                    memory.scope.path,
                    "",
                    Status.PROPOSED,
                    reason,
                    {
                        "from": original.pk,
                        "kind": memory.kind,
                        "key": memory.key,
                        "revision": memory.revision,
                        "hash": memory.content_hash,
                    },
                ),
            )
            outbox_emit(topic="memory.created", memory=memory, payload={"memory_ids": [memory.pk]})
            _carry_provenance(original, memory, actor, why_original=REPROPOSED_FROM)
            conflict_detect(memory=memory, actor=actor)
            fix_at_proposal(memory)
            return memory
    except IntegrityError as exc:
        raise integrity_to_domain(exc) from exc


def _reproposed_meta(original: Memory, actor: Principal | None, reason: str) -> dict:
    # Approvals are not copied (they were never enough, and a count is fixed again at proposal).
    meta: dict = {
        "reproposed": {
            "from": original.pk,
            "by": actor.pk if actor else None,
            "by_name": actor.name if actor else "system",
            "reason": reason,
            "at": timezone.now().isoformat(),
        }
    }
    for name in ("promotion", "rule", "extracted_by", "requested_status"):
        if name in original.meta:
            meta[name] = original.meta[name]
    if original.created_by_id is not None:
        meta["proposed_by"] = original.created_by_id
    return meta


__all__ = [
    "EDITED_INTO",
    "EDIT_NOT_PROPOSAL",
    "EDIT_REASON_REQUIRED",
    "REPROPOSED_FROM",
    "REPROPOSE_NOT_REJECTED",
    "merged_revision",
    "memory_repropose",
    "proposal_confirm",
    "proposal_edit_confirm",
    "with_revisions",
]
