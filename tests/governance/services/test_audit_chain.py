"""The audit chain verifies end to end, and a row changed behind the services' back is found by id.
To play a database-level attacker (a superuser) the tests switch triggers off for their session with
session_replication_role, inside their own transaction (rolled back with the test)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from governance.models import AuditEvent, Memory
from governance.services.audit import audit_verify_chain
from governance.services.memory import MemoryInput, memory_forget, memory_record, memory_retire


@pytest.fixture
def history(project_scope, owner):
    """A few changes of state, each leaving audit events."""
    for i in range(3):
        m = memory_record(
            item=MemoryInput(
                scope=project_scope,
                kind="convention",
                key=f"rule{i}",
                text=f"rule {i}",
                source_kind="user",
                status="active",
            ),
            actor=owner,
        )
        memory_retire(memory_id=m.pk, actor=owner, reason="obsolete")
    memory_forget(memory_id=m.pk, actor=owner, reason="asked to", hard=True)
    return list(AuditEvent.objects.order_by("id"))


def _as_attacker(sql: str, params: list) -> None:
    with connection.cursor() as cur:
        cur.execute("SET LOCAL session_replication_role = replica")
        cur.execute(sql, params)
        cur.execute("SET LOCAL session_replication_role = origin")


def test_untouched_chain_verifies_every_row(history):
    report = audit_verify_chain()
    assert report.ok and report.first_bad_id is None
    assert report.checked == len(history) == AuditEvent.objects.count()


def test_audit_rows_cannot_be_updated_or_deleted_through_the_database(history):
    victim = history[2]
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cur:
        cur.execute("UPDATE governance_auditevent SET reason = 'nothing happened' WHERE id = %s", [victim.pk])
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cur:
        cur.execute("DELETE FROM governance_auditevent WHERE id = %s", [victim.pk])
    assert audit_verify_chain().ok


def test_edited_row_is_detected_with_its_id(history):
    victim = history[len(history) // 2]
    _as_attacker("UPDATE governance_auditevent SET reason = 'nothing happened' WHERE id = %s", [victim.pk])

    report = audit_verify_chain()
    assert not report.ok
    assert report.first_bad_id == victim.pk
    assert "content" in report.problem


def test_edited_row_with_recomputed_hash_breaks_the_link_of_the_next_row(history):
    victim, following = history[3], history[4]
    victim.reason = "rewritten"
    forged = victim.compute_hash()
    _as_attacker(
        "UPDATE governance_auditevent SET reason = %s, hash = %s WHERE id = %s",
        ["rewritten", forged, victim.pk],
    )

    report = audit_verify_chain()
    assert not report.ok
    assert report.first_bad_id == following.pk
    assert "prev_hash" in report.problem


def test_deleted_row_is_detected_at_the_row_after_the_gap(history):
    victim, following = history[2], history[3]
    _as_attacker("DELETE FROM governance_auditevent WHERE id = %s", [victim.pk])

    report = audit_verify_chain()
    assert (report.ok, report.first_bad_id) == (False, following.pk)


def test_forgotten_memory_text_never_enters_the_audit_log(history):
    forgotten_text = "rule 2"
    for event in AuditEvent.objects.all():
        assert forgotten_text not in event.reason
        assert forgotten_text not in str(event.data)


def test_bulk_write_appends_one_chained_event_per_memory_in_order(project_scope, agent):
    from governance.services.memory import memory_record_batch

    created = memory_record_batch(
        items=[
            MemoryInput(scope=project_scope, kind="episodic", text=f"turn {i} 第{i}轮", source_kind="user")
            for i in range(50)
        ],
        actor=agent,
    )
    ids = [str(m.pk) for m in created]
    events = AuditEvent.objects.filter(action="memory.record", target_id__in=ids).order_by("id")
    assert [e.target_id for e in events] == ids
    assert [m.pk for m in created] == sorted(m.pk for m in created)
    stored = Memory.objects.get(pk=created[7].pk)
    assert (stored.text, stored.status, stored.lexical != "", stored.created_at is not None) == (
        "turn 7 第7轮",
        "active",
        True,
        True,
    )
    assert audit_verify_chain().ok
