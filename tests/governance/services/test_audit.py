import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from rest_framework.test import APIClient

from governance.models import AuditEvent
from governance.services.memory import MemoryInput, memory_confirm, memory_forget, memory_record
from governance.services.principal import token_issue


def some_history(scope, reviewer, owner):
    m = memory_record(
        item=MemoryInput(
            scope=scope,
            kind="preference",
            text="secret-ish preference",
            source_kind="assistant",
            status="proposed",
        ),
        actor=None,
    )
    memory_confirm(memory_id=m.pk, actor=reviewer, reason="fine")
    memory_forget(memory_id=m.pk, actor=owner, reason="asked", hard=True)
    return m


def tamper(event_id: int, **changes):
    sets = ", ".join(f"{k} = %s" for k in changes)
    with connection.cursor() as cur:
        cur.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE refuses while FK checks are deferred
        cur.execute("ALTER TABLE governance_auditevent DISABLE TRIGGER audit_append_only")
        cur.execute(f"UPDATE governance_auditevent SET {sets} WHERE id = %s", [*changes.values(), event_id])
        cur.execute("ALTER TABLE governance_auditevent ENABLE TRIGGER audit_append_only")


def test_every_state_change_is_audited_and_a_hard_forget_keeps_the_hash_not_the_text(
    project_scope, reviewer, owner
):
    m = some_history(project_scope, reviewer, owner)
    events = list(AuditEvent.objects.filter(target_type="memory", target_id=str(m.pk)).order_by("id"))
    assert [e.action for e in events] == ["memory.record", "memory.confirm", "memory.forget_hard"]
    assert events[-1].data["hash"] == m.content_hash and events[-1].actor_name == "olivia"
    assert all("secret-ish" not in str(e.data) + e.reason for e in events)


def test_verify_audit_command_passes_on_an_intact_chain(project_scope, reviewer, owner, capsys):
    some_history(project_scope, reviewer, owner)
    call_command("verify_audit")
    assert "audit chain OK" in capsys.readouterr().out


def test_tampered_reason_is_found_and_the_first_bad_row_named(project_scope, reviewer, owner):
    some_history(project_scope, reviewer, owner)
    victim = AuditEvent.objects.get(action="memory.confirm")
    tamper(victim.pk, reason="nobody confirmed this")
    with pytest.raises(CommandError, match=f"event id {victim.pk}: the row's content"):
        call_command("verify_audit")


def test_a_deleted_row_breaks_the_link_of_the_next_one(project_scope, reviewer, owner):
    some_history(project_scope, reviewer, owner)
    rows = list(AuditEvent.objects.order_by("id").values_list("id", flat=True))
    with connection.cursor() as cur:
        cur.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE refuses while FK checks are deferred
        cur.execute("ALTER TABLE governance_auditevent DISABLE TRIGGER audit_append_only")
        cur.execute("DELETE FROM governance_auditevent WHERE id = %s", [rows[2]])
        cur.execute("ALTER TABLE governance_auditevent ENABLE TRIGGER audit_append_only")
    with pytest.raises(CommandError, match=f"event id {rows[3]}: prev_hash"):
        call_command("verify_audit")


def test_the_audit_log_refuses_updates_without_disabling_its_trigger(project_scope, reviewer, owner):
    some_history(project_scope, reviewer, owner)
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cur:
        cur.execute("UPDATE governance_auditevent SET reason = 'x'")


def test_audit_verify_endpoint_reports_the_first_bad_row_to_owners_only(project_scope, reviewer, owner):
    some_history(project_scope, reviewer, owner)
    owner_client, reviewer_client = APIClient(), APIClient()
    owner_client.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(principal=owner, actor=None)}")
    reviewer_client.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(principal=reviewer, actor=None)}")
    ok = owner_client.get("/api/v1/audit/verify").json()
    assert ok["ok"] is True and ok["first_bad_id"] is None and ok["checked"] >= 5
    denied = reviewer_client.get("/api/v1/audit/verify")
    assert denied.status_code == 403 and "owner" in denied.json()["message"]
    victim = AuditEvent.objects.get(action="memory.forget_hard")
    tamper(victim.pk, after_status="active")
    bad = owner_client.get("/api/v1/audit/verify").json()
    assert (bad["ok"], bad["first_bad_id"]) == (False, victim.pk)
