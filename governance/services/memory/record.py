"""Writes of memories, part one: recording them (one, or a batch: the fast path). The other writes are in
`lifecycle` (propose, confirm, reject, supersede, retire, forget) and `reinforce`; the package re-exports all."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from governance.errors import (
    ActiveKeyExists,
    FourEyesRequired,
    InvalidInput,
    InvalidTransition,
    KeyRevisionConflict,
    StaleRevision,
    TurnAlreadyStored,
)
from governance.models import (
    DECAY_PER_DAY,
    Kind,
    Memory,
    Principal,
    Scope,
    SourceKind,
    Status,
    Tier,
    activation,
    content_hash,
    lexical,
)
from governance.permissions import (
    Action,
    puts_in_force,
    require,
    require_writable,
    requires_four_eyes,
)
from governance.services import near_duplicate
from governance.services.audit import AuditEntry, audit_record, audit_record_many
from governance.services.bulk import copy_insert
from governance.services.four_eyes import approvals_to_put_in_force, fix_at_proposal
from governance.services.memory.reinforcement import near_duplicate_merge
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
# Kept in meta["requested_status"] when an agent asked for `active` and got a proposal instead.
REQUESTED_ACTIVE = "active"
FOUR_EYES_APPROVED = (
    "Recorded your approval ({approvals} of {needed}); a second, different reviewer must confirm it before it is "
    "in force."
)
# How FOUR_EYES_REQUESTED names each ending.
END_WORDS = {"retire": "retire", "forget": "forget", "forget_hard": "hard-forget"}
# Ending or refusing a memory (reject, retire, forget, supersede) needs a reason, whoever calls: the API
# and the dashboard show this sentence (400 invalid_input, field "reason").
REASON_REQUIRED = "Say why: a reason is kept in the audit log with this change."


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
        return {
            "action": self.action,
            "requested_by": self.requested_by,
            "approvals": self.approvals,
            "needed": self.needed,
            "message": self.message,
        }


@dataclass
class MemoryInput:
    """What a caller gives to record one memory; validated by `validate_input`."""

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


def validate_input(item: MemoryInput) -> None:
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


def may_confirm(item: MemoryInput, actor: Principal | None) -> bool:
    return not _is_plain_episode(item) and puts_in_force(actor, item.scope)


def build_memory(
    item: MemoryInput, actor: Principal | None, now: datetime, *, confirmed: bool = False
) -> Memory:
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
        # Small talk is kept as the episode it is, with no keyword text (and no vector: embeddable()).
        lexical=""
        if (item.meta or {}).get("small_talk")
        else lexical.lexical_text(item.text, item.speaker or ""),
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
    if (
        not _is_plain_episode(item)
        and approvals_to_put_in_force(build_memory(item, actor, timezone.now())) >= 2
    ):
        raise FourEyesRequired(FOUR_EYES_ACTIVE_WRITE)


def _created_entry(memory: Memory) -> AuditEntry:
    return AuditEntry(
        action="memory.record",
        target_type="memory",
        target_id=str(memory.pk),
        scope_path=memory.scope.path,
        after_status=memory.status,
        data={
            "kind": memory.kind,
            "key": memory.key,
            "revision": memory.revision,
            "hash": memory.content_hash,
        },
    )


def memory_record(*, item: MemoryInput, actor: Principal | None) -> Memory:
    """Write one memory (an episodic trace, a candidate, a proposal or — with the right — an active fact).
    With a key and no revision it becomes the next revision; the same text at the same revision is a no-op."""
    validate_input(item)
    require(actor, item.scope, Action.WRITE_CANDIDATE)
    require_writable(actor, item.scope, episodes_only=item.kind == Kind.EPISODIC)
    confirmed = _settle_status(item, may_confirm(item, actor))
    _check_four_eyes_write(item, actor)
    try:
        with transaction.atomic():
            if item.key is not None:
                same = _existing_keyed(item)
                if same is not None:
                    return same
            found = find_repeat(item)
            if (
                found is not None
                and item.key is None
                and near_duplicate.absorbs(item.kind, found, in_force=confirmed)
            ):
                return near_duplicate_merge(
                    kept_id=found.memory_id,
                    source=_source_of(item),
                    share=found.share,
                    actor=actor,
                    said_at=item.occurred_at,
                )
            waiting = None
            if found is not None and near_duplicate.proposes(item.kind, found):
                confirmed = _propose_revision(item, found, confirmed)
            else:
                # a keyed write repeating a memory not in force (the key decides), or a person's write in
                # force of what is still waiting for review (stored in force: near_duplicate.absorbs)
                waiting = found if item.key is None else None
                found = None
            memory = build_memory(item, actor, timezone.now(), confirmed=confirmed)
            memory.save()
            audit_record(actor=actor, entry=_created_entry(memory))
            outbox_emit(topic="memory.created", memory=memory, payload={"memory_ids": [memory.pk]})
            if waiting is not None:
                _mark_in_force(waiting, memory)
            if found is None:  # a repeat says nothing its original does not: no contradiction to queue
                queue_conflicts(memory, actor)
            fix_at_proposal(memory)
            return memory
    except IntegrityError as exc:
        raise integrity_to_domain(exc) from exc


def _mark_in_force(waiting: near_duplicate.NearDuplicate, memory: Memory) -> None:
    """A person wrote in force (`memory`) what was still waiting for review: when the new row says all the
    waiting one says, the waiting one records it (meta near_duplicate_of, shown in the review queue), and
    confirming it is refused (memory_confirm: never a second copy in force). No outbox row of its own: its
    status is unchanged (a `memory.status` row would tell webhook subscribers it waits for review again), and
    the new row's `memory.created`, in the same transaction, already renews the workspace's caches."""
    entry = near_duplicate.in_force_entry(waiting.text, memory)
    if entry is None:
        return
    row = Memory.objects.select_for_update(no_key=True, of=("self",)).get(pk=waiting.memory_id)
    row.meta = {**(row.meta or {}), near_duplicate.OF: entry}
    row.save(update_fields=["meta", "updated_at"])


def find_repeat(item: MemoryInput) -> near_duplicate.NearDuplicate | None:
    """The memory this write repeats (governance/services/near_duplicate.py), None for episodes, or with
    the check off. Writes of one text in one scope take turns here, so two at once store one."""
    if not near_duplicate.checked(item.kind, item.meta):
        return None
    near_duplicate.lock_text(item.scope.pk, content_hash(item.text))
    return near_duplicate.near_duplicate_find(
        scope_id=item.scope.pk, kind=item.kind, text=item.text, task_type=item.task_type
    )


def _source_of(item: MemoryInput) -> dict:
    source = {
        "source_kind": item.source_kind,
        "source_ref": item.source_ref or "",
        "session": item.session or "",
        "status": item.status or "",
    }
    # The episodes a repeated candidate was read from stay its evidence: promotion counts their sessions.
    episode_ids = (item.meta or {}).get("episode_ids")
    if isinstance(episode_ids, list) and all(isinstance(i, int) for i in episode_ids):
        source["episode_ids"] = episode_ids
    return source


def _propose_revision(item: MemoryInput, found: near_duplicate.NearDuplicate, confirmed: bool) -> bool:
    """A rule written again: a proposal of the next revision of the rule it repeats (its key, when it has
    one), for a person to confirm; only a person with the right, writing it in force, puts it in force.
    Returns whether it is written confirmed."""
    item.meta = {**(item.meta or {}), near_duplicate.OF: near_duplicate.proposal_entry(found)}
    if confirmed:
        return True
    item.status = Status.PROPOSED
    if item.key is None and found.key is not None:
        item.key, item.revision = found.key, None
        _existing_keyed(item)  # takes the key's lock and the next revision
    return False


def queue_conflicts(memory: Memory, actor: Principal | None) -> None:
    """Conflict detection for a memory just written or just put in force (governance/services/conflict.py):
    one waiting for review is linked to the memories in force it contradicts; one in force takes up the
    statements waiting for review said after it that contradict it, and each of those has its count of
    reviewers fixed again (four-eyes: it may now contradict a long-term commitment)."""
    from governance.services.conflict import conflict_detect, queue_later_contradictions

    if memory.status == Status.ACTIVE:
        for later in queue_later_contradictions(memory=memory, actor=actor):
            fix_at_proposal(later)
    else:
        conflict_detect(memory=memory, actor=actor)


def lock_key(scope_id: int, key: str) -> None:
    """Serialise the writers of one (scope, key) until the end of the transaction, so two writers never
    pick the same next revision. Row locks cannot do this: a new key has no row yet, and PostgreSQL
    cannot lock rows under MAX(), so Django drops FOR UPDATE from the aggregate."""
    with transaction.get_connection().cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"memory-key:{scope_id}:{key}"]
        )


def _existing_keyed(item: MemoryInput) -> Memory | None:
    """Resolve the revision of a keyed write; return the existing row when this exact write was already made."""
    lock_key(item.scope.pk, item.key)
    rows = Memory.objects.filter(scope=item.scope, key=item.key)
    latest = rows.aggregate(m=Max("revision"))["m"] or 0
    if item.revision is None:
        item.revision = latest + 1
        return None
    existing = rows.filter(revision=item.revision).first()
    if existing is None:
        if (
            item.revision < latest
            and (item.status or default_status(item.kind, item.source_kind)) == Status.ACTIVE
        ):
            raise StaleRevision(current_revision=latest)
        return None
    if existing.content_hash == content_hash(item.text):
        return existing
    raise KeyRevisionConflict(existing_id=existing.pk, revision=item.revision)


def integrity_to_domain(exc: IntegrityError) -> Exception:
    text = str(exc)
    if "memory_one_active_per_key" in text:
        return ActiveKeyExists()
    if "memory_unique_key_revision" in text:
        return KeyRevisionConflict()
    if "memory_no_resurrection" in text:
        return StaleRevision()
    if "memory_one_episode_per_turn" in text:
        return TurnAlreadyStored()
    if "memory_status_transition" in text:
        return InvalidTransition()
    return exc


def _near_checked(item: MemoryInput) -> bool:
    return near_duplicate.checked(item.kind, item.meta)


def memory_record_batch(*, items: list[MemoryInput], actor: Principal | None) -> list[Memory]:
    """Bulk write (imports, event ingestion): one transaction, one audit event per memory, one outbox row
    for the batch; embedding is deferred to the worker. Keyed items take the single path."""
    for item in items:
        validate_input(item)
    checked: set[int] = set()
    may_confirm: dict[int, bool] = {}  # asked once per scope, and only when a rule-like item needs it
    confirmed: dict[int, bool] = {}
    for item in items:
        if item.scope.pk not in checked:
            require(actor, item.scope, Action.WRITE_CANDIDATE)
            require_writable(
                actor,
                item.scope,
                episodes_only=all(i.kind == Kind.EPISODIC for i in items if i.scope.pk == item.scope.pk),
            )
            checked.add(item.scope.pk)
        if not _is_plain_episode(item) and item.scope.pk not in may_confirm:
            may_confirm[item.scope.pk] = puts_in_force(actor, item.scope)
        confirmed[id(item)] = _settle_status(item, may_confirm.get(item.scope.pk, False))
        _check_four_eyes_write(item, actor)
    now = timezone.now()
    try:
        with transaction.atomic():
            # Keyed writes and statements that may repeat one already stored take the single path.
            single = [i for i in items if i.key is not None or _near_checked(i)]
            taken = {id(i) for i in single}
            plain = [i for i in items if id(i) not in taken]
            created = copy_insert(
                Memory, [build_memory(i, actor, now, confirmed=confirmed[id(i)]) for i in plain]
            )
            audit_record_many(actor=actor, entries=[_created_entry(m) for m in created])
            copied = len(created)
            for item in single:
                memory = memory_record(item=item, actor=actor)
                if getattr(memory, "near_duplicate", None) is None:  # a repeat adds no memory
                    created.append(memory)
            four_eyes: dict[int, bool] = {}  # asked once per scope
            for memory in created[:copied]:
                if memory.key is None:
                    queue_conflicts(memory, actor)
                    if memory.scope_id not in four_eyes:
                        four_eyes[memory.scope_id] = requires_four_eyes(memory.scope)
                    if four_eyes[memory.scope_id]:
                        fix_at_proposal(memory)
            if copied:
                outbox_emit(topic="memory.created", payload={"memory_ids": [m.pk for m in created[:copied]]})
            return created
    except IntegrityError as exc:
        raise integrity_to_domain(exc) from exc
