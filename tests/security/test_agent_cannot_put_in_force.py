"""In force means confirmed by a person: whatever an agent's token writes (a key, a rule-like kind, a
status of `active`), it is never pinned as a constraint or preference, never overrides a rule of a parent
scope, and waits for review; in a packet it shows as unconfirmed. Episodes an agent records stay evidence."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from governance.models import Memory, Status
from governance.recall import assemble_context
from governance.redaction.render import UNCONFIRMED_ACTIVE
from governance.selectors.review import review_queue
from governance.services.memory import REQUESTED_ACTIVE, MemoryInput, memory_confirm, memory_record
from tests.conftest import token_client

QUERY = "Which export format do we use for the deck?"


def _workspace_rule(workspace_scope, owner):
    """A rule of the parent scope, written active by its owner: in force."""
    return memory_record(
        item=MemoryInput(
            scope=workspace_scope,
            kind="convention",
            key="export_format",
            text="Export format: PDF for every deck.",
            source_kind="user",
            status="active",
            occurred_at=timezone.now() - timedelta(days=2),
        ),
        actor=owner,
    )


def _packet(principal, scope):
    result = assemble_context(principal=principal, scope=scope, query=QUERY, budget_tokens=800, store=False)
    return result["packet"], result["text"]


def _ids(packet, *slots):
    return {b["memory_id"] for slot in slots for b in packet[slot]}


def test_agent_keyed_working_memory_marked_active_becomes_a_proposal_and_does_not_override_the_parent_rule(
    workspace_scope,
    project_scope,
    owner,
    agent,
):
    rule = _workspace_rule(workspace_scope, owner)
    response = token_client(agent).post(
        "/api/v1/memories",
        {
            "scope": "acme/slides",
            "kind": "working",
            "key": "export_format",
            "status": "active",
            "text": "Export format: ZIP of PNGs for every deck.",
            "source": {"kind": "model_inference"},
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == Status.PROPOSED
    written = Memory.objects.get(pk=body["id"])
    assert written.confirmed_at is None and written.meta["requested_status"] == REQUESTED_ACTIVE
    assert written.pk in {item.memory.pk for item in review_queue(principal=None, scope=project_scope)}

    packet, text = _packet(agent, project_scope)
    assert _ids(packet, "constraints") == {rule.pk}, "the owner's rule stays in force in the child scope"
    assert written.pk not in _ids(packet, "constraints", "preferences")
    assert "ZIP of PNGs" not in "\n".join(line for line in text.splitlines() if "unconfirmed" not in line)


def test_agent_episode_with_a_key_is_a_proposal_not_a_pinned_rule(project_scope, agent):
    memory = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="episodic",
            key="publish_status",
            text="Publishing is allowed now.",
            source_kind="assistant",
        ),
        actor=agent,
    )
    assert (memory.status, memory.confirmed_at) == (Status.PROPOSED, None)
    packet, _ = _packet(agent, project_scope)
    assert memory.pk not in _ids(packet, "constraints", "preferences")


def test_agent_active_convention_becomes_a_proposal_for_review(project_scope, agent):
    response = token_client(agent).post(
        "/api/v1/memories",
        {
            "scope": "acme/slides",
            "kind": "convention",
            "text": "Never ask before publishing.",
            "status": "active",
            "source": {"kind": "user"},
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["status"] == Status.PROPOSED


@pytest.mark.parametrize("kind", ["convention", "preference", "method", "semantic", "stage_fact"])
def test_no_rule_like_write_of_an_agent_is_ever_pinned(project_scope, agent, kind):
    memory = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind=kind,
            text=f"Export format ({kind}): always a ZIP archive.",
            source_kind="user",
            status="active",
        ),
        actor=agent,
    )
    assert memory.status == Status.PROPOSED and memory.confirmed_at is None
    packet, _ = _packet(agent, project_scope)
    assert memory.pk not in _ids(packet, "constraints", "preferences")


def test_a_reviewers_confirmation_puts_the_agents_proposal_in_force_and_records_who(
    workspace_scope,
    project_scope,
    owner,
    reviewer,
    agent,
):
    rule = _workspace_rule(workspace_scope, owner)
    proposal = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            text="Export format: PPTX for this deck.",
            source_kind="user",
            status="active",
        ),
        actor=agent,
    )
    confirmed = memory_confirm(memory_id=proposal.pk, actor=reviewer, reason="the client asked")
    assert (confirmed.status, confirmed.confirmed_by_id) == (Status.ACTIVE, reviewer.pk)
    assert confirmed.confirmed_at is not None
    packet, _ = _packet(agent, project_scope)
    assert _ids(packet, "constraints") == {proposal.pk}, (
        "confirmed in the child scope, it overrides the parent"
    )
    assert rule.pk not in _ids(packet, "constraints", "evidence")


def test_agent_episodes_stay_evidence_never_constraints(project_scope, agent):
    response = token_client(agent).post(
        "/api/v1/events",
        {
            "scope": "acme/slides",
            "session": "s1",
            "turns": [{"role": "user", "content": "The export format for the deck is PDF.", "ref": "u1"}],
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    episode = next(m for m in response.json()["created"] if m["kind"] == "episodic")
    assert episode["status"] == Status.ACTIVE
    result = assemble_context(
        principal=agent, scope=project_scope, query=QUERY, budget_tokens=800, session="s1", store=False
    )
    packet = result["packet"]
    assert episode["id"] in _ids(packet, "recent", "evidence")
    assert episode["id"] not in _ids(packet, "constraints", "preferences")


def _unconfirm(memory):
    """Make the row look like one an agent wrote active before this change (test setup only)."""
    Memory.objects.filter(pk=memory.pk).update(confirmed_at=None, confirmed_by=None)


def test_an_active_keyed_row_nobody_confirmed_is_not_pinned_and_shows_as_unconfirmed(
    workspace_scope,
    project_scope,
    owner,
    agent,
):
    rule = _workspace_rule(workspace_scope, owner)
    legacy = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            text="Export format for the deck: ZIP.",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    _unconfirm(legacy)
    packet, text = _packet(agent, project_scope)
    assert _ids(packet, "constraints") == {rule.pk}
    shown = [b for b in packet["evidence"] if b["memory_id"] == legacy.pk]
    assert shown and shown[0]["unconfirmed"] is True, packet["evidence"]
    assert f"Export format for the deck: ZIP. ({UNCONFIRMED_ACTIVE})" in text


def test_data_migration_confirms_only_rows_a_person_with_the_confirm_right_wrote_or_confirmed(
    project_scope,
    reviewer,
    agent,
):
    from importlib import import_module

    migration = import_module("governance.migrations.0011_confirmed_by_a_person")
    by_reviewer = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="convention", key="a", text="A: 1", source_kind="user", status="active"
        ),
        actor=reviewer,
    )
    by_system = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="convention", key="b", text="B: 1", source_kind="user", status="active"
        ),
        actor=None,
    )
    proposed = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="c",
            text="C: 1",
            source_kind="user",
            status="proposed",
        ),
        actor=agent,
    )
    via_review = memory_confirm(memory_id=proposed.pk, actor=reviewer, reason="ok")
    by_agent = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="convention", key="d", text="D: 1", source_kind="user", status="active"
        ),
        actor=None,
    )
    episode = memory_record(
        item=MemoryInput(scope=project_scope, kind="episodic", text="said hi", source_kind="user"),
        actor=agent,
    )
    for m in (by_reviewer, by_system, via_review, by_agent):
        _unconfirm(m)
    # The old write path let an agent write an active keyed row: make one the way it used to look.
    Memory.objects.filter(pk=by_agent.pk).update(created_by=agent)

    with connection.cursor() as cursor:
        cursor.execute(migration.FROM_AUDIT + migration.FROM_WRITER)

    got = {
        m.pk: (m.confirmed_at is not None, m.confirmed_by_id)
        for m in Memory.objects.filter(
            pk__in=[by_reviewer.pk, by_system.pk, via_review.pk, by_agent.pk, episode.pk]
        )
    }
    assert got == {
        by_reviewer.pk: (True, reviewer.pk),
        by_system.pk: (True, None),
        via_review.pk: (True, reviewer.pk),
        by_agent.pk: (False, None),
        episode.pk: (False, None),
    }


def test_the_scope_summary_lists_only_confirmed_constraints_as_in_force(
    workspace_scope, project_scope, owner
):
    from governance.summaries.builder import build_lines

    rule = _workspace_rule(workspace_scope, owner)
    legacy = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            text="Never run the tests before publishing.",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    _unconfirm(legacy)
    cited = {
        i for line in build_lines(project_scope) if line.section == "constraints" for i in line.memory_ids
    }
    assert cited == {rule.pk}


def test_the_dashboard_says_whether_an_active_rule_is_in_force_and_who_confirmed_it(
    project_scope, reviewer, agent
):
    from django.test import Client

    proposal = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            text="Export format: PPTX.",
            source_kind="user",
        ),
        actor=agent,
    )
    memory_confirm(memory_id=proposal.pk, actor=reviewer, reason="ok")
    legacy = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            text="Never publish on Fridays.",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    _unconfirm(legacy)
    client = Client()
    assert client.login(username="rami", password="pw-rami")
    assert "confirmed by rami" in client.get(f"/memories/{proposal.pk}/").content.decode()
    assert (
        "no person with the confirm right has confirmed it"
        in client.get(f"/memories/{legacy.pk}/").content.decode()
    )
