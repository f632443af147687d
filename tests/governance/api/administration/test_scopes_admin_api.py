"""PATCH /api/v1/scopes/{id}: rename, move, archive and settings, each audited with old and new value;
the agent write policy and the child-scope role enforced by the permission package, via the API."""

from __future__ import annotations

from governance.errors import ScopeArchived
from governance.models import AuditEvent, Memory, Role, Scope
from governance.permissions import (
    AGENT_WRITE_EPISODES,
    AGENT_WRITE_NONE,
    FOUR_EYES_OFF_REASON,
    MOVE_ACROSS_WORKSPACES,
    MOVE_INTO_ITSELF,
    SCOPE_CREATE_DENIED,
)
from governance.selectors.dashboard import scope_paths
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add
from governance.services.scope import scope_ensure
from tests.conftest import token_client


def _fact(scope, text="Export decks as PDF"):
    return memory_record(
        item=MemoryInput(scope=scope, kind="semantic", text=text, source_kind="user", status="active"),
        actor=None,
    )


def _write(client, path, kind="semantic", text="The deck uses Inter"):
    return client.post(
        "/api/v1/memories",
        {"scope": path, "kind": kind, "text": text, "source": {"kind": "user"}},
        format="json",
    )


def test_renaming_a_scope_rewrites_its_subtree_and_keeps_memories_and_grants(owner, reviewer, project_scope):
    task = scope_ensure(path="acme/slides/export", actor=None)
    fact = _fact(task)
    response = token_client(owner).patch(f"/api/v1/scopes/{project_scope.pk}", {"name": "decks"})
    assert response.status_code == 200, response.content
    assert response.json()["path"] == "acme/decks"
    task.refresh_from_db()
    assert task.path == "acme/decks/export" and task.tree == f"{project_scope.tree}.{task.pk}"
    assert Memory.objects.get(pk=fact.pk).scope_id == task.pk
    assert token_client(reviewer).get(f"/api/v1/memories/{fact.pk}").json()["scope"] == "acme/decks/export"
    event = AuditEvent.objects.get(action="scope.rename")
    assert (event.data, event.actor_id) == ({"old": "acme/slides", "new": "acme/decks"}, owner.pk)


def test_moving_a_scope_rewrites_paths_and_trees_and_reads_follow(
    owner, reviewer, project_scope, sibling_scope
):
    task = scope_ensure(path="acme/slides/export", actor=None)
    fact = _fact(task)
    parent_fact = _fact(sibling_scope, "Payments use EUR")
    response = token_client(owner).patch(f"/api/v1/scopes/{task.pk}", {"parent": "acme/payments"})
    assert response.status_code == 200, response.content
    task.refresh_from_db()
    assert task.path == "acme/payments/export" and task.parent_id == sibling_scope.pk
    assert task.tree == f"{sibling_scope.tree}.{task.pk}"
    assert list(Scope.objects.ancestors_of(task).order_by("tree").values_list("path", flat=True)) == [
        "acme",
        "acme/payments",
        "acme/payments/export",
    ]
    # A read in the moved scope now sees its new ancestors' memories; the reviewer's grant on acme/slides
    # no longer covers it.
    context = token_client(owner).post(
        "/api/v1/recall", {"scope": task.path, "query": "EUR payments"}, format="json"
    )
    assert context.status_code == 200 and parent_fact.pk in [
        h["memory_id"] for h in context.json()["results"]
    ]
    assert token_client(reviewer).get(f"/api/v1/memories/{fact.pk}").status_code == 404
    assert AuditEvent.objects.get(action="scope.move").data["old"]["path"] == "acme/slides/export"


def test_a_scope_cannot_move_under_itself_or_to_another_workspace(
    owner, project_scope, other_workspace_scope
):
    task = scope_ensure(path="acme/slides/export", actor=None)
    into_itself = token_client(owner).patch(f"/api/v1/scopes/{project_scope.pk}", {"parent": task.path})
    assert into_itself.status_code == 403 and into_itself.json()["message"] == MOVE_INTO_ITSELF
    grant_add(principal=owner, scope=other_workspace_scope, role=Role.OWNER, actor=None)
    across = token_client(owner).patch(f"/api/v1/scopes/{task.pk}", {"parent": other_workspace_scope.path})
    assert across.status_code == 403 and across.json()["message"] == MOVE_ACROSS_WORKSPACES
    assert Scope.objects.get(pk=task.pk).path == "acme/slides/export"


