"""Writes of memories after they are recorded: the status changes (propose, confirm, reject, supersede,
retire, forget) with the four-eyes rules of each, and reinforcement."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from governance.errors import (
    FourEyesRequired,
    InvalidInput,
    InvalidTransition,
    NotFound,
    StaleRevision,
)
from governance.models import (
    TRANSITIONS,
    Memory,
    Principal,
    ReinforcementEvent,
    Relation,
    RelationKind,
    Status,
)
from governance.permissions import (
    Action,
    approvers,
    ending_needs_two_people,
    require,
)
from governance.services import near_duplicate
from governance.services.audit import AuditEntry, audit_record
from governance.services.four_eyes import approvals_to_put_in_force, fix_at_proposal, replaced_rule_id
from governance.services.memory.promotion import promotion_check_support
from governance.services.memory.record import (
    FOUR_EYES_SAME_PERSON,
    FOUR_EYES_SUPERSEDE,
    REASON_REQUIRED,
    FourEyesPending,
    MemoryInput,
    build_memory,
    integrity_to_domain,
    lock_key,
    may_confirm,
    queue_conflicts,
    validate_input,
)
from governance.services.memory.reinforcement import reinforce_rows
from governance.services.memory.words import purged_meta, words_forget
from governance.services.outbox import outbox_emit


def lock_memory(memory_id: int) -> Memory:
    # FOR NO KEY UPDATE of the memory row only. A plain FOR UPDATE with select_related also locked the
    # scope row, and FOR UPDATE conflicts with the FOR KEY SHARE that another transaction's deferred
    # foreign-key check takes at COMMIT while it holds the audit chain's advisory lock, which this one then
    # waits for: under load (bench_load, 8 users) PostgreSQL broke such deadlocks every few seconds.
    try:
        return (
            Memory.objects.select_for_update(no_key=True, of=("self",))
            .select_related("scope")
            .get(pk=memory_id)
        )
    except Memory.DoesNotExist as exc:
        raise NotFound() from exc


def transition(
    memory: Memory,
    to: str,
    *,
    actor: Principal | None,
    action: str,
    reason: str,
    data: dict | None = None,
    fields: tuple[str, ...] = (),
) -> Memory:
    before = memory.status
    if to not in TRANSITIONS[Status(before)]:
        raise InvalidTransition(
            f"This memory is {before}; it cannot become {to}.", current_status=before, requested_status=to
        )
    memory.status = to
    memory.save(update_fields=["status", "updated_at", *fields])
    audit_record(
        actor=actor,
        entry=AuditEntry(action, "memory", str(memory.pk), memory.scope.path, before, to, reason, data or {}),
    )
    outbox_emit(topic="memory.status", memory=memory, payload={"memory_ids": [memory.pk], "status": to})
    return memory


def memory_propose(*, memory_id: int, actor: Principal | None, reason: str = "") -> Memory:
    """Put a candidate in the review queue."""
    with transaction.atomic():
        memory = lock_memory(memory_id)
        require(actor, memory.scope, Action.WRITE_CANDIDATE)
        memory = transition(memory, Status.PROPOSED, actor=actor, action="memory.propose", reason=reason)
        fix_at_proposal(memory)
        return memory


IN_FORCE_ALREADY = (
    "The same statement is already in force in this scope (#{id}): this one says nothing #{id} does not, "
    "and a second copy would stay in force when #{id} is forgotten. Reject this one, or supersede #{id} to "
    "change what is in force."
)


def memory_confirm(*, memory_id: int, actor: Principal | None, reason: str = "") -> Memory:
    """A reviewer confirms a candidate or proposal: it becomes active (four-eyes where the scope asks)."""
    with transaction.atomic():
        memory = lock_memory(memory_id)
        require(actor, memory.scope, Action.CONFIRM)
        if memory.status not in (Status.CANDIDATE, Status.PROPOSED):
            raise InvalidTransition(
                f"Only candidates and proposals can be confirmed; this one is {memory.status}."
            )
        promotion_check_support(memory)
        copy = near_duplicate.in_force_copy(memory)
        if copy is not None:
            raise InvalidTransition(
                IN_FORCE_ALREADY.format(id=copy.memory_id),
                current_status=memory.status,
                requested_status=Status.ACTIVE,
                in_force=copy.memory_id,
            )
        needed = approvals_to_put_in_force(memory)
        if _needs_second_reviewer(memory, actor, needed):
            approvals = approvers(memory)
            # Kept on the row so the review queue shows "1 of 2" for a mid-term revision of a long-term rule.
            memory.meta = {**memory.meta, "approvals": [*approvals, actor.pk], "approvals_needed": needed}
            memory.save(update_fields=["meta", "updated_at"])
            audit_record(
                actor=actor,
                entry=AuditEntry(
                    "memory.approve",
                    "memory",
                    str(memory.pk),
                    memory.scope.path,
                    memory.status,
                    memory.status,
                    reason,
                    {"approvals": len(approvals) + 1, "needed": needed},
                ),
            )
            memory.four_eyes_pending = FourEyesPending("confirm", actor.name, len(approvals) + 1, needed)
            return memory
        if memory.key:
            _supersede_active_for_key(memory, actor, reason)
        else:
            _supersede_replaced(memory, actor, reason)
        # In force from now on, confirmed by this person (or the system); the pinning reads confirmed_at.
        memory.confirmed_by, memory.confirmed_at = actor, timezone.now()
        memory = transition(
            memory,
            Status.ACTIVE,
            actor=actor,
            action="memory.confirm",
            reason=reason,
            fields=("confirmed_by", "confirmed_at"),
        )
        reinforce_rows([memory], weight=0.5, reason=ReinforcementEvent.Reason.REVIEW, actor=actor)
        # A statement said after it that contradicts it, still waiting for review, is linked to it now.
        queue_conflicts(memory, actor)
        return memory


def _needs_second_reviewer(memory: Memory, actor: Principal | None, needed: int) -> bool:
    """True when this confirmation is only an approval (more distinct reviewers are needed); the same
    reviewer confirming twice is refused. The system actor (tasks) is not a reviewer and is not counted."""
    if actor is None or needed < 2:
        return False
    approvals = approvers(memory)
    if actor.pk in approvals:
        raise FourEyesRequired()
    return len(approvals) + 1 < needed


def _supersede_active_for_key(memory: Memory, actor: Principal | None, reason: str) -> None:
    current = (
        Memory.objects.select_for_update(no_key=True)
        .filter(scope=memory.scope, key=memory.key, status=Status.ACTIVE)
        .exclude(pk=memory.pk)
        .first()
    )
    if current is None:
        return
    if current.revision > memory.revision:
        raise StaleRevision(current_revision=current.revision)
    _superseded_by(memory, current, actor, reason)


def _supersede_replaced(memory: Memory, actor: Principal | None, reason: str) -> None:
    """The unkeyed rule of the same scope that `memory` replaces (four_eyes.replaced_rule_id), superseded by
    it: the user's correction a person confirms ends the rule it corrects, as a keyed one does by its key."""
    replaced = replaced_rule_id(memory)
    if replaced is None:
        return
    current = (
        Memory.objects.select_for_update(no_key=True)
        .filter(pk=replaced, scope=memory.scope, key__isnull=True, status=Status.ACTIVE)
        .exclude(pk=memory.pk)
        .first()
    )
    if current is not None:  # else ended meanwhile, or a rule of a scope above (not this scope's to end)
        _superseded_by(memory, current, actor, reason)


