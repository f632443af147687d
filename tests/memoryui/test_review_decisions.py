"""The review queue's per-item decisions (confirm, edit then confirm, reject) with each role, four-eyes,
bad input, and the similar memories endpoint."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from governance.errors import FourEyesRequired
from governance.models import AuditEvent, Memory, Relation, RelationKind, Role, SourceKind, Status
from governance.services.memory import MemoryInput, memory_propose, memory_record
from governance.services.principal import grant_add, user_ensure
from governance.services.review import EDIT_REASON_REQUIRED, EDITED_INTO
from memoryui.views.memories import REASON_REQUIRED
from memoryui.views.review import BAD_ITEM_DECISION
from tests.conftest import token_client
from tests.memoryui.conftest import remember, signed_in

ACTIONS = {
    "confirm": {"decision": "confirm", "reason": "matches what the user said"},
    "reject": {"decision": "reject", "reason": "the user never said that"},
    "edit": {
        "decision": "edit",
        "reason": "tightened the wording",
        "text": "The user prefers dark slide themes",
        "key": "",
        "kind": "preference",
    },
}


def proposal(scope, text="The user prefers dark themes", *, actor=None, reason="", **kw):
    memory = remember(scope, text, kind=kw.pop("kind", "preference"), status="candidate", **kw)
    if memory.status == Status.CANDIDATE:  # a conflict with a fact in force already queued it
        memory_propose(memory_id=memory.pk, actor=actor, reason=reason)
    memory.refresh_from_db()
    return memory


def decide(client, memory, data, json_reply=False):
    headers = {"HTTP_ACCEPT": "application/json"} if json_reply else {}
    return client.post(reverse("dashboard:review-decide", args=[memory.pk]), data, **headers)


def audit_count(memory) -> int:
    return AuditEvent.objects.filter(target_type="memory", target_id=str(memory.pk)).count()


def person(username, scope, role):
    principal = user_ensure(username=username, password=f"pw-{username}", actor=None)
    grant_add(principal=principal, scope=scope, role=role, actor=None)
    return signed_in(principal, f"pw-{username}")


# --- Each action with each role ---------------------------------------------------------------------------


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("who", ["owner", "reviewer", "curator"])
def test_people_with_the_confirm_right_decide_one_item(action, who, request, project_scope):
    client = request.getfixturevalue(f"{who}_client")
    item = proposal(project_scope)
    response = decide(client, item, ACTIONS[action])
    assert response.status_code == 302, response.content[:400]
    item.refresh_from_db()
    if action == "confirm":
        assert item.status == Status.ACTIVE and item.confirmed_by.name == request.getfixturevalue(who).name
    elif action == "reject":
        assert item.status == Status.REJECTED
        assert (
            AuditEvent.objects.get(target_id=str(item.pk), action="memory.reject").reason
            == ACTIONS["reject"]["reason"]
        )
    else:
        assert item.status == Status.REJECTED
        edited = Memory.objects.get(meta__edited_from=item.pk)
        assert (edited.status, edited.text, edited.created_by.name) == (
            Status.ACTIVE,
            ACTIONS["edit"]["text"],
            request.getfixturevalue(who).name,
        )


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("role", [Role.AGENT, Role.VIEWER])
def test_agents_and_viewers_never_decide(action, role, project_scope):
    client = person(f"only-{role}", project_scope, role)
    item = proposal(project_scope)
    before = audit_count(item)
    response = decide(client, item, ACTIONS[action], json_reply=True)
    assert response.status_code == 403 and response.json()["error"] == "permission_denied"
    item.refresh_from_db()
    assert item.status == Status.PROPOSED and audit_count(item) == before
    assert not Memory.objects.filter(meta__edited_from=item.pk).exists()


@pytest.mark.parametrize("action", ACTIONS)
def test_an_agent_token_cannot_confirm_through_the_api_or_the_dashboard(action, agent, project_scope):
    item = proposal(project_scope)
    api = token_client(agent)
    assert api.post(f"/api/v1/memories/{item.pk}/confirm", {"reason": "x"}, format="json").status_code == 403
    # The dashboard takes sessions only: a token is not a sign-in.
    response = api.post(reverse("dashboard:review-decide", args=[item.pk]), ACTIONS[action])
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert Memory.objects.get(pk=item.pk).status == Status.PROPOSED


@pytest.mark.parametrize("action", ACTIONS)
def test_another_workspace_and_no_sign_in_change_nothing(action, outsider_client, project_scope):
    item = proposal(project_scope)
    before = audit_count(item)
    assert decide(outsider_client, item, ACTIONS[action]).status_code == 404
    anonymous = decide(Client(), item, ACTIONS[action])
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    item.refresh_from_db()
    assert item.status == Status.PROPOSED and audit_count(item) == before


def test_a_reviewer_of_a_sibling_scope_cannot_decide(project_scope, sibling_scope):
    client = person("sibby", sibling_scope, Role.REVIEWER)
    item = proposal(project_scope)
    assert decide(client, item, ACTIONS["confirm"]).status_code == 404
    assert Memory.objects.get(pk=item.pk).status == Status.PROPOSED


# --- Bad input -------------------------------------------------------------------------------------------


def test_reject_without_a_reason_is_a_400_and_changes_nothing(reviewer_client, project_scope):
    item = proposal(project_scope)
    before = audit_count(item)
    response = decide(reviewer_client, item, {"decision": "reject", "reason": "  "}, json_reply=True)
    assert response.status_code == 400 and response.json()["message"] == REASON_REQUIRED
    page = decide(reviewer_client, item, {"decision": "reject"})
    assert page.status_code == 400 and REASON_REQUIRED.encode() in page.content
    item.refresh_from_db()
    assert item.status == Status.PROPOSED and audit_count(item) == before


@pytest.mark.parametrize(
    "data, message",
    [
        (
            {"decision": "edit", "text": "Dark themes", "kind": "preference", "reason": ""},
            EDIT_REASON_REQUIRED,
        ),
        (
            {"decision": "edit", "text": "   ", "kind": "preference", "reason": "fix"},
            "A memory needs a non-empty text.",
        ),
        (
            {"decision": "edit", "text": "Dark themes", "kind": "gossip", "reason": "fix"},
            "kind must be one of",
        ),
        (
            {
                "decision": "edit",
                "text": "Dark themes",
                "kind": "preference",
                "key": "k" * 201,
                "reason": "fix",
            },
            "key is",
        ),
        ({"decision": "approve"}, BAD_ITEM_DECISION),
    ],
)
def test_a_bad_edit_or_decision_is_a_400_and_changes_nothing(data, message, reviewer_client, project_scope):
    item = proposal(project_scope)
    count, before = Memory.objects.count(), audit_count(item)
    response = decide(reviewer_client, item, data, json_reply=True)
    assert response.status_code == 400 and message in response.json()["message"]
    item.refresh_from_db()
    assert item.status == Status.PROPOSED and Memory.objects.count() == count and audit_count(item) == before


def test_deciding_an_item_twice_is_a_409_not_a_500(reviewer_client, project_scope):
    item = proposal(project_scope)
    assert decide(reviewer_client, item, ACTIONS["reject"]).status_code == 302
    again = decide(reviewer_client, item, ACTIONS["confirm"], json_reply=True)
    assert again.status_code == 409 and again.json()["error"] == "invalid_transition"
    assert decide(reviewer_client, item, ACTIONS["edit"], json_reply=True).status_code == 409


def test_an_unknown_memory_is_a_404(reviewer_client, project_scope):
    response = reviewer_client.post(
        reverse("dashboard:review-decide", args=[999_999]), ACTIONS["confirm"], HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 404


# --- Edit then confirm -----------------------------------------------------------------------------------


def test_edit_then_confirm_keeps_provenance_and_audits_both_steps(
    reviewer, reviewer_client, agent, project_scope
):
    episode = remember(project_scope, "User: I like dark themes", kind="episodic", source_ref="t-7")
    item = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="preference",
            text="User likes dark",
            source_kind="user",
            source_ref="t-7",
            status="proposed",
        ),
        actor=agent,
    )
    Relation.objects.create(source=item, target=episode, kind=RelationKind.DERIVED_FROM, reason="extracted")
    response = decide(reviewer_client, item, ACTIONS["edit"], json_reply=True)
    assert response.status_code == 200
    body = response.json()
    edited = Memory.objects.get(pk=body["result_id"])
    assert body["status"] == Status.ACTIVE and edited.pk != item.pk
    assert (edited.source_kind, edited.source_ref, edited.confirmed_by_id, edited.meta["proposed_by"]) == (
        SourceKind.REVIEWER,
        "t-7",
        reviewer.pk,
        agent.pk,
    )
    assert set(
        Relation.objects.filter(source=edited, kind=RelationKind.DERIVED_FROM).values_list(
            "target_id", flat=True
        )
    ) == {item.pk, episode.pk}
    rejected = AuditEvent.objects.get(target_id=str(item.pk), action="memory.reject")
    assert rejected.reason == EDITED_INTO.format(new_id=edited.pk, reason=ACTIONS["edit"]["reason"])
    assert (
        AuditEvent.objects.get(target_id=str(edited.pk), action="memory.confirm").reason
        == ACTIONS["edit"]["reason"]
    )


def test_edit_that_takes_a_key_supersedes_the_fact_in_force(reviewer_client, project_scope, history):
    item = proposal(project_scope, "The user wants PDF exports now", kind="convention")
    response = decide(
        reviewer_client,
        item,
        {
            "decision": "edit",
            "text": "Export slides as PDF",
            "key": "export_format",
            "kind": "convention",
            "reason": "it corrects the export format",
        },
        json_reply=True,
    )
    assert response.status_code == 200
    edited = Memory.objects.get(pk=response.json()["result_id"])
    assert (edited.key, edited.revision, edited.status) == ("export_format", 3, Status.ACTIVE)
    assert Memory.objects.get(pk=history["second"].pk).status == Status.SUPERSEDED


def test_an_unchanged_edit_is_a_plain_confirm(reviewer_client, project_scope):
    item = proposal(project_scope)
    response = decide(
        reviewer_client,
        item,
        {"decision": "edit", "text": item.text, "key": "", "kind": item.kind, "reason": "fine as it is"},
        json_reply=True,
    )
    assert response.json()["result_id"] == item.pk and Memory.objects.get(pk=item.pk).status == Status.ACTIVE


# --- Four-eyes -------------------------------------------------------------------------------------------


def test_four_eyes_the_proposer_cannot_confirm_their_own_proposal_alone(
    four_eyes_scope, reviewer, reviewer_client, second_reviewer
):
    own = memory_record(
        item=MemoryInput(
            scope=four_eyes_scope,
            kind="convention",
            text="Never send drafts on Friday",
            source_kind="user",
            status="proposed",
            tier="long",
        ),
        actor=reviewer,
    )
    first = decide(reviewer_client, own, ACTIONS["confirm"], json_reply=True)
    assert first.status_code == 200 and first.json()["status"] == Status.PROPOSED
    again = decide(reviewer_client, own, ACTIONS["confirm"], json_reply=True)
    assert again.status_code == 409 and again.json()["error"] == FourEyesRequired.code
    assert Memory.objects.get(pk=own.pk).status == Status.PROPOSED
    second = decide(signed_in(second_reviewer, "pw-sana"), own, ACTIONS["confirm"], json_reply=True)
    assert second.json()["status"] == Status.ACTIVE
    assert Memory.objects.get(pk=own.pk).confirmed_by_id == second_reviewer.pk


def test_four_eyes_an_edited_text_needs_a_second_person_who_has_seen_it(
    four_eyes_scope, reviewer, reviewer_client, second_reviewer
):
    item = proposal(four_eyes_scope, "Never email the client on Sundays", tier="long", kind="convention")
    # The second reviewer approved the original text; the edit is another text, so that approval is not carried.
    sana = signed_in(second_reviewer, "pw-sana")
    assert decide(sana, item, ACTIONS["confirm"], json_reply=True).json()["status"] == Status.PROPOSED
    response = decide(
        reviewer_client,
        item,
        {
            "decision": "edit",
            "text": "Never email the client at weekends",
            "kind": "convention",
            "reason": "the user said weekends",
        },
        json_reply=True,
    )
    edited = Memory.objects.get(pk=response.json()["result_id"])
    assert edited.status == Status.PROPOSED and edited.meta["approvals"] == [reviewer.pk]
    assert Memory.objects.get(pk=item.pk).status == Status.REJECTED
    refused = decide(reviewer_client, edited, ACTIONS["confirm"], json_reply=True)
    assert refused.status_code == 409 and Memory.objects.get(pk=edited.pk).status == Status.PROPOSED
    assert "Four-eyes: 1 of 2 approvals (rami)" in sana.get(reverse("dashboard:review")).content.decode()
    assert decide(sana, edited, ACTIONS["confirm"], json_reply=True).json()["status"] == Status.ACTIVE


# --- Similar memories ------------------------------------------------------------------------------------


def test_similar_lists_active_memories_from_the_agents_recall_with_the_same_key_marked(
    reviewer_client, project_scope, history
):
    item = proposal(project_scope, "Export slides as PDF from now on", kind="convention", key="export_format")
    other = proposal(project_scope, "Export slides in colour")  # a proposal: never listed as "in force"
    body = reviewer_client.get(reverse("dashboard:review-similar", args=[item.pk])).json()
    ids = [s["memory_id"] for s in body["similar"]]
    assert history["second"].pk in ids and item.pk not in ids and other.pk not in ids
    assert len(ids) <= 3 and all(s["status"] == "active" for s in body["similar"])
    assert next(s for s in body["similar"] if s["memory_id"] == history["second"].pk)["same_key"] is True
    assert history["secret"].pk not in ids  # the sibling scope's memory is never found


def test_similar_is_refused_outside_the_callers_grants(outsider_client, client, project_scope, history):
    item = proposal(project_scope, "Export slides as PDF from now on", kind="convention")
    url = reverse("dashboard:review-similar", args=[item.pk])
    assert outsider_client.get(url).status_code == 404
    assert client.get(url).status_code == 302  # not signed in: to the sign-in page
    viewer = person("vic", project_scope, Role.VIEWER)
    assert viewer.get(url).status_code == 403  # a viewer may read the queue but not ask the recall
    assert json.loads(viewer.get(url).content)["error"] == "permission_denied"


def test_a_forgotten_memory_is_never_offered_as_similar_nor_its_text_shown(
    reviewer_client, curator, project_scope
):
    from governance.services.memory import memory_forget

    secret = remember(project_scope, "Export slides with the client's private watermark", kind="convention")
    item = proposal(project_scope, "Export slides with a watermark", kind="convention")
    url = reverse("dashboard:review-similar", args=[item.pk])
    assert secret.pk in [s["memory_id"] for s in reviewer_client.get(url).json()["similar"]]
    memory_forget(memory_id=secret.pk, actor=curator, reason="private")
    body = reviewer_client.get(url).content.decode()
    assert (
        secret.pk not in [s["memory_id"] for s in json.loads(body)["similar"]]
        and "private watermark" not in body
    )
    assert "private watermark" not in reviewer_client.get(reverse("dashboard:review")).content.decode()
