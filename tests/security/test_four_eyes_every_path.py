"""Four-eyes holds on every path that replaces, retires or forgets a long-term commitment in a four-eyes
scope, whatever tier the replacement was given: confirming a revision (also a correction or an override in
a sub-scope), supersede, retire, forget (soft and hard), the dashboard's bulk review and retention. No one
person can end such a commitment; the API and the dashboard say what is pending."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from governance.errors import FourEyesRequired
from governance.models import AuditEvent, Memory, RetentionPolicy, Role, Status
from governance.selectors.review import review_queue
from governance.services.memory import (
    FOUR_EYES_REQUESTED,
    FOUR_EYES_SAME_PERSON,
    FOUR_EYES_SUPERSEDE,
    MemoryInput,
    memory_confirm,
    memory_forget,
    memory_record,
    memory_retire,
    memory_supersede,
)
from governance.services.principal import grant_add, user_ensure
from governance.services.retention import retention_apply
from tests.conftest import token_client


@pytest.fixture
def second_curator(project_scope):
    principal = user_ensure(username="cyd", password="pw-cyd", actor=None)
    grant_add(principal=principal, scope=project_scope, role=Role.CURATOR, actor=None)
    return principal


@pytest.fixture
def second_owner(workspace_scope):
    principal = user_ensure(username="oskar", password="pw-oskar", actor=None)
    grant_add(principal=principal, scope=workspace_scope, role=Role.OWNER, actor=None)
    return principal


def long_rule(scope, key="export_format", text="Export format: PDF, signed off by legal."):
    """A long-term commitment in force (the system writes it, as the demo and imports do)."""
    return memory_record(
        item=MemoryInput(
            scope=scope,
            kind="convention",
            key=key,
            text=text,
            source_kind="user",
            status="active",
            tier="long",
        ),
        actor=None,
    )


def revision(scope, actor, *, tier="mid", key="export_format", text="Export format: PPTX."):
    return memory_record(
        item=MemoryInput(
            scope=scope,
            kind="convention",
            key=key,
            text=text,
            source_kind="user",
            status="proposed",
            tier=tier,
        ),
        actor=actor,
    )


def status_of(memory) -> str:
    return Memory.objects.get(pk=memory.pk).status


def test_a_mid_tier_revision_of_a_long_term_rule_needs_two_reviewers(
    four_eyes_scope, reviewer, second_reviewer
):
    rule = long_rule(four_eyes_scope)
    new = revision(four_eyes_scope, reviewer)

    after_one = memory_confirm(memory_id=new.pk, actor=reviewer, reason="client asked")
    assert (after_one.status, status_of(rule)) == (Status.PROPOSED, Status.ACTIVE)
    item = next(i for i in review_queue(principal=reviewer, scope=four_eyes_scope) if i.memory.pk == new.pk)
    assert (item.approvals, item.approvals_needed) == (["rami"], 2)
    with pytest.raises(FourEyesRequired):
        memory_confirm(memory_id=new.pk, actor=reviewer, reason="again")

    done = memory_confirm(memory_id=new.pk, actor=second_reviewer, reason="agreed")
    assert (done.status, status_of(rule)) == (Status.ACTIVE, Status.SUPERSEDED)
    assert done.confirmed_by_id == second_reviewer.pk


def test_overriding_a_four_eyes_long_term_rule_in_a_sub_scope_needs_two_reviewers(
    workspace_scope,
    project_scope,
    reviewer,
    second_reviewer,
):
    workspace_scope.require_two_reviewers = True
    workspace_scope.save(update_fields=["require_two_reviewers"])
    rule = long_rule(workspace_scope)
    override = revision(project_scope, reviewer, tier="short")
    assert memory_confirm(memory_id=override.pk, actor=reviewer, reason="x").status == Status.PROPOSED
    assert memory_confirm(memory_id=override.pk, actor=second_reviewer, reason="y").status == Status.ACTIVE
    assert status_of(rule) == Status.ACTIVE, (
        "an override in a sub-scope leaves the parent's rule in force there"
    )


def test_a_correction_of_a_long_term_fact_needs_two_reviewers(
    four_eyes_scope, agent, reviewer, second_reviewer
):
    from governance.services.events import event_ingest

    rule = long_rule(four_eyes_scope, text="Export format: PPTX")
    created = event_ingest(
        scope=four_eyes_scope,
        session="s1",
        at=timezone.now(),
        actor=agent,
        turns=[{"role": "user", "content": "Change the export format to PDF instead.", "ref": "u1"}],
    )
    fix = next(m for m in created if m.kind != "episodic")
    assert fix.key == "export_format"
    assert memory_confirm(memory_id=fix.pk, actor=reviewer, reason="x").status != Status.ACTIVE
    assert status_of(rule) == Status.ACTIVE
    assert memory_confirm(memory_id=fix.pk, actor=second_reviewer, reason="y").status == Status.ACTIVE
    assert status_of(rule) == Status.SUPERSEDED


def test_confirming_a_statement_that_contradicts_a_long_term_commitment_needs_two_reviewers(
    four_eyes_scope,
    reviewer,
    second_reviewer,
):
    rule = memory_record(
        item=MemoryInput(
            scope=four_eyes_scope,
            kind="convention",
            source_kind="user",
            text="Always export the client deck as PDF.",
            status="active",
            tier="long",
        ),
        actor=None,
    )
    rival = memory_record(
        item=MemoryInput(
            scope=four_eyes_scope,
            kind="convention",
            source_kind="user",
            text="Never export the client deck as PDF.",
            tier="mid",
        ),
        actor=reviewer,
    )
    assert rival.status == Status.PROPOSED, "conflict detection queued it next to the rule it contradicts"
    assert memory_confirm(memory_id=rival.pk, actor=reviewer, reason="x").status == Status.PROPOSED
    assert memory_confirm(memory_id=rival.pk, actor=second_reviewer, reason="y").status == Status.ACTIVE
    assert status_of(rule) == Status.ACTIVE


def test_supersede_of_a_long_term_commitment_is_refused_with_how_to_do_it(four_eyes_scope, curator):
    rule = long_rule(four_eyes_scope)
    with pytest.raises(FourEyesRequired) as refused:
        memory_supersede(
            memory_id=rule.pk,
            text="Export format: PPTX.",
            reason="changed",
            source_kind="user",
            actor=curator,
        )
    assert refused.value.message == FOUR_EYES_SUPERSEDE
    assert status_of(rule) == Status.ACTIVE


def test_retiring_a_long_term_commitment_takes_two_different_curators(
    four_eyes_scope, curator, second_curator
):
    rule = long_rule(four_eyes_scope)
    first = memory_retire(memory_id=rule.pk, actor=curator, reason="obsolete")
    assert first.status == Status.ACTIVE and status_of(rule) == Status.ACTIVE
    assert AuditEvent.objects.filter(
        action="memory.retire_request", target_id=str(rule.pk), actor=curator
    ).exists()
    with pytest.raises(FourEyesRequired) as same:
        memory_retire(memory_id=rule.pk, actor=curator, reason="obsolete, really")
    assert same.value.message == FOUR_EYES_SAME_PERSON

    done = memory_retire(memory_id=rule.pk, actor=second_curator, reason="agreed")
    assert done.status == Status.RETIRED
    assert "retire" not in done.meta.get("end_requests", {})


@pytest.mark.parametrize("hard", [False, True])
def test_forgetting_a_long_term_commitment_takes_two_different_people(
    four_eyes_scope, owner, second_owner, hard
):
    rule = long_rule(four_eyes_scope)
    first = memory_forget(memory_id=rule.pk, actor=owner, reason="asked to", hard=hard)
    stored = Memory.objects.get(pk=rule.pk)
    assert (first.status, stored.status, stored.text) == (Status.ACTIVE, Status.ACTIVE, rule.text)
    done = memory_forget(memory_id=rule.pk, actor=second_owner, reason="agreed", hard=hard)
    assert done.status == Status.FORGOTTEN
    assert (Memory.objects.get(pk=rule.pk).text == "") is hard


def test_one_curator_still_retires_a_mid_term_memory_alone(four_eyes_scope, curator):
    mid = memory_record(
        item=MemoryInput(
            scope=four_eyes_scope,
            kind="convention",
            text="Use the blue theme.",
            source_kind="user",
            status="active",
            tier="mid",
        ),
        actor=None,
    )
    assert memory_retire(memory_id=mid.pk, actor=curator, reason="old").status == Status.RETIRED


def test_api_retire_and_forget_say_that_a_second_person_is_needed(four_eyes_scope, curator, second_curator):
    rule = long_rule(four_eyes_scope)
    retire = token_client(curator).post(
        f"/api/v1/memories/{rule.pk}/retire", {"reason": "obsolete"}, format="json"
    )
    assert retire.status_code == 202, retire.json()
    body = retire.json()
    assert body["status"] == Status.ACTIVE
    assert body["four_eyes_pending"] == {
        "action": "retire",
        "requested_by": "cora",
        "approvals": 1,
        "needed": 2,
        "message": FOUR_EYES_REQUESTED.format(action="retire"),
    }
    forget = token_client(curator).post(
        f"/api/v1/memories/{rule.pk}/forget", {"reason": "asked", "mode": "soft"}, format="json"
    )
    assert forget.status_code == 202 and forget.json()["four_eyes_pending"]["action"] == "forget"
    again = token_client(curator).post(
        f"/api/v1/memories/{rule.pk}/retire", {"reason": "obsolete"}, format="json"
    )
    assert again.status_code == 409 and again.json()["error"] == "four_eyes_required"
    second = token_client(second_curator).post(
        f"/api/v1/memories/{rule.pk}/retire", {"reason": "agreed"}, format="json"
    )
    assert second.status_code == 200 and second.json()["status"] == Status.RETIRED


def test_retention_never_retires_a_long_term_commitment_of_a_four_eyes_scope(four_eyes_scope, owner):
    rule = long_rule(four_eyes_scope)
    mid = memory_record(
        item=MemoryInput(
            scope=four_eyes_scope,
            kind="convention",
            text="Use the blue theme.",
            source_kind="user",
            status="active",
            tier="mid",
        ),
        actor=None,
    )
    policy = RetentionPolicy.objects.create(scope=four_eyes_scope, retire_unused_days=1, updated_by=owner)
    result = retention_apply(policy=policy, now=timezone.now() + timedelta(days=30))
    assert result["retired"] == 1
    assert (status_of(rule), status_of(mid)) == (Status.ACTIVE, Status.RETIRED)


def _dashboard(principal, password):
    client = Client()
    assert client.login(username=principal.name, password=password)
    return client


def test_dashboard_bulk_confirm_by_one_reviewer_only_records_an_approval(four_eyes_scope, reviewer):
    rule = long_rule(four_eyes_scope)
    new = revision(four_eyes_scope, None)
    response = _dashboard(reviewer, "pw-rami").post(
        "/review/act/", {"decision": "confirm", "memory": [str(new.pk)]}, follow=True
    )
    assert response.status_code == 200
    assert f"a second reviewer is needed for: {new.pk}" in response.content.decode()
    assert (status_of(new), status_of(rule)) == (Status.PROPOSED, Status.ACTIVE)


def test_dashboard_retire_of_a_long_term_commitment_says_a_second_person_must_ask(four_eyes_scope, curator):
    rule = long_rule(four_eyes_scope)
    response = _dashboard(curator, "pw-cora").post(
        f"/memories/{rule.pk}/act/",
        {"action": "retire", "reason": "obsolete", "irreversible": "yes"},
        follow=True,
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "needs a second, different curator or owner" in page
    assert "retire requested by cora" in page, (
        "the memory page shows the pending request to whoever comes next"
    )
    assert status_of(rule) == Status.ACTIVE
