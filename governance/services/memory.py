"""Writes of memories: record (fast), propose, confirm, reject, supersede, retire, forget, reinforce."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from governance import activation, lexical
from governance.bulk import copy_insert
from governance.errors import (
    ActiveKeyExists,
    FourEyesRequired,
    InvalidInput,
    InvalidTransition,
    KeyRevisionConflict,
    NotFound,
    StaleRevision,
)
from governance.models import (
    DECAY_PER_DAY,
    TRANSITIONS,
    Kind,
    Memory,
    Principal,
    ReinforcementEvent,
    Relation,
    RelationKind,
    Scope,
    SourceKind,
    Status,
    Tier,
    content_hash,
)
from governance.permissions import (
    Action,
    approvers,
    ending_needs_two_people,
    puts_in_force,
    require,
    require_writable,
    requires_four_eyes,
)
from governance.propagation.turns import redact_asked_text
from governance.services.audit import AuditEntry, audit_record, audit_record_many
from governance.services.four_eyes import approvals_to_put_in_force, fix_at_proposal
from governance.services.outbox import outbox_emit

MAX_TEXT_CHARS = 20_000
TEXT_EMPTY = "A memory needs a non-empty text."
TEXT_TOO_LONG = f"A memory's text is limited to {MAX_TEXT_CHARS} characters; split it into several memories."
# Four-eyes: what each refusal or pending request says (the API and the dashboard show these sentences).
FOUR_EYES_ACTIVE_WRITE = (
    "This scope needs two different reviewers for long-term commitments: write it as a proposal, and it is in "
    "force once two reviewers have confirmed it."
)
FOUR_EYES_SUPERSEDE = (
    "This memory is a long-term commitment in a four-eyes scope, so one person cannot replace it: propose the "
    "new text with the same key (status proposed); it supersedes this one once two different reviewers have "
    "confirmed it. Without a key, retire this one (a second curator or owner approves) and propose the new one."
)
FOUR_EYES_SAME_PERSON = (
    "You already asked for this; a long-term commitment in a four-eyes scope ends only when a second, "
    "different curator or owner makes the same request."
)
FOUR_EYES_REQUESTED = (
    "Recorded your request to {action} this long-term commitment. This scope needs a second, different "
    "curator or owner to make the same request; until then nothing has changed and it stays in force."
)
FOUR_EYES_APPROVED = (
    "Recorded your approval ({approvals} of {needed}); a second, different reviewer must confirm it before it is "
    "in force."
)
# How FOUR_EYES_REQUESTED names each ending.
END_WORDS = {"retire": "retire", "forget": "forget", "forget_hard": "hard-forget"}


@dataclass(frozen=True)
class FourEyesPending:
    """What a call recorded instead of doing it, because four-eyes asks for a second, different person:
    an approval of a confirmation ("confirm") or the first request to end a commitment ("retire",
    "forget", "forget_hard"). The services return it on the memory (`memory.four_eyes_pending`; None when
    the call did what it was asked), so the API and the dashboard say the same thing without guessing."""

    action: str
    requested_by: str | None
    approvals: int
    needed: int

    @property
    def message(self) -> str:
        if self.action == "confirm":
            return FOUR_EYES_APPROVED.format(approvals=self.approvals, needed=self.needed)
        return FOUR_EYES_REQUESTED.format(action=END_WORDS[self.action])

    def as_dict(self) -> dict:
        return {"action": self.action, "requested_by": self.requested_by, "approvals": self.approvals,
                "needed": self.needed, "message": self.message}


# Ending or refusing a memory (reject, retire, forget, supersede) needs a reason, whoever calls: the API
# and the dashboard show this sentence (400 invalid_input, field "reason").
REASON_REQUIRED = "Say why: a reason is kept in the audit log with this change."
# Kept in meta["requested_status"] when an agent asked for `active` and got a proposal instead.
REQUESTED_ACTIVE = "active"


@dataclass
class MemoryInput:
    """What a caller gives to record one memory; validated by `_validate`."""

    scope: Scope
    kind: str
    text: str
    source_kind: str
    source_ref: str = ""
    key: str | None = None
    revision: int | None = None
    status: str | None = None
    confidence: float = 0.5
    importance: float = 0.5
    tier: str | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    session: str = ""
    speaker: str = ""
    call_id: str = ""
    task_type: str = ""
    occurred_at: datetime | None = None
    meta: dict = field(default_factory=dict)


def _validate(item: MemoryInput) -> None:
    if not item.text or not item.text.strip():
        raise InvalidInput(TEXT_EMPTY, field="text")
    if len(item.text) > MAX_TEXT_CHARS:
        raise InvalidInput(TEXT_TOO_LONG, field="text")
    if item.kind not in Kind.values:
        raise InvalidInput(f"kind must be one of: {', '.join(Kind.values)}.", field="kind")
    if item.source_kind not in SourceKind.values:
        raise InvalidInput(f"source.kind must be one of: {', '.join(SourceKind.values)}.", field="source")
    if item.status is not None and item.status not in (Status.CANDIDATE, Status.PROPOSED, Status.ACTIVE):
        raise InvalidInput("A new memory's status is candidate, proposed or active.", field="status")
    if item.tier is not None and item.tier not in Tier.values:
        raise InvalidInput(f"tier must be one of: {', '.join(Tier.values)}.", field="tier")
    for name in ("confidence", "importance"):
        value = getattr(item, name)
        if not (isinstance(value, int | float) and 0 <= value <= 1 and not math.isnan(value)):
            raise InvalidInput(f"{name} is a number from 0 to 1.", field=name)
    if item.key is not None and (not item.key.strip() or len(item.key) > 200):
        raise InvalidInput("key is a non-empty name of at most 200 characters.", field="key")
    if item.revision is not None and item.revision < 1:
        raise InvalidInput("revision starts at 1.", field="revision")
    if item.valid_from and item.valid_until and item.valid_until <= item.valid_from:
        raise InvalidInput("valid_until must be after valid_from.", field="valid_until")


def default_status(kind: str, source_kind: str) -> str:
    """Episodic traces are records of what happened, so they are active; everything inferred is a candidate."""
    if kind in (Kind.EPISODIC, Kind.WORKING):
        return Status.ACTIVE
    return Status.CANDIDATE


def default_tier(kind: str) -> str:
    if kind in (Kind.EPISODIC, Kind.WORKING):
        return Tier.SHORT
    if kind in (Kind.CONVENTION, Kind.PREFERENCE, Kind.METHOD):
        return Tier.MID
    return Tier.MID


def _is_plain_episode(item: MemoryInput) -> bool:
    """An unkeyed record of what happened: evidence whoever writes it, never a rule."""
    return item.key is None and item.kind in (Kind.EPISODIC, Kind.WORKING)


def _settle_status(item: MemoryInput, may_confirm: bool) -> bool:
    """Fix the status `item` is written with; True when it is written in force, i.e. confirmed by its
    writer. Agents propose, people decide: a rule-like write (a key, an inferred kind, or `active` on
    anything but a plain episode) from a writer without the confirm right becomes a proposal."""
    status = item.status or default_status(item.kind, item.source_kind)
    if _is_plain_episode(item):
        item.status = status
        return False
    if status == Status.ACTIVE and not may_confirm:
        item.status = Status.PROPOSED
        item.meta = {**(item.meta or {}), "requested_status": REQUESTED_ACTIVE}
        return False
    item.status = status
    return status == Status.ACTIVE


def _may_confirm(item: MemoryInput, actor: Principal | None) -> bool:
    return not _is_plain_episode(item) and puts_in_force(actor, item.scope)


def _build(item: MemoryInput, actor: Principal | None, now: datetime, *, confirmed: bool = False) -> Memory:
    status = item.status or default_status(item.kind, item.source_kind)
    decay = DECAY_PER_DAY[item.kind]
    at = item.occurred_at or now
    a0 = 0.5 + item.importance  # importance 0..1 → initial activation 0.5..1.5
    return Memory(
        scope=item.scope,
        kind=item.kind,
        key=item.key,
        revision=item.revision or 1,
        text=item.text,
        lexical=lexical.lexical_text(item.text, item.speaker or ""),
        source_kind=item.source_kind,
        source_ref=item.source_ref or "",
        session=item.session or "",
        speaker=item.speaker or "",
        call_id=item.call_id or "",
        task_type=item.task_type or "",
        occurred_at=at,
        status=status,
        confidence=float(item.confidence),
        importance=float(item.importance),
        tier=item.tier or default_tier(item.kind),
        valid_from=item.valid_from,
        valid_until=item.valid_until,
        content_hash=content_hash(item.text),
        activation_a0=a0,
        decay_rate=decay,
        activation_log_k=activation.initial_log_k(a0, decay, at),
        created_by=actor,
        confirmed_by=actor if confirmed else None,
        confirmed_at=now if confirmed else None,
        meta=item.meta or {},
    )


def _check_four_eyes_write(item: MemoryInput, actor: Principal | None) -> None:
    # Writing straight to `active` what two people must confirm (a long-term commitment of a four-eyes
    # scope, or anything that would replace, override or contradict one there or above: four_eyes.py)
    # would skip the second reviewer: propose it instead.
    if actor is None or item.status != Status.ACTIVE:
        return
    tier = item.tier or default_tier(item.kind)
    if tier == Tier.LONG and requires_four_eyes(item.scope):
        raise FourEyesRequired(FOUR_EYES_ACTIVE_WRITE)
    if not _is_plain_episode(item) and approvals_to_put_in_force(_build(item, actor, timezone.now())) >= 2:
        raise FourEyesRequired(FOUR_EYES_ACTIVE_WRITE)


def _created_entry(memory: Memory) -> AuditEntry:
    return AuditEntry(
        action="memory.record",
        target_type="memory",
        target_id=str(memory.pk),
        scope_path=memory.scope.path,
        after_status=memory.status,
        data={"kind": memory.kind, "key": memory.key, "revision": memory.revision, "hash": memory.content_hash},
    )


def memory_record(*, item: MemoryInput, actor: Principal | None) -> Memory:
    """Write one memory (an episodic trace, a candidate, a proposal or — with the right — an active fact).
    With a key and no revision it becomes the next revision; the same text at the same revision is a no-op."""
    _validate(item)
    require(actor, item.scope, Action.WRITE_CANDIDATE)
    require_writable(actor, item.scope, episodes_only=item.kind == Kind.EPISODIC)
    confirmed = _settle_status(item, _may_confirm(item, actor))
    _check_four_eyes_write(item, actor)
    try:
        with transaction.atomic():
            if item.key is not None:
                same = _existing_keyed(item)
                if same is not None:
                    return same
            memory = _build(item, actor, timezone.now(), confirmed=confirmed)
            memory.save()
            audit_record(actor=actor, entry=_created_entry(memory))
            outbox_emit(topic="memory.created", memory=memory, payload={"memory_ids": [memory.pk]})
            _queue_conflicts(memory, actor)
            fix_at_proposal(memory)
            return memory
    except IntegrityError as exc:
        raise _integrity_to_domain(exc) from exc


def _queue_conflicts(memory: Memory, actor: Principal | None) -> None:
    from governance.services.conflict import conflict_detect

    conflict_detect(memory=memory, actor=actor)


def _lock_key(scope_id: int, key: str) -> None:
    """Serialise the writers of one (scope, key) until the end of the transaction, so two writers never
    pick the same next revision. Row locks cannot do this: a new key has no row yet, and PostgreSQL
    cannot lock rows under MAX(), so Django drops FOR UPDATE from the aggregate."""
    with transaction.get_connection().cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"memory-key:{scope_id}:{key}"])


def _existing_keyed(item: MemoryInput) -> Memory | None:
    """Resolve the revision of a keyed write; return the existing row when this exact write was already made."""
    _lock_key(item.scope.pk, item.key)
    rows = Memory.objects.filter(scope=item.scope, key=item.key)
    latest = rows.aggregate(m=Max("revision"))["m"] or 0
    if item.revision is None:
        item.revision = latest + 1
        return None
    existing = rows.filter(revision=item.revision).first()
    if existing is None:
        if item.revision < latest and (item.status or default_status(item.kind, item.source_kind)) == Status.ACTIVE:
            raise StaleRevision(current_revision=latest)
        return None
    if existing.content_hash == content_hash(item.text):
        return existing
    raise KeyRevisionConflict(existing_id=existing.pk, revision=item.revision)


def _integrity_to_domain(exc: IntegrityError) -> Exception:
    text = str(exc)
    if "memory_one_active_per_key" in text:
        return ActiveKeyExists()
    if "memory_unique_key_revision" in text:
        return KeyRevisionConflict()
    if "memory_no_resurrection" in text:
        return StaleRevision()
    if "memory_status_transition" in text:
        return InvalidTransition()
    return exc


def memory_record_batch(*, items: list[MemoryInput], actor: Principal | None) -> list[Memory]:
    """Bulk write (imports, event ingestion): one transaction, one audit event per memory, one outbox row
    for the batch; embedding is deferred to the worker. Keyed items take the single path."""
    for item in items:
        _validate(item)
    checked: set[int] = set()
    may_confirm: dict[int, bool] = {}  # asked once per scope, and only when a rule-like item needs it
    confirmed: dict[int, bool] = {}
    for item in items:
        if item.scope.pk not in checked:
            require(actor, item.scope, Action.WRITE_CANDIDATE)
            require_writable(actor, item.scope, episodes_only=all(
                i.kind == Kind.EPISODIC for i in items if i.scope.pk == item.scope.pk))
            checked.add(item.scope.pk)
        if not _is_plain_episode(item) and item.scope.pk not in may_confirm:
            may_confirm[item.scope.pk] = puts_in_force(actor, item.scope)
        confirmed[id(item)] = _settle_status(item, may_confirm.get(item.scope.pk, False))
        _check_four_eyes_write(item, actor)
    now = timezone.now()
    try:
        with transaction.atomic():
            plain = [i for i in items if i.key is None]
            created = copy_insert(Memory, [_build(i, actor, now, confirmed=confirmed[id(i)]) for i in plain])
            for item in (i for i in items if i.key is not None):
                created.append(memory_record(item=item, actor=actor))
            audit_record_many(actor=actor, entries=[_created_entry(m) for m in created if m.key is None])
            four_eyes: dict[int, bool] = {}  # asked once per scope
            for memory in created:
                if memory.key is None:
                    _queue_conflicts(memory, actor)
                    if memory.scope_id not in four_eyes:
                        four_eyes[memory.scope_id] = requires_four_eyes(memory.scope)
                    if four_eyes[memory.scope_id]:
                        fix_at_proposal(memory)
            if created:
                outbox_emit(topic="memory.created", payload={"memory_ids": [m.pk for m in created if m.key is None]})
            return created
    except IntegrityError as exc:
        raise _integrity_to_domain(exc) from exc


def _locked(memory_id: int) -> Memory:
    # FOR NO KEY UPDATE of the memory row only. A plain FOR UPDATE with select_related also locked the
    # scope row, and FOR UPDATE conflicts with the FOR KEY SHARE that another transaction's deferred
    # foreign-key check takes at COMMIT while it holds the audit chain's advisory lock, which this one then
    # waits for: under load (bench_load, 8 users) PostgreSQL broke such deadlocks every few seconds.
    try:
        return Memory.objects.select_for_update(no_key=True, of=("self",)).select_related("scope").get(pk=memory_id)
    except Memory.DoesNotExist as exc:
        raise NotFound() from exc


def _transition(
    memory: Memory, to: str, *, actor: Principal | None, action: str, reason: str, data: dict | None = None,
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
        memory = _locked(memory_id)
        require(actor, memory.scope, Action.WRITE_CANDIDATE)
        memory = _transition(memory, Status.PROPOSED, actor=actor, action="memory.propose", reason=reason)
        fix_at_proposal(memory)
        return memory


def memory_confirm(*, memory_id: int, actor: Principal | None, reason: str = "") -> Memory:
    """A reviewer confirms a candidate or proposal: it becomes active (four-eyes where the scope asks)."""
    with transaction.atomic():
        memory = _locked(memory_id)
        require(actor, memory.scope, Action.CONFIRM)
        if memory.status not in (Status.CANDIDATE, Status.PROPOSED):
            raise InvalidTransition(f"Only candidates and proposals can be confirmed; this one is {memory.status}.")
        from governance.services.promotion import promotion_check_support

        promotion_check_support(memory)
        needed = approvals_to_put_in_force(memory)
        if _needs_second_reviewer(memory, actor, needed):
            approvals = approvers(memory)
            # Kept on the row so the review queue shows "1 of 2" for a mid-term revision of a long-term rule.
            memory.meta = {**memory.meta, "approvals": [*approvals, actor.pk], "approvals_needed": needed}
            memory.save(update_fields=["meta", "updated_at"])
            audit_record(
                actor=actor,
                entry=AuditEntry("memory.approve", "memory", str(memory.pk), memory.scope.path,
                                 memory.status, memory.status, reason,
                                 {"approvals": len(approvals) + 1, "needed": needed}),
            )
            memory.four_eyes_pending = FourEyesPending("confirm", actor.name, len(approvals) + 1, needed)
            return memory
        if memory.key:
            _supersede_active_for_key(memory, actor, reason)
        # In force from now on, confirmed by this person (or the system); the pinning reads confirmed_at.
        memory.confirmed_by, memory.confirmed_at = actor, timezone.now()
        memory = _transition(memory, Status.ACTIVE, actor=actor, action="memory.confirm", reason=reason,
                             fields=("confirmed_by", "confirmed_at"))
        _reinforce_rows([memory], weight=0.5, reason=ReinforcementEvent.Reason.REVIEW, actor=actor)
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
    _transition(current, Status.SUPERSEDED, actor=actor, action="memory.superseded", reason=reason,
                data={"by": memory.pk})
    Relation.objects.get_or_create(
        source=memory, target=current, kind=RelationKind.SUPERSEDES, defaults={"reason": reason, "actor": actor}
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
        memory = _locked(memory_id)
        require(actor, memory.scope, Action.CONFIRM)
        if memory.status not in (Status.CANDIDATE, Status.PROPOSED):
            raise InvalidTransition(f"Only candidates and proposals can be rejected; this one is {memory.status}.")
        return _transition(memory, Status.REJECTED, actor=actor, action="memory.reject", reason=reason)


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
            old = _locked(memory_id)
            require(actor, old.scope, Action.SUPERSEDE)
            if actor is not None and ending_needs_two_people(old):
                raise FourEyesRequired(FOUR_EYES_SUPERSEDE)
            if old.status != Status.ACTIVE:
                raise InvalidTransition(
                    f"Only an active memory can be superseded; this one is {old.status}.", current_status=old.status
                )
            revision = old.revision + 1
            if old.key:
                _lock_key(old.scope_id, old.key)
                latest = Memory.objects.filter(scope=old.scope, key=old.key).aggregate(m=Max("revision"))["m"]
                revision = (latest or 0) + 1
            item = MemoryInput(
                scope=old.scope, kind=old.kind, text=text, source_kind=source_kind, source_ref=source_ref,
                key=old.key, revision=revision, status=Status.ACTIVE,
                confidence=old.confidence if confidence is None else confidence,
                importance=old.importance, tier=old.tier, task_type=old.task_type,
            )
            _validate(item)
            if actor is not None and approvals_to_put_in_force(
                    _build(item, actor, timezone.now()), exclude=(old.pk,)) >= 2:
                raise FourEyesRequired(FOUR_EYES_SUPERSEDE)  # it would override or contradict one above
            _transition(old, Status.SUPERSEDED, actor=actor, action="memory.superseded", reason=reason)
            confirmed = _may_confirm(item, actor)  # the supersede right comes with the confirm right
            new = _build(item, actor, timezone.now(), confirmed=confirmed)
            new.save()
            audit_record(actor=actor, entry=AuditEntry(
                "memory.supersede", "memory", str(new.pk), new.scope.path, "", Status.ACTIVE, reason,
                {"supersedes": old.pk, "revision": new.revision, "hash": new.content_hash},
            ))
            Relation.objects.create(source=new, target=old, kind=RelationKind.SUPERSEDES, reason=reason, actor=actor)
            outbox_emit(topic="memory.created", memory=new, payload={"memory_ids": [new.pk]})
            return new
    except IntegrityError as exc:
        raise _integrity_to_domain(exc) from exc


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
    requests[action] = {"by": actor.pk, "by_name": actor.name, "reason": reason, "at": timezone.now().isoformat()}
    memory.meta = {**memory.meta, "end_requests": requests}
    memory.save(update_fields=["meta", "updated_at"])
    audit_record(actor=actor, entry=AuditEntry(
        f"memory.{action}_request", "memory", str(memory.pk), memory.scope.path, memory.status, memory.status,
        reason, {"approvals": 1, "needed": 2},
    ))
    memory.four_eyes_pending = FourEyesPending(action, actor.name, 1, 2)
    return True


def memory_retire(*, memory_id: int, actor: Principal | None, reason: str) -> Memory:
    """Retire a memory. A long-term commitment of a four-eyes scope needs two different curators or
    owners: the first call only records the request (see end_request_pending), the second retires it."""
    reason = _required_reason(reason)
    with transaction.atomic():
        memory = _locked(memory_id)
        require(actor, memory.scope, Action.RETIRE)
        if _first_of_two(memory, actor, "retire", reason):
            return memory
        return _transition(memory, Status.RETIRED, actor=actor, action="memory.retire", reason=reason,
                           fields=("meta",))


def memory_forget(*, memory_id: int, actor: Principal | None, reason: str, hard: bool = False) -> Memory:
    """Soft: the memory is deactivated (text kept for owners). Hard: text, lexical terms and embedding are
    purged now, a tombstone with the content hash stays, and every derived copy is redacted by the workers.
    An active long-term commitment of a four-eyes scope takes two different people, as memory_retire."""
    reason = _required_reason(reason)
    with transaction.atomic():
        memory = _locked(memory_id)
        require(actor, memory.scope, Action.FORGET_HARD if hard else Action.FORGET_SOFT)
        before = memory.status
        if before == Status.FORGOTTEN and (not hard or memory.purged_at):
            return memory  # forgetting twice changes nothing
        if _first_of_two(memory, actor, "forget_hard" if hard else "forget", reason):
            return memory
        if before != Status.FORGOTTEN:
            memory.status = Status.FORGOTTEN
        fields = ["status", "updated_at", "meta"]
        if hard:
            # Every stored turn that asked with this text, cited or not, loses it in this transaction.
            redact_asked_text(workspace_id=memory.scope.workspace_id, text=memory.text)
            memory.text = ""
            memory.lexical = ""
            memory.embedding = None
            memory.embedding_hash = ""
            memory.purged_at = timezone.now()
            fields += ["text", "lexical", "embedding", "embedding_hash", "purged_at"]
        memory.save(update_fields=fields)
        audit_record(actor=actor, entry=AuditEntry(
            "memory.forget_hard" if hard else "memory.forget", "memory", str(memory.pk), memory.scope.path,
            before, Status.FORGOTTEN, reason, {"mode": "hard" if hard else "soft", "hash": memory.content_hash},
        ))
        outbox_emit(topic="memory.forgotten", memory=memory,
                    payload={"memory_ids": [memory.pk], "mode": "hard" if hard else "soft"})
        return memory


def _reinforce_rows(
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
        _reinforce_rows(rows, weight=weight, reason=reason, actor=actor, at=at, turn_id=turn_id)
        return len(rows)
