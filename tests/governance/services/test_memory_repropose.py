"""Undoing a rejection by proposing the memory again: a new proposal derived from the rejected one (a
status never goes back), audited with its outbox row, refused for anything but a rejected memory."""

import pytest

from governance.errors import InvalidInput, InvalidTransition, NotFound, PermissionDenied
from governance.models import AuditEvent, Memory, Outbox, Relation, RelationKind, Status
from governance.services.memory import (
    REASON_REQUIRED,
    MemoryInput,
    memory_confirm,
    memory_forget,
    memory_record,
    memory_reject,
)
from governance.services.review import REPROPOSED_FROM, memory_repropose


def rejected(scope, text="The user prefers dark themes", *, key=None, tier=None, kind="preference"):
    memory = memory_record(
        item=MemoryInput(
            scope=scope,
            kind=kind,
            key=key,
            text=text,
            source_kind="assistant",
            source_ref="turn-7",
            status="proposed",
            tier=tier,
        ),
        actor=None,
    )
    return memory_reject(memory_id=memory.pk, actor=None, reason="the user never said that")


def counts() -> tuple[int, int, int]:
    return Memory.objects.count(), AuditEvent.objects.count(), Outbox.objects.count()


def test_a_reviewer_proposes_a_rejected_memory_again_as_a_new_audited_proposal(project_scope, reviewer):
    old = rejected(project_scope, key="theme")
    audits, outbox = AuditEvent.objects.count(), Outbox.objects.count()
    new = memory_repropose(memory_id=old.pk, actor=reviewer, reason="rejected by mistake")
    old.refresh_from_db()
    assert old.status == Status.REJECTED  # the rejected version is never changed back
    assert new.pk != old.pk and new.status == Status.PROPOSED
    assert (new.text, new.kind, new.key, new.scope_id, new.source_kind, new.source_ref) == (
        old.text,
        old.kind,
        old.key,
        old.scope_id,
        old.source_kind,
        old.source_ref,
    )
    assert new.revision == old.revision + 1 and new.created_by == reviewer
    assert new.meta["reproposed"]["from"] == old.pk
    assert (new.meta["reproposed"]["by"], new.meta["reproposed"]["reason"]) == (
        reviewer.pk,
        "rejected by mistake",
    )
    link = Relation.objects.get(source=new, target=old)
    assert (link.kind, link.reason, link.actor) == (RelationKind.DERIVED_FROM, REPROPOSED_FROM, reviewer)
    event = AuditEvent.objects.get(action="memory.repropose")
    assert (event.target_id, event.reason, event.data["from"], event.actor) == (
        str(new.pk),
        "rejected by mistake",
        old.pk,
        reviewer,
    )
    assert AuditEvent.objects.count() == audits + 1
    assert Outbox.objects.filter(memory=new, topic="memory.created").count() == 1
    assert Outbox.objects.count() == outbox + 1


def test_the_new_proposal_can_be_confirmed(project_scope, reviewer):
    new = memory_repropose(
        memory_id=rejected(project_scope).pk, actor=reviewer, reason="it was right after all"
    )
    assert memory_confirm(memory_id=new.pk, actor=reviewer).status == Status.ACTIVE


@pytest.mark.parametrize("status", [Status.PROPOSED, Status.ACTIVE])
def test_only_a_rejected_memory_is_proposed_again_and_nothing_is_written(status, project_scope, reviewer):
    memory = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="preference", text="Prefers PDF", source_kind="assistant", status=status
        ),
        actor=None,
    )
    before = counts()
    with pytest.raises(InvalidTransition) as exc:
        memory_repropose(memory_id=memory.pk, actor=reviewer, reason="again")
    assert exc.value.status == 409 and exc.value.code == "invalid_transition"
    assert counts() == before


@pytest.mark.parametrize("hard", [False, True])
def test_a_forgotten_rejection_is_never_proposed_again(hard, project_scope, owner):
    old = rejected(project_scope)
    memory_forget(memory_id=old.pk, actor=owner, reason="remove it", hard=hard)
    before = counts()
    with pytest.raises(InvalidTransition):
        memory_repropose(memory_id=old.pk, actor=owner, reason="bring it back")
    assert counts() == before


@pytest.mark.parametrize("reason", ["", "   "])
def test_a_reason_is_required(reason, project_scope, reviewer):
    old = rejected(project_scope)
    before = counts()
    with pytest.raises(InvalidInput) as exc:
        memory_repropose(memory_id=old.pk, actor=reviewer, reason=reason)
    assert (exc.value.message, exc.value.status) == (REASON_REQUIRED, 400)
    assert counts() == before


def test_who_may_is_who_may_reject(project_scope, agent, outsider):
    old = rejected(project_scope)
    before = counts()
    with pytest.raises(PermissionDenied):
        memory_repropose(memory_id=old.pk, actor=agent, reason="again")
    with pytest.raises(NotFound):
        memory_repropose(memory_id=old.pk, actor=outsider, reason="again")
    with pytest.raises(NotFound):
        memory_repropose(memory_id=old.pk + 10_000, actor=agent, reason="again")
    assert counts() == before


def test_under_four_eyes_the_new_proposal_needs_two_reviewers(four_eyes_scope, reviewer, second_reviewer):
    old = rejected(
        four_eyes_scope, text="Release notes are written in English", kind="convention", tier="long"
    )
    new = memory_repropose(memory_id=old.pk, actor=reviewer, reason="rejected by mistake")
    assert new.meta["approvals_needed"] == 2
    first = memory_confirm(memory_id=new.pk, actor=reviewer)
    assert first.status == Status.PROPOSED and first.four_eyes_pending is not None
    assert memory_confirm(memory_id=new.pk, actor=second_reviewer).status == Status.ACTIVE
