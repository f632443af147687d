"""Read-your-forgets, the primary's half (governance/services/outbox.read_fence_raise): every change that
takes something out of force or out of reach raises its workspace's read fence in the change's own
transaction, and the fence is stamped with a WAL position past the commit right after it. A new memory
raises nothing. Without a replica configured, recall and context answer from the primary and say so.

The replica's half (a paused standby never serving a forgotten text) is tests/topology/test_replica.py."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from governance.models import ReadFence, Role
from governance.runtime.replica import FENCE_ALL_WORKSPACES, FENCE_SQL, PRIMARY, routed_read, served_by
from governance.services.grant_membership import group_member_add, team_create
from governance.services.memory import (
    MemoryInput,
    memory_forget,
    memory_record,
    memory_retire,
    memory_supersede,
)
from governance.services.principal import grant_add, grant_revoke, user_ensure
from tests.conftest import token_client


def _rule(scope, text="Export format: PDF.", key="export_format"):
    return memory_record(
        item=MemoryInput(
            scope=scope, kind="convention", key=key, text=text, source_kind="user", status="active"
        ),
        actor=None,
    )


def _wal(sql: str) -> int:
    """A WAL position as a number (pg_lsn minus 0/0), so positions compare in Python."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT ({sql}) - '0/0'::pg_lsn")
        return int(cursor.fetchone()[0])


def _fence_of(workspace_id: int) -> ReadFence | None:
    return ReadFence.objects.filter(workspace_id=workspace_id).first()


@pytest.mark.django_db(transaction=True)  # real commits: the stamp is taken after one
def test_each_ending_raises_its_workspaces_fence_past_its_commit(project_scope, other_workspace_scope, owner):
    workspace = project_scope.workspace_id
    granted = _fence_of(workspace)  # the owner's grant raised it
    memory = _rule(project_scope)
    assert _fence_of(workspace).changed_at == granted.changed_at  # a new memory takes nothing out of force

    endings = [
        lambda m: memory_supersede(
            memory_id=m.pk, text="Export format: PPTX.", reason="changed", source_kind="user", actor=owner
        ),
        lambda m: memory_retire(memory_id=m.pk, actor=owner, reason="done"),
        lambda m: memory_forget(memory_id=m.pk, actor=owner, reason="asked", hard=True),
    ]
    for i, ending in enumerate(endings):
        target = memory if i == 0 else _rule(project_scope, key=f"k{i}")
        with transaction.atomic():
            ending(target)
            # Inside the change's transaction: unstamped (a reader takes the primary's position then).
            assert _fence_of(workspace).commit_lsn is None
            inside = _wal("pg_current_wal_insert_lsn()")  # the commit record comes after this
        stamped = _fence_of(workspace).commit_lsn
        assert stamped is not None and _wal(f"'{stamped}'::pg_lsn") > inside
    assert _fence_of(other_workspace_scope.workspace_id) is None  # another workspace is not held back


def test_grant_changes_raise_the_fence_and_a_team_membership_fences_every_workspace(
    project_scope, owner, django_capture_on_commit_callbacks
):
    person = user_ensure(username="pia", actor=None)
    with django_capture_on_commit_callbacks(execute=True):
        grant = grant_add(principal=person, scope=project_scope, role=Role.REVIEWER, actor=owner)
    first = _fence_of(project_scope.workspace_id).commit_lsn
    assert first is not None
    with django_capture_on_commit_callbacks(execute=True):
        grant_revoke(grant_id=grant.pk, actor=owner, reason="left")
    assert _wal(f"'{_fence_of(project_scope.workspace_id).commit_lsn}'::pg_lsn") >= _wal(f"'{first}'::pg_lsn")

    team = team_create(name="designers", actor=owner, workspace=project_scope.workspace)
    with django_capture_on_commit_callbacks(execute=True):
        group_member_add(group=team, member=person, actor=owner)
    assert _fence_of(FENCE_ALL_WORKSPACES).commit_lsn is not None


def test_a_fence_not_yet_stamped_reads_as_the_primarys_position_now(project_scope, owner):
    memory = _rule(project_scope)
    memory_forget(memory_id=memory.pk, actor=owner, reason="asked")  # on_commit never runs: unstamped
    assert _fence_of(project_scope.workspace_id).commit_lsn is None
    before = _wal("pg_current_wal_flush_lsn()")
    with connection.cursor() as cursor:
        cursor.execute(FENCE_SQL, {"w": project_scope.workspace_id, "all": FENCE_ALL_WORKSPACES})
        fence = cursor.fetchone()[0]
    assert fence is not None and _wal(f"'{fence}'::pg_lsn") >= before


def test_without_a_replica_reads_run_on_the_primary_and_say_so(project_scope, owner):
    _rule(project_scope, text="Slides use the blue theme.", key="theme")
    assert routed_read(project_scope.workspace_id, lambda: 42) == 42 and served_by() == PRIMARY
    client = token_client(owner)
    recalled = client.post(
        "/api/v1/recall", {"scope": "acme/slides", "query": "blue theme"}, format="json"
    ).json()
    assert recalled["served_by"] == "primary" and "blue theme" in str(recalled["results"])
    packet = client.post(
        "/api/v1/context",
        {"scope": "acme/slides", "query": "blue theme", "budget_tokens": 300},
        format="json",
    ).json()
    assert packet["served_by"] == "primary" and "blue theme" in packet["text"]
