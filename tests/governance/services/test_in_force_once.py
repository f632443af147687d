"""A statement is in force once in its scope: a second active row saying nothing the first does not say
would outlive the first one's forget (the forgotten rule comes back from its copy) and fill the packet
twice. Every way to a second copy is closed: a person writing it `active` again (the rule in force is
reinforced), and confirming a proposal or candidate that repeats it (refused, naming the rule in force)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from governance.errors import InvalidTransition
from governance.models import Memory, Status
from governance.services.memory import MemoryInput, memory_confirm, memory_forget, memory_record
from tests.conftest import token_client

RULE = "Always copy the finance team on supplier invoices."


def rule(scope, text=RULE, **kw) -> MemoryInput:
    return MemoryInput(scope=scope, kind="convention", text=text, source_kind="user", **kw)


def in_force(scope, text=RULE) -> list[int]:
    return list(
        Memory.objects.filter(scope=scope, status=Status.ACTIVE, text=text).values_list("pk", flat=True)
    )


@pytest.mark.django_db
def test_confirming_an_agents_repeat_of_a_rule_in_force_is_refused_and_names_the_rule(
    project_scope, agent, curator
):
    kept = memory_record(item=rule(project_scope, status="active"), actor=curator)
    repeat = memory_record(item=rule(project_scope), actor=agent)
    assert repeat.status == Status.PROPOSED and repeat.pk != kept.pk
    with pytest.raises(InvalidTransition) as refused:
        memory_confirm(memory_id=repeat.pk, actor=curator)
    assert f"#{kept.pk}" in str(refused.value)
    repeat.refresh_from_db()
    assert repeat.status == Status.PROPOSED
    assert in_force(project_scope) == [kept.pk]


@pytest.mark.django_db
def test_a_waiting_statement_a_person_has_since_written_in_force_cannot_be_confirmed_beside_it(
    project_scope, agent, curator
):
    waiting = memory_record(item=rule(project_scope), actor=agent)
    kept = memory_record(item=rule(project_scope, status="active"), actor=curator)
    assert kept.pk != waiting.pk and kept.status == Status.ACTIVE
    waiting.refresh_from_db()
    # The review queue says where it stands: the same statement is in force.
    assert (waiting.meta.get("near_duplicate_of") or {}).get("memory_id") == kept.pk
    with pytest.raises(InvalidTransition):
        memory_confirm(memory_id=waiting.pk, actor=curator)
    # Forgetting the rule leaves no copy in force.
    memory_forget(memory_id=kept.pk, actor=curator, reason="wrong")
    assert in_force(project_scope) == []


@pytest.mark.django_db
def test_a_person_writing_a_rule_in_force_again_reinforces_it(project_scope, curator):
    kept = memory_record(item=rule(project_scope, status="active"), actor=curator)
    again = memory_record(item=rule(project_scope, text=RULE.lower(), status="active"), actor=curator)
    assert again.pk == kept.pk
    assert again.near_duplicate["decision"] == "reinforced"
    assert in_force(project_scope) == [kept.pk]


@pytest.mark.django_db
def test_a_waiting_statement_that_says_more_than_the_rule_in_force_can_still_be_confirmed(
    project_scope, agent, curator
):
    waiting = memory_record(
        item=rule(project_scope, text=RULE[:-1] + " unless the CFO objects."), actor=agent
    )
    kept = memory_record(item=rule(project_scope, status="active"), actor=curator)
    confirmed = memory_confirm(memory_id=waiting.pk, actor=curator)
    assert confirmed.status == Status.ACTIVE and kept.pk != confirmed.pk


@pytest.mark.django_db
def test_the_api_and_the_review_page_refuse_the_second_copy_and_say_which_rule_is_in_force(
    client, project_scope, agent, curator
):
    kept = memory_record(item=rule(project_scope, status="active"), actor=curator)
    repeat = memory_record(item=rule(project_scope), actor=agent)
    answer = token_client(curator).post(f"/api/v1/memories/{repeat.pk}/confirm", {}, format="json")
    assert answer.status_code == 409
    assert answer.json()["error"] == "invalid_transition" and answer.json()["in_force"] == kept.pk
    # The queue lists it with the rule it repeats, in force.
    [item] = token_client(curator).get("/api/v1/review").json()
    assert item["memory"]["id"] == repeat.pk and item["near_duplicate"]["id"] == kept.pk
    client.force_login(curator.user)
    queue = client.get(reverse("dashboard:review")).content.decode()
    assert "Already in force: confirming it is refused" in queue
    page = client.post(reverse("dashboard:review-decide", args=[repeat.pk]), {"decision": "confirm"})
    assert page.status_code == 409 and f"#{kept.pk}" in page.content.decode()
    repeat.refresh_from_db()
    assert repeat.status == Status.PROPOSED and in_force(project_scope) == [kept.pk]


@pytest.mark.django_db
def test_only_a_reviewer_of_the_scope_learns_which_rule_is_in_force(project_scope, agent, curator, outsider):
    kept = memory_record(item=rule(project_scope, status="active"), actor=curator)
    repeat = memory_record(item=rule(project_scope), actor=agent)
    url = f"/api/v1/memories/{repeat.pk}/confirm"
    # The agent may not confirm: refused for that, before anything is looked up; no id in the answer.
    as_agent = token_client(agent).post(url, {}, format="json")
    assert as_agent.status_code == 403
    assert as_agent.json()["error"] == "permission_denied" and "in_force" not in as_agent.json()
    # Another workspace's owner: the same 404 as an unknown id.
    assert token_client(outsider).post(url, {}, format="json").status_code == 404
    assert APIClient().post(url, {}, format="json").status_code == 401
    repeat.refresh_from_db()
    assert repeat.status == Status.PROPOSED and in_force(project_scope) == [kept.pk]


@pytest.mark.django_db
def test_a_statement_copying_a_keyed_fact_in_force_is_refused_too(project_scope, curator):
    fact = MemoryInput(
        scope=project_scope,
        kind="semantic",
        key="export_format",
        text="Exports go out as PDF files.",
        source_kind="user",
    )
    kept = memory_record(item=replace(fact, status="active"), actor=curator)
    # A write the service derives on purpose (here a re-proposal) is not checked at write: it can copy.
    copy = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="semantic",
            text="Exports go out as PDF files.",
            source_kind="user",
            meta={"reproposed": {"from": kept.pk}},
        ),
        actor=curator,
    )
    assert copy.pk != kept.pk and copy.key is None and copy.status == Status.CANDIDATE
    with pytest.raises(InvalidTransition) as refused:
        memory_confirm(memory_id=copy.pk, actor=curator)
    assert refused.value.extra["in_force"] == kept.pk


@pytest.mark.django_db
def test_marking_the_waiting_statement_tells_no_subscriber_it_waits_again(
    project_scope, agent, curator, owner
):
    from governance.models import Outbox, WebhookSubscription

    WebhookSubscription.objects.create(
        workspace=project_scope.workspace,
        url="http://example.invalid/hook",
        event_types=["review.waiting"],
        created_by=owner,
        secret_encrypted="-",  # nothing is sent here
    )
    waiting = memory_record(item=rule(project_scope, status="proposed"), actor=agent)
    assert waiting.status == Status.PROPOSED
    memory_record(item=rule(project_scope, status="active"), actor=curator)

    def waits(row) -> bool:
        events = (row.payload or {}).get("webhook_events") or []
        return any(e["type"] == "review.waiting" and e["memory_id"] == waiting.pk for e in events)

    assert sum(waits(row) for row in Outbox.objects.all()) == 1  # when it was proposed, not again


@pytest.mark.django_db
def test_an_import_brings_no_second_copy_of_a_statement_in_force_in_its_target(
    project_scope, other_workspace_scope, owner, outsider
):
    """An owner imports an export into a scope that already holds the same statement in force (or a file
    that holds it twice). The copy comes in as a proposal marked `near_duplicate_of` (decision in_force),
    which confirming refuses; a statement that says more comes in force as the file says; nothing else of
    the file is lost (the count says how many came in so)."""
    from governance.services.portability import scope_import
    from tests.governance.portability.helpers import as_lines, export_records

    memory_record(item=rule(project_scope, status="active"), actor=owner)
    more = f"{RULE[:-1]} and the buyer."
    memory_record(item=rule(project_scope, text=more, status="active"), actor=owner)
    records = export_records(project_scope.path)
    held = memory_record(item=rule(other_workspace_scope, status="active"), actor=outsider)
    result = scope_import(lines=as_lines(records), into=other_workspace_scope.path, actor=outsider)
    assert in_force(other_workspace_scope) == [held.pk]
    copy = Memory.objects.get(scope=other_workspace_scope, text=RULE, status=Status.PROPOSED)
    assert copy.meta["near_duplicate_of"]["memory_id"] == held.pk
    assert copy.meta["near_duplicate_of"]["decision"] == "in_force"
    assert result.counts["already_in_force"] == 1
    with pytest.raises(InvalidTransition):
        memory_confirm(memory_id=copy.pk, actor=outsider)
    assert in_force(other_workspace_scope, more) != []  # says more than what is in force: in force
    # The same file again: its statements are all in force here now, and none comes in force twice.
    scope_import(lines=as_lines(records), into=other_workspace_scope.path, actor=outsider)
    assert in_force(other_workspace_scope) == [held.pk]
    assert len(in_force(other_workspace_scope, more)) == 1
    # A file that holds one statement twice (written before the rule) brings it in force once.
    row = next(r for r in records if r.get("type") == "memory" and r.get("text") == more)
    twice = [*records]
    twice.insert(
        twice.index(row) + 1, {**row, "id": max(r["id"] for r in records if r.get("type") == "memory") + 1}
    )
    end = twice[-1]
    twice[-1] = {**end, "counts": {**end["counts"], "memories": end["counts"]["memories"] + 1}}
    result = scope_import(lines=as_lines(twice), into=f"{other_workspace_scope.path}/fresh", actor=outsider)
    assert len(in_force(result.root, more)) == 1 and result.counts["already_in_force"] == 1
