"""Relations by hand through the API: who may link and unlink (each role, another workspace, no token),
what is refused with which code, and that a refused request changes nothing."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from governance.errors import InvalidInput
from governance.models import AuditEvent, Outbox, Relation, Role
from governance.permissions import DENIAL_REASONS, Action
from governance.services.memory import MemoryInput, memory_forget, memory_record, memory_supersede
from governance.services.principal import grant_add
from governance.services.relation import (
    HAND_KIND_INVALID,
    RELATION_CROSS_WORKSPACE,
    RELATION_EXISTS,
    RELATION_FORGOTTEN,
    RELATION_SELF,
    SUPERSEDES_FIXED,
    relation_link,
)
from tests.conftest import token_client


def remember(scope, text, kind="semantic", status="active", **kw):
    return memory_record(
        item=MemoryInput(scope=scope, kind=kind, text=text, source_kind="user", status=status, **kw),
        actor=None,
    )


@pytest.fixture
def pair(project_scope):
    return (
        remember(project_scope, "The launch is on March 3"),
        remember(project_scope, "Marketing plans the launch for March 10"),
    )


def link(client, a, b, kind="contradicts", reason="two dates for one launch"):
    return client.post(
        "/api/v1/relations", {"source": a.pk, "target": b.pk, "kind": kind, "reason": reason}, format="json"
    )


def test_a_curator_links_two_memories_with_a_reason_audited_and_propagated(curator, pair):
    a, b = pair
    response = link(token_client(curator), a, b)
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["source"], body["target"], body["kind"], body["by_hand"], body["actor"]) == (
        a.pk,
        b.pk,
        "contradicts",
        True,
        "cora",
    )
    event = AuditEvent.objects.get(action="relation.link", target_id=str(body["id"]))
    assert event.reason == "two dates for one launch" and event.actor_id == curator.pk
    row = Outbox.objects.filter(topic="memory.status", memory=a).latest("pk")
    assert sorted(row.payload["memory_ids"]) == sorted([a.pk, b.pk])


@pytest.mark.parametrize(
    "who, expected", [("owner", 201), ("curator", 201), ("reviewer", 403), ("agent", 403), ("outsider", 404)]
)
def test_who_may_link_is_the_link_right_of_the_permission_module(request, pair, who, expected):
    a, b = pair
    principal = request.getfixturevalue(who)
    response = link(token_client(principal), a, b, kind="supports", reason="same launch")
    assert response.status_code == expected
    if expected == 403:
        assert response.json()["message"] == DENIAL_REASONS[Action.LINK]
    assert Relation.objects.filter(source=a, target=b).exists() == (expected == 201)


def test_without_a_token_nothing_is_linked(pair):
    a, b = pair
    assert link(APIClient(), a, b).status_code == 401
    assert not Relation.objects.exists()


def test_self_links_duplicates_and_reverse_contradictions_are_refused(curator, pair):
    a, b = pair
    client = token_client(curator)
    self_link = link(client, a, a)
    assert (self_link.status_code, self_link.json()["error"], self_link.json()["message"]) == (
        400,
        "relation_self",
        RELATION_SELF,
    )
    assert link(client, a, b).status_code == 201
    for source, target in ((a, b), (b, a)):  # a contradiction either way is one
        again = link(client, source, target)
        assert (again.status_code, again.json()["error"], again.json()["message"]) == (
            409,
            "relation_exists",
            RELATION_EXISTS,
        )
    assert link(client, b, a, kind="supports", reason="other kind").status_code == 201
    assert Relation.objects.count() == 2


def test_a_forgotten_memory_cannot_be_linked(curator, pair):
    a, b = pair
    memory_forget(memory_id=b.pk, actor=None, reason="user asked", hard=False)
    response = link(token_client(curator), a, b)
    assert (response.status_code, response.json()["error"], response.json()["message"]) == (
        409,
        "relation_forgotten",
        RELATION_FORGOTTEN,
    )
    assert not Relation.objects.exists()


def test_links_stay_inside_one_workspace_and_another_workspaces_id_reads_as_unknown(
    owner,
    pair,
    other_workspace_scope,
):
    a, _ = pair
    foreign = remember(other_workspace_scope, "Globex launches in May")
    client = token_client(owner)
    unseen = link(client, a, foreign)
    unknown = client.post(
        "/api/v1/relations",
        {"source": a.pk, "target": 987654321, "kind": "supports", "reason": "x"},
        format="json",
    )
    assert unseen.status_code == unknown.status_code == 404 and unseen.json() == unknown.json()
    # Someone who reads both workspaces is told the rule.
    grant_add(principal=owner, scope=other_workspace_scope, role=Role.OWNER, actor=None)
    crossing = link(token_client(owner), a, foreign)
    assert (crossing.status_code, crossing.json()["error"], crossing.json()["message"]) == (
        400,
        "relation_cross_workspace",
        RELATION_CROSS_WORKSPACE,
    )
    assert not Relation.objects.exists()


def test_a_link_needs_a_reason_and_a_hand_kind(curator, pair):
    a, b = pair
    client = token_client(curator)
    assert link(client, a, b, reason="").status_code == 400
    assert link(client, a, b, reason="   ").json()["error"] == "invalid_input"
    superseding = link(client, a, b, kind="supersedes")
    assert superseding.status_code == 400
    with pytest.raises(InvalidInput) as refused:
        relation_link(source_id=a.pk, target_id=b.pk, kind="supersedes", reason="r", actor=curator)
    assert refused.value.message == HAND_KIND_INVALID
    assert not Relation.objects.exists()


def test_a_curator_removes_a_link_with_a_reason(curator, pair):
    a, b = pair
    client = token_client(curator)
    relation_id = link(client, a, b).json()["id"]
    no_reason = client.delete(f"/api/v1/relations/{relation_id}", {}, format="json")
    assert no_reason.status_code == 400 and Relation.objects.filter(pk=relation_id).exists()
    removed = client.delete(
        f"/api/v1/relations/{relation_id}", {"reason": "the dates were reconciled"}, format="json"
    )
    assert removed.status_code == 200 and removed.json()["id"] == relation_id
    assert not Relation.objects.filter(pk=relation_id).exists()
    event = AuditEvent.objects.get(action="relation.unlink", target_id=str(relation_id))
    assert event.reason == "the dates were reconciled" and event.data["kind"] == "contradicts"
    again = client.delete(f"/api/v1/relations/{relation_id}", {"reason": "twice"}, format="json")
    assert again.status_code == 404


@pytest.mark.parametrize(
    "who, expected", [("owner", 200), ("reviewer", 403), ("agent", 403), ("outsider", 404)]
)
def test_who_may_remove_a_link(request, curator, pair, who, expected):
    a, b = pair
    relation_id = link(token_client(curator), a, b).json()["id"]
    response = token_client(request.getfixturevalue(who)).delete(
        f"/api/v1/relations/{relation_id}", {"reason": "not a contradiction"}, format="json"
    )
    assert response.status_code == expected
    assert Relation.objects.filter(pk=relation_id).exists() == (expected != 200)
    assert APIClient().delete(
        f"/api/v1/relations/{relation_id}", {"reason": "x"}, format="json"
    ).status_code in (401, 404)


def test_a_supersedes_link_is_history_and_is_not_removed_by_hand(owner, project_scope):
    first = remember(project_scope, "Export as PDF", kind="convention", key="export_format")
    memory_supersede(
        memory_id=first.pk, text="Export as PPTX", reason="changed", source_kind="user", actor=None
    )
    relation = Relation.objects.get(kind="supersedes")
    response = token_client(owner).delete(
        f"/api/v1/relations/{relation.pk}", {"reason": "tidy"}, format="json"
    )
    assert (response.status_code, response.json()["error"], response.json()["message"]) == (
        409,
        "relation_fixed",
        SUPERSEDES_FIXED,
    )
    assert Relation.objects.filter(pk=relation.pk).exists()