def _superseded_by(memory: Memory, current: Memory, actor: Principal | None, reason: str) -> None:
    transition(
        current,
        Status.SUPERSEDED,
        actor=actor,
        action="memory.superseded",
        reason=reason,
        data={"by": memory.pk},
    )
    Relation.objects.get_or_create(
        source=memory,
        target=current,
        kind=RelationKind.SUPERSEDES,
        defaults={"reason": reason, "actor": actor},
    )


def _required_reason(reason: str | None) -> str:
    """The reason of an ending service, stripped; InvalidInput(REASON_REQUIRED) when there is none."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput(REASON_REQUIRED, field="reason")
    return reason


def memory_reject(*, memory_id: int, actor: Principal | None, reason: str) -> Memory:
    """A reviewer refuses a candidate or proposal, saying why."""
    reason = _required_reason(reason)
    with transaction.atomic():
        memory = lock_memory(memory_id)
        require(actor, memory.scope, Action.CONFIRM)
        if memory.status not in (Status.CANDIDATE, Status.PROPOSED):
            raise InvalidTransition(
                f"Only candidates and proposals can be rejected; this one is {memory.status}."
            )
        return transition(memory, Status.REJECTED, actor=actor, action="memory.reject", reason=reason)


def memory_supersede(
    *,
    memory_id: int,
    text: str,
    reason: str,
    source_kind: str,
    source_ref: str = "",
    actor: Principal | None,
    confidence: float | None = None,
) -> Memory:
    """Write the next revision, link it (supersedes) and retire the old one to `superseded`, atomically.
    Two concurrent supersedes of one memory: the second waits on the row lock, then finds it superseded."""
    reason = _required_reason(reason)
    try:
        with transaction.atomic():
            old = lock_memory(memory_id)
            require(actor, old.scope, Action.SUPERSEDE)
            if actor is not None and ending_needs_two_people(old):
                raise FourEyesRequired(FOUR_EYES_SUPERSEDE)
            if old.status != Status.ACTIVE:
                raise InvalidTransition(
                    f"Only an active memory can be superseded; this one is {old.status}.",
                    current_status=old.status,
                )
            revision = old.revision + 1
            if old.key:
                lock_key(old.scope_id, old.key)
                latest = Memory.objects.filter(scope=old.scope, key=old.key).aggregate(m=Max("revision"))["m"]
                revision = (latest or 0) + 1
            item = MemoryInput(
                scope=old.scope,
                kind=old.kind,
                text=text,
                source_kind=source_kind,
                source_ref=source_ref,
                key=old.key,
                revision=revision,
                status=Status.ACTIVE,
                confidence=old.confidence if confidence is None else confidence,
                importance=old.importance,
                tier=old.tier,
                task_type=old.task_type,
            )
            validate_input(item)
            if (
                actor is not None
                and approvals_to_put_in_force(build_memory(item, actor, timezone.now()), exclude=(old.pk,))
                >= 2
            ):
                raise FourEyesRequired(FOUR_EYES_SUPERSEDE)  # it would override or contradict one above
            transition(old, Status.SUPERSEDED, actor=actor, action="memory.superseded", reason=reason)
            confirmed = may_confirm(item, actor)  # the supersede right comes with the confirm right
            new = build_memory(item, actor, timezone.now(), confirmed=confirmed)
            new.save()
            audit_record(
                actor=actor,
                entry=AuditEntry(
                    "memory.supersede",
                    "memory",
                    str(new.pk),
                    new.scope.path,
                    "",
                    Status.ACTIVE,
                    reason,
                    {"supersedes": old.pk, "revision": new.revision, "hash": new.content_hash},
                ),
            )
            Relation.objects.create(
                source=new, target=old, kind=RelationKind.SUPERSEDES, reason=reason, actor=actor
            )
            outbox_emit(topic="memory.created", memory=new, payload={"memory_ids": [new.pk]})
            return new
    except IntegrityError as exc:
        raise integrity_to_domain(exc) from exc


def end_request_pending(memory: Memory, action: str) -> dict | None:
    """The first person's request to `action` ("retire", "forget", "forget_hard") this memory, while it
    waits for a second person; None when there is none."""
    return (memory.meta.get("end_requests") or {}).get(action)


def _first_of_two(memory: Memory, actor: Principal | None, action: str, reason: str) -> bool:
    """Four-eyes for ending a long-term commitment: the first curator's or owner's call is recorded as a
    request (audited, the memory unchanged) and True is returned; a second, different one's call goes
    ahead (the request is cleared in memory.meta, saved by the caller). The same person twice is refused."""
    if actor is None or not ending_needs_two_people(memory):
        return False
    requests = dict(memory.meta.get("end_requests") or {})
    first = requests.get(action)
    if first is not None and first.get("by") == actor.pk:
        raise FourEyesRequired(FOUR_EYES_SAME_PERSON)
    if first is not None:
        requests.pop(action)
        memory.meta = {**memory.meta, "end_requests": requests}
        return False
    requests[action] = {
        "by": actor.pk,
        "by_name": actor.name,
        "reason": reason,
        "at": timezone.now().isoformat(),
    }
    memory.meta = {**memory.meta, "end_requests": requests}
    memory.save(update_fields=["meta", "updated_at"])
    audit_record(
        actor=actor,
        entry=AuditEntry(
            f"memory.{action}_request",
            "memory",
            str(memory.pk),
            memory.scope.path,
            memory.status,
            memory.status,
            reason,
            {"approvals": 1, "needed": 2},
        ),
    )
    memory.four_eyes_pending = FourEyesPending(action, actor.name, 1, 2)
    return True


def memory_retire(*, memory_id: int, actor: Principal | None, reason: str) -> Memory:
    """Retire a memory. A long-term commitment of a four-eyes scope needs two different curators or
    owners: the first call only records the request (see end_request_pending), the second retires it."""
    reason = _required_reason(reason)
    with transaction.atomic():
        memory = lock_memory(memory_id)
        require(actor, memory.scope, Action.RETIRE)
        if _first_of_two(memory, actor, "retire", reason):
            return memory
        return transition(
            memory, Status.RETIRED, actor=actor, action="memory.retire", reason=reason, fields=("meta",)
        )


def memory_forget(*, memory_id: int, actor: Principal | None, reason: str, hard: bool = False) -> Memory:
    """Soft: the memory is deactivated (text kept for owners). Hard: text, lexical terms and embedding are
    purged now, a tombstone with the content hash stays, and every derived copy is redacted by the workers.
    Either way its words are taken out of every place they went (services/memory/words.py: the turn it was
    read from, stored turns, relation reasons, summaries), and the undecided candidates read from it are
    forgotten with it; `memory.reached` is the report of those places. An active long-term commitment of a
    four-eyes scope takes two different people, as memory_retire."""
    reason = _required_reason(reason)
    with transaction.atomic():
        memory = lock_memory(memory_id)
        require(actor, memory.scope, Action.FORGET_HARD if hard else Action.FORGET_SOFT)
        memory.reached = []
        before = memory.status
        if before == Status.FORGOTTEN and (not hard or memory.purged_at):
            return memory  # forgetting twice changes nothing
        if _first_of_two(memory, actor, "forget_hard" if hard else "forget", reason):
            return memory
        if before != Status.FORGOTTEN:
            memory.status = Status.FORGOTTEN
        fields = ["status", "updated_at", "meta"]
        memory.save(update_fields=["status", "updated_at"])  # a derived row read back sees it forgotten
        words = words_forget(memory, actor, hard=hard)
        if hard:
            memory.text = ""
            memory.lexical = ""
            memory.embedding = None
            memory.embedding_hash = ""
            memory.purged_at = timezone.now()
            memory.meta = purged_meta(memory.meta)
            memory.passages.all().delete()  # the vectors of its sentences go with the vector of the whole
            fields += ["text", "lexical", "embedding", "embedding_hash", "purged_at"]
        memory.save(update_fields=fields)
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "memory.forget_hard" if hard else "memory.forget",
                "memory",
                str(memory.pk),
                memory.scope.path,
                before,
                Status.FORGOTTEN,
                reason,
                {"mode": "hard" if hard else "soft", "hash": memory.content_hash, "reached": words.places},
            ),
        )
        outbox_emit(
            topic="memory.forgotten",
            memory=memory,
            payload={
                "memory_ids": [memory.pk],
                "mode": "hard" if hard else "soft",
                # Memories whose text lost the forgotten words: embedded again, their caches dropped.
                "rewritten_ids": words.rewritten,
            },
        )
        for derived_id in words.derived:
            forgotten = memory_forget(
                memory_id=derived_id,
                actor=actor,
                reason=f"read from memory {memory.pk}, forgotten",
                hard=hard,
            )
            words.places += forgotten.reached
        memory.reached = _merged(words.places)
        return memory


def _merged(places: list[dict]) -> list[dict]:
    """One line per memory and one per kind of place (the derived forgets' turns and links added up)."""
    out: dict[tuple, dict] = {}
    for place in places:
        key = (place["place"], place.get("memory_id"))
        if key in out and "count" in place:
            out[key]["count"] += place["count"]
        else:
            out.setdefault(key, dict(place))
    return list(out.values())
