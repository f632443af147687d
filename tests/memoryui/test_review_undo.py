"""The review queue's undo of a reject: it proposes the memory again (a new proposal derived from the
rejected one) through the same per-item endpoint, with the JSON review.js shows and the plain form."""

from __future__ import annotations

from django.urls import reverse

from governance.models import AuditEvent, Memory, Relation, RelationKind, Role, Status
from governance.services.principal import grant_add, user_ensure
from memoryui.views.memories import REASON_REQUIRED
from tests.memoryui.conftest import signed_in
from tests.memoryui.test_review_decisions import decide, proposal

REJECT = {"decision": "reject", "reason": "the user never said that"}
UNDO = {"decision": "repropose", "reason": "Undo of the rejection just made"}


def test_undo_after_a_reject_shows_the_new_proposal(reviewer_client, project_scope):
    item = proposal(project_scope)
    assert decide(reviewer_client, item, REJECT, json_reply=True).status_code == 200
    response = decide(reviewer_client, item, UNDO, json_reply=True)
    assert response.status_code == 200, response.content
    body = response.json()
    new = Memory.objects.get(pk=body["result_id"])
    assert new.pk != item.pk and new.status == Status.PROPOSED and new.text == item.text
    assert (body["status"], body["decision"], body["result_url"]) == (
        Status.PROPOSED,
        "repropose",
        reverse("dashboard:memory", args=[new.pk]),
    )
    assert f"#{new.pk}" in body["message"] and body["waiting"] == 1  # back in the queue, as a new item
    assert Relation.objects.filter(source=new, target=item, kind=RelationKind.DERIVED_FROM).exists()
    assert AuditEvent.objects.get(action="memory.repropose").reason == UNDO["reason"]
    item.refresh_from_db()
    assert item.status == Status.REJECTED
    queue = reviewer_client.get(reverse("dashboard:review"))
    assert f'href="{reverse("dashboard:memory", args=[new.pk])}"' in queue.content.decode()


def test_undo_through_the_plain_form_redirects_with_a_message(reviewer_client, project_scope):
    item = proposal(project_scope)
    decide(reviewer_client, item, REJECT)
    response = decide(reviewer_client, item, UNDO)
    assert response.status_code == 302
    assert Memory.objects.filter(meta__reproposed__from=item.pk, status=Status.PROPOSED).count() == 1


def test_undo_of_an_item_not_rejected_is_a_409_and_changes_nothing(reviewer_client, project_scope):
    item = proposal(project_scope)
    response = decide(reviewer_client, item, UNDO, json_reply=True)
    assert response.status_code == 409 and response.json()["error"] == "invalid_transition"
    assert Memory.objects.count() == 1


def test_undo_without_a_reason_is_a_400(reviewer_client, project_scope):
    item = proposal(project_scope)
    decide(reviewer_client, item, REJECT)
    response = decide(reviewer_client, item, {"decision": "repropose", "reason": " "}, json_reply=True)
    assert response.status_code == 400 and response.json()["message"] == REASON_REQUIRED
    assert Memory.objects.count() == 1


def test_viewers_and_other_workspaces_cannot_undo(reviewer_client, outsider_client, project_scope):
    item = proposal(project_scope)
    decide(reviewer_client, item, REJECT)
    viewer = user_ensure(username="vera", password="pw-vera", actor=None)
    grant_add(principal=viewer, scope=project_scope, role=Role.VIEWER, actor=None)
    assert decide(signed_in(viewer, "pw-vera"), item, UNDO, json_reply=True).status_code == 403
    assert decide(outsider_client, item, UNDO, json_reply=True).status_code == 404
    assert Memory.objects.count() == 1
