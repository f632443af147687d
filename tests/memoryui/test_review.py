from django.urls import reverse

from governance.models import Memory, Status
from governance.services.memory import memory_propose
from memoryui.views.review import NOTHING_SELECTED
from tests.memoryui.conftest import remember


def proposal(scope, text, **kw):
    memory = remember(scope, text, kind="preference", status="candidate", **kw)
    memory_propose(memory_id=memory.pk, actor=None)
    return memory


def test_queue_lists_proposals_of_readable_scopes(reviewer_client, outsider_client, history, sibling_scope):
    hidden = proposal(sibling_scope, "payments prefer cents")
    response = reviewer_client.get(reverse("dashboard:review"))
    listed = [i.memory.pk for i in response.context["items"]]
    assert listed == [history["proposal"].pk]
    assert hidden.pk not in listed
    assert outsider_client.get(reverse("dashboard:review")).context["count"] == 0


def test_bulk_confirm_activates_every_selected_item(reviewer_client, project_scope, history):
    other = proposal(project_scope, "short decks")
    response = reviewer_client.post(reverse("dashboard:review-act"),
                                    {"memory": [history["proposal"].pk, other.pk], "decision": "confirm"})
    assert response.status_code == 302
    assert set(Memory.objects.filter(pk__in=[history["proposal"].pk, other.pk]).values_list("status", flat=True)) == {"active"}


def test_bulk_decision_is_all_or_nothing(reviewer_client, project_scope, history, sibling_scope):
    hidden = proposal(sibling_scope, "payments prefer cents")
    response = reviewer_client.post(reverse("dashboard:review-act"),
                                    {"memory": [history["proposal"].pk, hidden.pk], "decision": "confirm"})
    assert response.status_code == 404
    assert b"Nothing was changed" in response.content
    assert Memory.objects.get(pk=history["proposal"].pk).status == Status.PROPOSED


def test_bulk_reject_needs_reason_and_confirmation(reviewer_client, history):
    url = reverse("dashboard:review-act")
    assert reviewer_client.post(url, {"memory": [history["proposal"].pk], "decision": "reject"}).status_code == 400
    assert reviewer_client.post(url, {"memory": [history["proposal"].pk], "decision": "reject",
                                      "reason": "wrong"}).status_code == 400
    ok = reviewer_client.post(url, {"memory": [history["proposal"].pk], "decision": "reject", "reason": "wrong",
                                    "irreversible": "yes"})
    assert ok.status_code == 302
    assert Memory.objects.get(pk=history["proposal"].pk).status == Status.REJECTED


def test_empty_selection_and_bad_ids_are_clear_400s(reviewer_client, history):
    url = reverse("dashboard:review-act")
    empty = reviewer_client.post(url, {"decision": "confirm"})
    assert empty.status_code == 400 and NOTHING_SELECTED.encode() in empty.content
    assert reviewer_client.post(url, {"memory": ["abc"], "decision": "confirm"}).status_code == 400


def test_four_eyes_state_is_shown_and_one_reviewer_only_records_an_approval(
    reviewer_client, project_scope, history
):
    project_scope.require_two_reviewers = True
    project_scope.save(update_fields=["require_two_reviewers"])
    commitment = proposal(project_scope, "Never email the client on Sundays", tier="long")
    body = reviewer_client.get(reverse("dashboard:review")).content.decode()
    assert "Four-eyes: 0 of 2 approvals" in body
    reviewer_client.post(reverse("dashboard:review-act"), {"memory": [commitment.pk], "decision": "confirm"})
    assert Memory.objects.get(pk=commitment.pk).status == Status.PROPOSED
    assert "Four-eyes: 1 of 2 approvals (rami)" in reviewer_client.get(reverse("dashboard:review")).content.decode()


def test_a_viewer_sees_the_queue_without_decision_controls(client, project_scope, history):
    from governance.models import Role
    from governance.services.principal import grant_add, user_ensure

    viewer = user_ensure(username="vera", password="pw-vera", actor=None)
    grant_add(principal=viewer, scope=project_scope, role=Role.VIEWER, actor=None)
    client.login(username="vera", password="pw-vera")
    response = client.get(reverse("dashboard:review"))
    assert response.context["count"] == 1 and not response.context["can_act"]
    assert b"Confirm selected" not in response.content