def test_a_failed_patch_changes_nothing(owner, project_scope, sibling_scope):
    response = token_client(owner).patch(
        f"/api/v1/scopes/{project_scope.pk}", {"agent_write": "none", "name": "payments"}
    )
    assert response.status_code == 409
    project_scope.refresh_from_db()
    assert (project_scope.agent_write, project_scope.path) == ("propose", "acme/slides")
    assert not AuditEvent.objects.filter(action="scope.settings").exists()


def test_scope_administration_by_each_role(
    owner, reviewer, curator, agent, outsider, anonymous, project_scope
):
    url = f"/api/v1/scopes/{project_scope.pk}"
    for principal in (reviewer, curator, agent):
        assert token_client(principal).patch(url, {"name": "x"}).status_code == 403
    foreign, unknown = (
        token_client(outsider).patch(url, {"name": "x"}),
        token_client(outsider).patch("/api/v1/scopes/987654", {"name": "x"}),
    )
    assert foreign.status_code == unknown.status_code == 404 and foreign.json() == unknown.json()
    assert anonymous.patch(url, {"name": "x"}, format="json").status_code == 401
    assert token_client(reviewer).get(url).json()["agent_write_in_force"] == "propose"
    assert token_client(owner).patch(url, {"name": "x"}).status_code == 200


def test_an_archived_scope_takes_no_writes_but_its_memories_stay_readable(
    owner, reviewer, agent, project_scope
):
    fact = _fact(project_scope)
    archived = token_client(owner).patch(
        f"/api/v1/scopes/{project_scope.pk}", {"archived": True, "reason": "project done"}
    )
    assert archived.status_code == 200 and archived.json()["archived"] is True
    refused = _write(token_client(agent), "acme/slides")
    assert refused.status_code == 409 and refused.json() == ScopeArchived().as_dict()
    event = token_client(agent).post(
        "/api/v1/events",
        {"scope": "acme/slides", "session": "s", "turns": [{"role": "user", "content": "hi"}]},
        format="json",
    )
    assert event.status_code == 409
    child = token_client(agent).post("/api/v1/scopes", {"parent": "acme/slides", "name": "t2"}, format="json")
    assert child.status_code == 409
    assert token_client(reviewer).get(f"/api/v1/memories/{fact.pk}").status_code == 200
    assert "acme/slides" not in scope_paths(owner)
    assert AuditEvent.objects.get(action="scope.archive").reason == "project done"
    restored = token_client(owner).patch(f"/api/v1/scopes/{project_scope.pk}", {"archived": False})
    assert (
        restored.json()["archived"] is False and _write(token_client(agent), "acme/slides").status_code == 201
    )


def test_agent_write_policy_episodes_lets_an_agent_record_turns_but_not_propose(owner, agent, project_scope):
    token_client(owner).patch(f"/api/v1/scopes/{project_scope.pk}", {"agent_write": "episodes"})
    refused = _write(token_client(agent), "acme/slides")
    assert refused.status_code == 403 and refused.json()["message"] == AGENT_WRITE_EPISODES
    event = token_client(agent).post(
        "/api/v1/events",
        {
            "scope": "acme/slides",
            "session": "s1",
            "turns": [{"role": "user", "content": "Please always export the deck as PDF"}],
        },
        format="json",
    )
    assert event.status_code == 201, event.content
    kinds = set(Memory.objects.filter(scope=project_scope).values_list("kind", flat=True))
    assert kinds == {"episodic"}
    # A person still writes there.
    assert _write(token_client(owner), "acme/slides").status_code == 201


def test_agent_write_policy_none_set_above_applies_below(owner, agent, workspace_scope, project_scope):
    token_client(owner).patch(f"/api/v1/scopes/{workspace_scope.pk}", {"agent_write": "none"})
    refused = _write(token_client(agent), "acme/slides", kind="episodic")
    assert refused.status_code == 403 and refused.json()["message"] == AGENT_WRITE_NONE
    event = token_client(agent).post(
        "/api/v1/events",
        {"scope": "acme/slides", "session": "s", "turns": [{"role": "user", "content": "hi"}]},
        format="json",
    )
    assert event.status_code == 403 and not Memory.objects.filter(scope=project_scope).exists()
    # A scope below cannot relax it.
    token_client(owner).patch(f"/api/v1/scopes/{project_scope.pk}", {"agent_write": "propose"})
    assert _write(token_client(agent), "acme/slides").status_code == 403
    event = AuditEvent.objects.filter(action="scope.settings").first()
    assert event.data == {"agent_write": {"old": "propose", "new": "none"}} and event.actor_id == owner.pk


