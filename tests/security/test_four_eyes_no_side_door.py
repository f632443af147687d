"""Four-eyes has no side door: in a workspace that asks for two reviewers, no one person puts in force
what would replace, override or contradict a long-term commitment, whatever path they take — a direct
`active` write of another tier in a child scope, an unkeyed contradicting rule, a confirmation after the
system's `contradicts` link was removed or after four-eyes was turned off, an import into a sub-scope,
or moving a sub-scope out from under the rule. Through the public API, with a token of each role."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from governance.models import AuditEvent, Memory, Relation, RelationKind, Role, Scope, Status, Tier
from governance.permissions import agent_write_policy, archived_scope, requires_four_eyes
from governance.services.four_eyes import MOVE_WOULD_OVERRIDE
from governance.services.memory import FOUR_EYES_ACTIVE_WRITE, MemoryInput, memory_record
from governance.services.principal import grant_add, principal_ensure, user_ensure
from governance.services.scope import scope_ensure
from governance.services.scope_admin import scope_archive, scope_settings_set
from tests.conftest import token_client
from tests.governance.portability.helpers import export_records

RULE = "Export format: PDF, signed off by legal."


@pytest.fixture
def rule(workspace_scope, project_scope):
    """acme asks for two reviewers and holds a long-term keyed rule, in force (written by the system)."""
    workspace_scope.require_two_reviewers = True
    workspace_scope.save(update_fields=["require_two_reviewers"])
    return memory_record(
        item=MemoryInput(
            scope=workspace_scope,
            kind="convention",
            key="export_format",
            text=RULE,
            source_kind="user",
            status="active",
            tier=Tier.LONG,
        ),
        actor=None,
    )


@pytest.fixture
def viewer(project_scope):
    principal = user_ensure(username="vera", password="pw-vera", actor=None)
    grant_add(principal=principal, scope=project_scope, role=Role.VIEWER, actor=None)
    return principal


@pytest.fixture
def second_reviewer(project_scope):
    principal = user_ensure(username="sana", password="pw-sana", actor=None)
    grant_add(principal=principal, scope=project_scope, role=Role.REVIEWER, actor=None)
    return principal


def _override(scope="acme/slides", **over):
    body = {
        "scope": scope,
        "kind": "convention",
        "key": "export_format",
        "text": "Export format: PPTX.",
        "source": {"kind": "user"},
        "status": "active",
        "tier": "mid",
    }
    return {**body, **over}


def _needed(pk: int) -> int:
    """How many reviewers the stored proposal needs (fixed when it was proposed)."""
    return Memory.objects.get(pk=pk).meta.get("approvals_needed", 1)


@pytest.mark.parametrize(
    "who, expected",
    [
        ("reviewer", 409),
        ("curator", 409),
        ("owner", 409),
        ("agent", 201),
        ("viewer", 403),
        ("outsider", 404),
    ],
)
def test_an_active_write_of_the_same_key_in_a_child_scope_is_not_in_force_on_one_persons_word(
    rule, request, who, expected
):
    principal = request.getfixturevalue(who)
    response = token_client(principal).post("/api/v1/memories", _override(), format="json")
    assert response.status_code == expected, response.content
    written = Memory.objects.filter(scope__path="acme/slides", key="export_format")
    if expected == 409:
        assert response.json()["error"] == "four_eyes_required"
        assert response.json()["message"] == FOUR_EYES_ACTIVE_WRITE
        assert not written.exists()
    elif expected == 201:  # an agent's write is a proposal, and it will need two reviewers
        assert response.json()["status"] == Status.PROPOSED
        assert _needed(response.json()["id"]) == 2
    else:
        assert not written.exists()
    assert Memory.objects.get(pk=rule.pk).status == Status.ACTIVE
    # The long-term rule is still what the child scope's packet pins.
    ctx = token_client(request.getfixturevalue("owner")).post(
        "/api/v1/context",
        {"scope": "acme/slides", "query": "export format", "budget_tokens": 800},
        format="json",
    )
    assert ctx.status_code == 200, ctx.content
    assert "PPTX" not in json.dumps(ctx.json()["packet"].get("constraints", []))


@pytest.mark.parametrize("tier", ["short", "mid"])
def test_a_proposal_overriding_the_rule_in_a_child_scope_needs_two_reviewers(
    rule, reviewer, second_reviewer, tier
):
    response = token_client(reviewer).post(
        "/api/v1/memories", _override(status="proposed", tier=tier), format="json"
    )
    assert response.status_code == 201 and _needed(response.json()["id"]) == 2
    pk = response.json()["id"]
    first = token_client(reviewer).post(f"/api/v1/memories/{pk}/confirm", {"reason": "asked"}, format="json")
    assert (first.status_code, first.json()["status"]) == (200, Status.PROPOSED)
    done = token_client(second_reviewer).post(
        f"/api/v1/memories/{pk}/confirm", {"reason": "ok"}, format="json"
    )
    assert (done.status_code, done.json()["status"]) == (200, Status.ACTIVE)


@pytest.mark.parametrize("scope", ["acme", "acme/slides"])
def test_an_unkeyed_contradicting_rule_written_active_needs_two_reviewers(
    workspace_scope, project_scope, owner, scope
):
    workspace_scope.require_two_reviewers = True
    workspace_scope.save(update_fields=["require_two_reviewers"])
    memory_record(
        item=MemoryInput(
            scope=workspace_scope,
            kind="convention",
            text="Always export the client deck as PDF.",
            source_kind="user",
            status="active",
            tier=Tier.LONG,
        ),
        actor=None,
    )
    response = token_client(owner).post(
        "/api/v1/memories",
        {
            "scope": scope,
            "kind": "convention",
            "text": "Never export the client deck as PDF.",
            "source": {"kind": "user"},
            "status": "active",
            "tier": "mid",
        },
        format="json",
    )
    assert (response.status_code, response.json()["error"]) == (409, "four_eyes_required")
    assert not Memory.objects.filter(text__startswith="Never export").exists()
    # An unrelated rule is still written in force by one reviewer.
    fine = token_client(owner).post(
        "/api/v1/memories",
        {
            "scope": scope,
            "kind": "convention",
            "text": "Slides use the 16:9 format.",
            "source": {"kind": "user"},
            "status": "active",
            "tier": "mid",
        },
        format="json",
    )
    assert (fine.status_code, fine.json()["status"]) == (201, Status.ACTIVE)


def test_deleting_the_systems_contradicts_link_does_not_lower_the_count(
    four_eyes_scope, reviewer, second_reviewer, curator
):
    memory_record(
        item=MemoryInput(
            scope=four_eyes_scope,
            kind="convention",
            text="Always export the client deck as PDF.",
            source_kind="user",
            status="active",
            tier=Tier.LONG,
        ),
        actor=None,
    )
    proposed = token_client(reviewer).post(
        "/api/v1/memories",
        {
            "scope": "acme/slides",
            "kind": "convention",
            "text": "Never export the client deck as PDF.",
            "source": {"kind": "user"},
            "status": "proposed",
            "tier": "mid",
        },
        format="json",
    )
    assert proposed.status_code == 201 and _needed(proposed.json()["id"]) == 2
    pk = proposed.json()["id"]
    link = Relation.objects.get(source_id=pk, kind=RelationKind.CONTRADICTS)
    unlinked = token_client(curator).delete(
        f"/api/v1/relations/{link.pk}", {"reason": "not related"}, format="json"
    )
    assert unlinked.status_code == 200, unlinked.content
    first = token_client(reviewer).post(f"/api/v1/memories/{pk}/confirm", {"reason": "x"}, format="json")
    assert (first.json()["status"], first.json()["approvals"], first.json()["approvals_needed"]) == (
        Status.PROPOSED,
        1,
        2,
    )
    done = token_client(second_reviewer).post(
        f"/api/v1/memories/{pk}/confirm", {"reason": "y"}, format="json"
    )
    assert done.json()["status"] == Status.ACTIVE


def test_the_count_is_fixed_when_proposed_turning_four_eyes_off_later_does_not_lower_it(
    rule, owner, reviewer, second_reviewer
):
    proposed = token_client(reviewer).post("/api/v1/memories", _override(status="proposed"), format="json")
    pk = proposed.json()["id"]
    scope_settings_set(
        scope=Scope.objects.get(path="acme"), actor=owner, require_two_reviewers=False, reason="trial"
    )
    first = token_client(reviewer).post(f"/api/v1/memories/{pk}/confirm", {"reason": "x"}, format="json")
    assert (first.json()["status"], first.json()["approvals_needed"]) == (Status.PROPOSED, 2)
    assert (
        token_client(second_reviewer)
        .post(f"/api/v1/memories/{pk}/confirm", {"reason": "y"}, format="json")
        .json()["status"]
        == Status.ACTIVE
    )


def test_an_import_into_a_sub_scope_does_not_put_an_override_in_force(rule, owner, sibling_scope):
    memory_record(
        item=MemoryInput(
            scope=sibling_scope,
            kind="convention",
            key="export_format",
            text="Export format: PPTX.",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    lines = "".join(json.dumps(r) + "\n" for r in export_records("acme/payments")).encode()
    response = token_client(owner).post(
        f"/api/v1/scopes/{Scope.objects.get(path='acme/slides').pk}/import",
        {"file": SimpleUploadedFile("export.jsonl", lines), "name": "imported"},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    imported = Memory.objects.get(scope__path="acme/slides/imported", key="export_format")
    assert imported.status == Status.PROPOSED and imported.confirmed_at is None
    assert imported.meta["approvals_needed"] == 2
    assert Memory.objects.get(pk=rule.pk).status == Status.ACTIVE


def test_moving_a_sub_scope_keeps_the_rules_it_was_under(workspace_scope, owner, agent):
    team = scope_ensure(path="acme/team", actor=None)
    task = scope_ensure(path="acme/team/task", actor=None)
    closed = scope_ensure(path="acme/old", actor=None)
    old_task = scope_ensure(path="acme/old/job", actor=None)
    scope_settings_set(scope=team, actor=owner, require_two_reviewers=True, agent_write="none")
    scope_archive(scope=closed, actor=owner, reason="done")
    scope_ensure(path="acme/elsewhere", actor=None)

    moved = token_client(owner).patch(
        f"/api/v1/scopes/{task.pk}", {"parent": "acme/elsewhere"}, format="json"
    )
    assert moved.status_code == 200, moved.content
    task.refresh_from_db()
    assert task.path == "acme/elsewhere/task"
    assert requires_four_eyes(task) and agent_write_policy(task) == "none"
    assert (
        token_client(owner)
        .patch(f"/api/v1/scopes/{old_task.pk}", {"parent": "acme/elsewhere"}, format="json")
        .status_code
        == 200
    )
    old_task.refresh_from_db()
    assert archived_scope(old_task) is not None
    writes = token_client(owner).post(
        "/api/v1/memories",
        {"scope": old_task.path, "kind": "episodic", "text": "x", "source": {"kind": "user"}},
        format="json",
    )
    assert (writes.status_code, writes.json()["error"]) == (409, "scope_archived")
    kept = AuditEvent.objects.filter(action="scope.move", target_id=str(task.pk)).get().data["kept"]
    assert kept == {"require_two_reviewers": True, "agent_write": "none"}


def test_an_agent_principal_cannot_use_the_child_scope_to_get_around_four_eyes(rule, owner):
    bot = principal_ensure(name="helper-bot", kind="agent", actor=None)
    grant_add(principal=bot, scope=Scope.objects.get(path="acme"), role=Role.AGENT, actor=None)
    response = token_client(bot).post("/api/v1/memories", _override(scope="acme/slides"), format="json")
    assert response.status_code == 201 and response.json()["status"] == Status.PROPOSED


def test_moving_a_scope_with_an_override_under_a_four_eyes_rule_is_refused(
    workspace_scope, project_scope, owner, sibling_scope
):
    workspace_scope.require_two_reviewers = True
    workspace_scope.save(update_fields=["require_two_reviewers"])
    rule = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            text=RULE,
            source_kind="user",
            status="active",
            tier=Tier.LONG,
        ),
        actor=None,
    )
    task = scope_ensure(path="acme/payments/task", actor=None)
    memory_record(
        item=MemoryInput(
            scope=task,
            kind="convention",
            key="export_format",
            text="Export format: PPTX.",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    refused = token_client(owner).patch(f"/api/v1/scopes/{task.pk}", {"parent": "acme/slides"}, format="json")
    assert (refused.status_code, refused.json()["error"]) == (409, "four_eyes_required")
    assert refused.json()["message"] == MOVE_WOULD_OVERRIDE
    task.refresh_from_db()
    assert task.path == "acme/payments/task"
    # A scope without such an override moves.
    other = scope_ensure(path="acme/payments/other", actor=None)
    assert (
        token_client(owner)
        .patch(f"/api/v1/scopes/{other.pk}", {"parent": "acme/slides"}, format="json")
        .status_code
        == 200
    )
    assert Memory.objects.get(pk=rule.pk).status == Status.ACTIVE
