"""POST /api/v1/memories/{id}/repropose with each role, another workspace, no token, and bad input."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from governance.models import AuditEvent, Memory, Relation, RelationKind, Role, Status
from governance.services.memory import REASON_REQUIRED, MemoryInput, memory_record, memory_reject
from governance.services.principal import grant_add, user_ensure
from tests.conftest import token_client


def rejected(scope):
    memory = memory_record(
        item=MemoryInput(
            scope=scope,
            kind="preference",
            text="The user prefers dark themes",
            source_kind="assistant",
            status="proposed",
        ),
        actor=None,
    )
    return memory_reject(memory_id=memory.pk, actor=None, reason="the user never said that")


def url(memory) -> str:
    return f"/api/v1/memories/{memory.pk}/repropose"


def test_a_reviewer_proposes_a_rejection_again(project_scope, reviewer):
    old = rejected(project_scope)
    response = token_client(reviewer).post(url(old), {"reason": "rejected by mistake"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["status"], body["text"], body["scope"]) == (Status.PROPOSED, old.text, "acme/slides")
    new = Memory.objects.get(pk=body["id"])
    assert Relation.objects.filter(source=new, target=old, kind=RelationKind.DERIVED_FROM).exists()
    assert AuditEvent.objects.filter(action="memory.repropose", target_id=str(new.pk)).count() == 1
    old.refresh_from_db()
    assert old.status == Status.REJECTED


@pytest.mark.parametrize("role", [Role.AGENT, Role.VIEWER])
def test_agents_and_viewers_get_403(role, project_scope):
    principal = user_ensure(username=f"only-{role}", password="pw", actor=None)
    grant_add(principal=principal, scope=project_scope, role=role, actor=None)
    old = rejected(project_scope)
    response = token_client(principal).post(url(old), {"reason": "again"}, format="json")
    assert response.status_code == 403, response.content
    assert not Memory.objects.exclude(pk=old.pk).exists()


def test_another_workspaces_owner_gets_the_unknown_ids_404(project_scope, outsider):
    old = rejected(project_scope)
    client = token_client(outsider)
    theirs = client.post(url(old), {"reason": "again"}, format="json")
    unknown = client.post(f"/api/v1/memories/{old.pk + 10_000}/repropose", {"reason": "again"}, format="json")
    assert theirs.status_code == unknown.status_code == 404
    assert theirs.json() == unknown.json()
    assert not Memory.objects.exclude(pk=old.pk).exists()


def test_no_token_gets_401(project_scope):
    old = rejected(project_scope)
    assert APIClient().post(url(old), {"reason": "again"}, format="json").status_code == 401


def test_a_memory_that_is_not_rejected_gets_409_and_nothing_is_written(project_scope, reviewer):
    memory = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="preference",
            text="Prefers PDF",
            source_kind="assistant",
            status="proposed",
        ),
        actor=None,
    )
    client = token_client(reviewer)  # issuing the token is audited too
    audits = AuditEvent.objects.count()
    response = client.post(url(memory), {"reason": "again"}, format="json")
    assert response.status_code == 409 and response.json()["error"] == "invalid_transition"
    assert (Memory.objects.count(), AuditEvent.objects.count()) == (1, audits)


def test_a_forgotten_rejection_gets_409(project_scope, owner):
    from governance.services.memory import memory_forget

    old = rejected(project_scope)
    memory_forget(memory_id=old.pk, actor=owner, reason="remove it", hard=True)
    response = token_client(owner).post(url(old), {"reason": "bring it back"}, format="json")
    assert response.status_code == 409 and response.json()["error"] == "invalid_transition"
    assert Memory.objects.count() == 1


def test_an_empty_reason_gets_400(project_scope, reviewer):
    old = rejected(project_scope)
    response = token_client(reviewer).post(url(old), {"reason": " "}, format="json")
    assert response.status_code == 400
    assert (response.json()["error"], response.json()["message"]) == ("invalid_input", REASON_REQUIRED)
    assert Memory.objects.count() == 1
