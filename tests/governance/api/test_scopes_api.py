"""POST /api/v1/scopes: an agent opens the task scope it works in; the rule is the permissions module's."""

from __future__ import annotations

import pytest
from django.test import override_settings

from governance.models import AuditEvent, Role, Scope
from governance.permissions import SCOPE_CREATE_DENIED
from governance.services.principal import grant_add, principal_ensure
from governance.services.scope import INVALID_SCOPE_NAME
from tests.conftest import token_client


def test_agent_opens_a_task_scope_under_its_project_and_it_is_audited(agent_client, agent):
    response = agent_client.post(
        "/api/v1/scopes", {"parent": "acme/slides", "name": "export-q3"}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (
        body["path"] == "acme/slides/export-q3"
        and body["parent"] == "acme/slides"
        and body["created"] is True
    )
    scope = Scope.objects.get(path="acme/slides/export-q3")
    assert scope.tree.endswith(f".{scope.pk}") and scope.workspace.slug == "acme"
    event = AuditEvent.objects.get(action="scope.create", target_id=str(scope.pk))
    assert event.actor_id == agent.pk


def test_opening_an_existing_scope_again_returns_it_with_200_and_no_second_audit(agent_client):
    first = agent_client.post("/api/v1/scopes", {"parent": "acme/slides", "name": "t1"}, format="json")
    again = agent_client.post("/api/v1/scopes", {"parent": "acme/slides", "name": "t1"}, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"] and again.json()["created"] is False
    assert AuditEvent.objects.filter(action="scope.create", scope_path="acme/slides/t1").count() <= 1


def test_agent_can_write_and_ask_context_in_the_scope_it_opened(agent_client):
    agent_client.post("/api/v1/scopes", {"parent": "acme/slides", "name": "deck-42"}, format="json")
    wrote = agent_client.post(
        "/api/v1/memories",
        {
            "scope": "acme/slides/deck-42",
            "kind": "semantic",
            "text": "Deck 42 has twelve slides",
            "source": {"kind": "user"},
        },
        format="json",
    )
    assert wrote.status_code == 201 and wrote.json()["status"] == "candidate"


@pytest.mark.parametrize("name", ["Bad Name", "", "a/b", "-dash", "x" * 64, "ÄÖ"])
def test_bad_scope_names_are_400_with_the_name_field(agent_client, name):
    response = agent_client.post("/api/v1/scopes", {"parent": "acme/slides", "name": name}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_input"
    assert body["message"] == INVALID_SCOPE_NAME or "name" in body.get("fields", {})


def test_parent_in_another_workspace_is_404_and_nothing_is_created(agent_client, other_workspace_scope):
    response = agent_client.post("/api/v1/scopes", {"parent": "globex/slides", "name": "t"}, format="json")
    assert response.status_code == 404 and response.json()["error"] == "not_found"
    assert not Scope.objects.filter(path="globex/slides/t").exists()


def test_missing_parent_is_404_and_writing_to_a_missing_scope_stays_404(agent_client):
    assert (
        agent_client.post("/api/v1/scopes", {"parent": "acme/nope", "name": "t"}, format="json").status_code
        == 404
    )
    wrote = agent_client.post(
        "/api/v1/memories",
        {"scope": "acme/slides/never-opened", "kind": "semantic", "text": "x", "source": {"kind": "user"}},
        format="json",
    )
    assert wrote.status_code == 404
    assert not Scope.objects.filter(path="acme/slides/never-opened").exists()


def test_viewer_may_not_open_a_scope_and_is_told_which_roles_may(project_scope):
    viewer = principal_ensure(name="vera", kind="user", actor=None)
    grant_add(principal=viewer, scope=project_scope, role=Role.VIEWER, actor=None)
    response = token_client(viewer).post(
        "/api/v1/scopes", {"parent": "acme/slides", "name": "t"}, format="json"
    )
    assert response.status_code == 403
    assert response.json()["message"] == SCOPE_CREATE_DENIED.format(roles="agent, reviewer, curator, owner")


@override_settings(SCOPE_CREATE_ROLE="reviewer")
def test_the_setting_raises_the_lowest_role_that_may_open_scopes(agent_client, reviewer):
    assert (
        agent_client.post("/api/v1/scopes", {"parent": "acme/slides", "name": "t"}, format="json").status_code
        == 403
    )
    assert (
        token_client(reviewer)
        .post("/api/v1/scopes", {"parent": "acme/slides", "name": "t"}, format="json")
        .status_code
        == 201
    )


def test_scope_list_shows_only_readable_scopes(agent_client, sibling_scope, other_workspace_scope):
    agent_client.post("/api/v1/scopes", {"parent": "acme/slides", "name": "t2"}, format="json")
    paths = [s["path"] for s in agent_client.get("/api/v1/scopes").json()]
    assert paths == ["acme/slides", "acme/slides/t2"]
    assert [s["path"] for s in agent_client.get("/api/v1/scopes?under=acme/slides/t2").json()] == [
        "acme/slides/t2"
    ]