def test_child_scope_role_keeps_agents_from_opening_scopes(owner, agent, reviewer, project_scope):
    token_client(owner).patch(f"/api/v1/scopes/{project_scope.pk}", {"child_scope_role": "reviewer"})
    refused = token_client(agent).post(
        "/api/v1/scopes", {"parent": "acme/slides", "name": "t9"}, format="json"
    )
    assert refused.status_code == 403
    assert refused.json()["message"] == SCOPE_CREATE_DENIED.format(roles="reviewer, curator, owner")
    opened = token_client(reviewer).post(
        "/api/v1/scopes", {"parent": "acme/slides", "name": "t9"}, format="json"
    )
    assert opened.status_code == 201


def test_turning_four_eyes_off_needs_an_owner_and_a_reason(owner, reviewer, four_eyes_scope):
    url = f"/api/v1/scopes/{four_eyes_scope.pk}"
    assert (
        token_client(reviewer).patch(url, {"require_two_reviewers": False, "reason": "x"}).status_code == 403
    )
    silent = token_client(owner).patch(url, {"require_two_reviewers": False})
    assert silent.status_code == 400 and silent.json()["message"] == FOUR_EYES_OFF_REASON
    done = token_client(owner).patch(
        url, {"require_two_reviewers": False, "reason": "team of one this month"}
    )
    assert done.status_code == 200 and done.json()["four_eyes"] is False
    event = AuditEvent.objects.get(action="scope.settings")
    assert event.data == {"require_two_reviewers": {"old": True, "new": False}}
    assert (event.reason, event.actor_id) == ("team of one this month", owner.pk)
    assert token_client(owner).patch(url, {"require_two_reviewers": True}).json()["four_eyes"] is True


def test_the_scope_picker_hides_an_archived_scope_and_its_subtree(owner, project_scope, sibling_scope):
    scope_ensure(path="acme/slides/export", actor=None)
    token_client(owner).patch(f"/api/v1/scopes/{project_scope.pk}", {"archived": True})
    assert scope_paths(owner) == ["acme", "acme/payments"]


def test_a_token_bound_to_a_moved_scope_keeps_acting_on_the_same_subtree(
    owner, agent, project_scope, sibling_scope
):
    from rest_framework.test import APIClient

    from governance.services.principal import token_issue

    client = APIClient()
    client.credentials(
        HTTP_AUTHORIZATION="Token "
        + token_issue(principal=agent, scope=project_scope, max_role=Role.AGENT, actor=owner)
    )
    task = scope_ensure(path="acme/slides/export", actor=None)
    token_client(owner).patch(f"/api/v1/scopes/{task.pk}", {"parent": "acme/payments"})
    token_client(owner).patch(f"/api/v1/scopes/{project_scope.pk}", {"name": "decks"})
    assert _write(client, "acme/decks").status_code == 201
    # The moved task left the token's subtree; so did nothing else.
    assert _write(client, "acme/payments/export").status_code == 404


def test_renaming_drops_cached_recalls_and_marks_the_subtrees_summaries_stale(
    owner, project_scope, celery_worker
):
    from governance.models import Outbox, Summary
    from governance.services.summary import summary_build
    from tests.conftest import wait_for

    _fact(project_scope)
    summary_build(scope=project_scope, actor=None, reason="test")
    assert "acme/slides" in Summary.objects.get(scope=project_scope).text
    token_client(owner).patch(f"/api/v1/scopes/{project_scope.pk}", {"name": "decks"})
    row = Outbox.objects.get(topic="scope.changed")
    assert row.payload == {"scope_id": project_scope.pk}
    assert sorted(row.deliveries.values_list("store", flat=True)) == ["cache", "summaries"]
    wait_for(lambda: Summary.objects.get(scope=project_scope).stale)
    wait_for(lambda: not row.deliveries.exclude(state="done").exists())
