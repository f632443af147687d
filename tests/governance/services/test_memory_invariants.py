import pytest
from django.db import IntegrityError, connection, transaction

from governance.errors import (
    ActiveKeyExists,
    InvalidTransition,
    KeyRevisionConflict,
    NotFound,
    StaleRevision,
)
from governance.models import AuditEvent, Memory, Outbox, Relation, Status
from governance.services.memory import (
    MemoryInput,
    memory_confirm,
    memory_forget,
    memory_record,
    memory_retire,
    memory_supersede,
)


def keyed(scope, text, **kw):
    return MemoryInput(
        scope=scope, kind="convention", key="export_format", text=text, source_kind="user", **kw
    )


def test_episodic_trace_is_recorded_active_and_inferred_memory_is_a_candidate(project_scope, agent):
    trace = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="episodic", text="User: export as PDF", source_kind="user"
        ),
        actor=agent,
    )
    guess = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="preference", text="likes PDF", source_kind="model_inference"
        ),
        actor=agent,
    )
    assert trace.status == Status.ACTIVE
    assert guess.status == Status.CANDIDATE


def test_agent_cannot_write_an_active_fact_without_the_right_to_confirm(project_scope, agent):
    # Agents propose, people decide: the write is kept, as a proposal that waits for a reviewer.
    memory = memory_record(item=keyed(project_scope, "PDF", status="active"), actor=agent)
    assert (memory.status, memory.confirmed_at) == (Status.PROPOSED, None)
    assert not Memory.objects.filter(status=Status.ACTIVE).exists()


def test_outsider_gets_not_found_not_forbidden(project_scope, outsider):
    with pytest.raises(NotFound):
        memory_record(item=keyed(project_scope, "PDF"), actor=outsider)


def test_partial_unique_index_allows_one_active_memory_per_key(project_scope):
    memory_record(item=keyed(project_scope, "PDF", status="active"), actor=None)
    with pytest.raises(ActiveKeyExists):
        memory_record(item=keyed(project_scope, "PPTX", status="active"), actor=None)
    # The database itself refuses, even past the service.
    first = Memory.objects.get()
    dup = Memory(
        **{f.attname: getattr(first, f.attname) for f in Memory._meta.concrete_fields if f.attname != "id"}
    )
    dup.revision = 7
    with pytest.raises(IntegrityError), transaction.atomic():
        dup.save()


def test_two_texts_for_the_same_key_revision_conflict_and_same_text_is_idempotent(project_scope):
    a = memory_record(item=keyed(project_scope, "PDF", revision=1), actor=None)
    again = memory_record(item=keyed(project_scope, "PDF", revision=1), actor=None)
    assert again.pk == a.pk
    with pytest.raises(KeyRevisionConflict):
        memory_record(item=keyed(project_scope, "PPTX", revision=1), actor=None)
    assert Memory.objects.count() == 1


def test_supersede_creates_next_revision_links_and_marks_old_superseded(project_scope, curator):
    old = memory_record(item=keyed(project_scope, "Export as PDF", status="active"), actor=None)
    new = memory_supersede(
        memory_id=old.pk, text="Export as PPTX", reason="user changed it", source_kind="user", actor=curator
    )
    old.refresh_from_db()
    assert (old.status, new.status, new.revision, new.key) == ("superseded", "active", 2, "export_format")
    assert Relation.objects.filter(source=new, target=old, kind="supersedes").exists()
    assert AuditEvent.objects.filter(action="memory.supersede", target_id=str(new.pk)).exists()
    assert Outbox.objects.filter(memory=new, topic="memory.created").exists()


def test_superseded_memory_is_never_resurrected(project_scope, curator):
    old = memory_record(item=keyed(project_scope, "PDF", status="active"), actor=None)
    memory_supersede(memory_id=old.pk, text="PPTX", reason="changed", source_kind="user", actor=curator)
    with pytest.raises(InvalidTransition):
        memory_confirm(memory_id=old.pk, actor=None)
    # An older revision written again as active is refused by the service …
    with pytest.raises((StaleRevision, KeyRevisionConflict)):
        memory_record(item=keyed(project_scope, "PDF v1 again", revision=1, status="active"), actor=None)
    # … and by the database trigger when a raw UPDATE tries it.
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cur:
        cur.execute("UPDATE governance_memory SET status='active' WHERE id=%s", [old.pk])
    old.refresh_from_db()
    assert old.status == Status.SUPERSEDED


def test_retired_and_forgotten_memories_stay_down(project_scope, owner):
    m = memory_record(item=keyed(project_scope, "PDF", status="active"), actor=None)
    memory_retire(memory_id=m.pk, actor=owner, reason="obsolete")
    memory_forget(memory_id=m.pk, actor=owner, reason="asked to", hard=True)
    m.refresh_from_db()
    assert (m.status, m.text, m.embedding, m.lexical) == ("forgotten", "", None, "")
    assert m.content_hash  # the tombstone keeps the hash
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cur:
        cur.execute("UPDATE governance_memory SET status='retired' WHERE id=%s", [m.pk])


def test_status_values_are_check_constrained(project_scope):
    m = memory_record(item=keyed(project_scope, "PDF"), actor=None)
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cur:
        cur.execute("UPDATE governance_memory SET status='bogus' WHERE id=%s", [m.pk])
