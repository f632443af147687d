"""What awaits a person's decision, counted the same everywhere: the review queue's heading ("3 proposals
and 2 disputes await you"), the overview beside the proposals, and the badge on the menu's Review link.
Only what this person may decide (governance.permissions), never another workspace's; no badge for
someone who can decide nothing. A dispute is decided in place (JSON for review.js) through the form and
the service, and a reader cannot decide one by posting the form."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from governance.models import AuditEvent, Dispute, DisputeState, Memory, Role, Status
from governance.selectors.awaiting import Awaiting, awaiting_decision
from governance.services.dispute import dispute_propose
from governance.services.memory import memory_confirm
from governance.services.principal import grant_add, user_ensure
from memoryui.views.awaiting import awaiting_for
from tests.memoryui.conftest import remember, signed_in

pytestmark = pytest.mark.django_db

JSON = {"HTTP_ACCEPT": "application/json"}


def said(scope, text, days_ago):
    return remember(scope, text, occurred_at=timezone.now() - timedelta(days=days_ago))


def disputed(scope, old_text, new_text):
    old, new = said(scope, old_text, 20), said(scope, new_text, 2)
    dispute = dispute_propose(
        newer=new, older=old, similarity=0.84, reason="a later statement names another value", cues=["改为"]
    )
    assert dispute is not None
    return dispute, old, new


@pytest.fixture
def reader(project_scope):
    principal = user_ensure(username="vera", password="pw-vera", actor=None)
    grant_add(principal=principal, scope=project_scope, role=Role.VIEWER, actor=None)
    return principal


@pytest.fixture
def reader_client(reader):
    return signed_in(reader, "pw-vera")


@pytest.fixture
def queue(project_scope, sibling_scope, other_workspace_scope):
    """In acme/slides 3 proposals and 2 disputes (English and Chinese); in acme/payments 1 and 1 (the
    owner's only); in another workspace 2 and 1 (the outsider's only)."""
    proposals = [
        remember(project_scope, "The client wants slide numbers bottom right", status="proposed"),
        remember(project_scope, "客户希望每页都有页码", kind="preference", status="proposed"),
        remember(project_scope, "Speaker notes are written in English", status="proposed"),
    ]
    disputes = [
        disputed(project_scope, "We host the decks on Dropbox.", "We have moved the decks to SharePoint."),
        disputed(project_scope, "演示文稿使用宋体。", "演示文稿的字体改为黑体。"),
    ]
    remember(sibling_scope, "Payments settle daily", status="proposed")
    disputed(sibling_scope, "Payments run on Stripe.", "Payments have moved to Adyen.")
    for text in ("Globex decks are blue", "Globex 的幻灯片用蓝色"):
        remember(other_workspace_scope, text, status="proposed")
    disputed(other_workspace_scope, "Globex uses Oracle.", "Globex 已改用 DB2。")
    return {"proposals": proposals, "disputes": disputes}


def heading(response) -> str:
    html = response.content.decode()
    found = re.search(r'id="queue-count"[^>]*>([^<]*)<', html)
    assert found, "the queue's heading has no count"
    return found.group(1)


def badge(response) -> int | None:
    found = re.search(r'id="nav-awaiting"><span data-n>(\d+)</span>', response.content.decode())
    return int(found.group(1)) if found else None


EXPECTED = {
    "owner": (Awaiting(4, 3), "4 proposals and 3 disputes await you"),
    "curator": (Awaiting(3, 2), "3 proposals and 2 disputes await you"),
    "reviewer": (Awaiting(3, 2), "3 proposals and 2 disputes await you"),  # a reviewer may dismiss
    "reader": (Awaiting(0, 0), "Nothing here awaits your decision; the items below are for others to decide"),
    "outsider": (Awaiting(2, 1), "2 proposals and 1 dispute await you"),  # their own workspace only
}


def test_each_role_sees_what_it_may_decide_in_the_heading_the_overview_and_the_badge(
    queue, owner_client, curator_client, reviewer_client, reader_client, outsider_client
):
    clients = {
        "owner": owner_client,
        "curator": curator_client,
        "reviewer": reviewer_client,
        "reader": reader_client,
        "outsider": outsider_client,
    }
    for who, client in clients.items():
        awaiting, sentence = EXPECTED[who]
        review = client.get(reverse("dashboard:review"))
        assert review.status_code == 200
        assert review.context["awaiting"] == awaiting, who
        assert heading(review) == sentence, who
        overview = client.get(reverse("dashboard:overview"))
        html = overview.content.decode()
        assert overview.context["awaiting"] == awaiting, who
        assert f'id="overview-disputes">{overview.context["disputes"]}<' in html
        if awaiting.total:
            assert sentence in html, who
        # The badge, on every page: the total, or none at all for someone who may decide nothing.
        for response in (review, overview, client.get(reverse("dashboard:memories"))):
            assert badge(response) == (awaiting.total or None), who
    # A reader lists what it may read, and decides none of it.
    reader_page = reader_client.get(reverse("dashboard:review"))
    assert reader_page.context["waiting"] == 3 and reader_page.context["disputes_waiting"] == 2
    assert 'id="nav-awaiting"' not in reader_page.content.decode()
    # The overview puts the disputes beside the proposals, for each reader of the scope.
    assert reader_client.get(reverse("dashboard:overview")).context["disputes"] == 2
    assert owner_client.get(reverse("dashboard:overview")).context["disputes"] == 3


def test_no_sign_in_sees_no_count_and_an_empty_installation_counts_nothing(db):
    for name in ("dashboard:review", "dashboard:overview"):
        response = Client().get(reverse(name))
        assert response.status_code == 302 and "login" in response["Location"]
    nobody = user_ensure(username="nora", password="pw-nora", actor=None)  # no grant anywhere
    client = signed_in(nobody, "pw-nora")
    review = client.get(reverse("dashboard:review"))
    assert review.status_code == 200 and heading(review) == "Nothing here awaits your decision"
    assert badge(review) is None and badge(client.get(reverse("dashboard:overview"))) is None


def test_the_counts_follow_the_focused_scope_and_the_queues_filters(queue, owner_client):
    slides = owner_client.get(reverse("dashboard:review"), {"scope": "acme/slides"})
    assert heading(slides) == "3 proposals and 2 disputes await you" and badge(slides) == 5
    payments = owner_client.get(reverse("dashboard:overview"), {"scope": "acme/payments"})
    assert payments.context["awaiting"] == Awaiting(1, 1) and badge(payments) == 2
    # A filter narrows the heading; the badge keeps counting the scope.
    preferences = owner_client.get(
        reverse("dashboard:review"), {"scope": "acme/slides", "kind": "preference"}
    )
    assert heading(preferences) == "1 proposal awaits you" and badge(preferences) == 5


def test_a_proposal_already_approved_awaits_the_second_person_not_the_first(
    four_eyes_scope, owner, owner_client, curator_client
):
    rule = remember(
        four_eyes_scope, "幻灯片一律使用 16:9 版式", kind="convention", tier="long", status="proposed"
    )
    memory_confirm(memory_id=rule.pk, actor=owner, reason="first approval")
    assert Memory.objects.get(pk=rule.pk).status == Status.PROPOSED
    assert owner_client.get(reverse("dashboard:review")).context["awaiting"] == Awaiting(0, 0)
    assert heading(curator_client.get(reverse("dashboard:review"))) == "1 proposal awaits you"


def test_the_selector_costs_the_grants_and_two_counts_and_a_request_asks_once(
    queue, owner, reader, project_scope
):
    def queries(principal):
        with CaptureQueriesContext(connection) as ctx:
            answer = awaiting_decision(principal=principal)
        return answer, len(ctx.captured_queries)

    assert queries(owner) == (Awaiting(4, 3), 3)
    assert queries(reader) == (Awaiting(0, 0), 1)  # nothing to decide: the grants, no count
    for i in range(6):  # more items, the same queries
        remember(project_scope, f"Proposal {i} about fonts", status="proposed")
    assert queries(owner) == (Awaiting(10, 3), 3)
    request = RequestFactory().get("/")
    request.principal = owner
    with CaptureQueriesContext(connection) as ctx:
        first, again = awaiting_for(request), awaiting_for(request)
    assert first == again == Awaiting(10, 3) and len(ctx.captured_queries) == 3


# --- Deciding a dispute in place ---------------------------------------------------------------------------


def post(client, dispute, **data):
    return client.post(reverse("dashboard:review-dispute", args=[dispute.pk]), data, **JSON)


def test_a_dispute_decided_in_place_answers_its_result_and_the_new_counts(queue, curator_client, curator):
    (first, old, new), (second, song, hei) = queue["disputes"]
    response = post(
        curator_client,
        second,
        decision="confirm",
        holds=hei.pk,
        reason="品牌手册规定用黑体",
        back="scope=acme/slides",
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["holds"], body["holds_side"], body["ended"], body["state"]) == (
        hei.pk,
        "newer",
        song.pk,
        DisputeState.CONFIRMED,
    )
    assert body["reason"] == "品牌手册规定用黑体" and body["result_url"] == f"/memories/{hei.pk}/"
    assert body["heading"] == "3 proposals and 1 dispute await you"
    assert (body["waiting"], body["disputes_waiting"], body["badge"]) == (3, 1, 4)
    assert Memory.objects.get(pk=song.pk).status == Status.SUPERSEDED
    audit = AuditEvent.objects.get(action="dispute.confirm", target_id=str(second.pk))
    assert (audit.actor_id, audit.reason) == (curator.pk, "品牌手册规定用黑体")
    dismissed = post(curator_client, first, decision="dismiss", back="scope=acme/slides").json()
    assert dismissed["holds"] is None and dismissed["state"] == DisputeState.DISMISSED
    assert dismissed["heading"] == "3 proposals await you" and dismissed["badge"] == 3
    assert {m.status for m in Memory.objects.filter(pk__in=[old.pk, new.pk])} == {Status.ACTIVE}
    again = post(curator_client, first, decision="dismiss")
    assert again.status_code == 409 and again.json()["error"]


def test_a_reader_cannot_decide_a_dispute_by_posting_the_form(queue, reader_client, reviewer_client):
    (dispute, old, new), _ = queue["disputes"]
    for data in (
        {"decision": "confirm", "holds": new.pk, "reason": "I think so"},
        {"decision": "dismiss", "reason": "不矛盾"},
    ):
        for extra in ({}, JSON):  # the plain form post and review.js's
            response = reader_client.post(
                reverse("dashboard:review-dispute", args=[dispute.pk]), data, **extra
            )
            assert response.status_code == 403
    # A reviewer may dismiss but not say which one holds (that ends a memory: the supersede right).
    refused = post(reviewer_client, dispute, decision="confirm", holds=new.pk, reason="newer")
    assert refused.status_code == 403 and refused.json()["error"] == "permission_denied"
    assert Dispute.objects.get(pk=dispute.pk).state == DisputeState.PROPOSED
    assert {m.status for m in Memory.objects.filter(pk__in=[old.pk, new.pk])} == {Status.ACTIVE}
    assert not AuditEvent.objects.filter(action__startswith="dispute.").exists()


def test_another_workspace_gets_the_answer_of_an_unknown_dispute(queue, outsider_client):
    (dispute, old, new), _ = queue["disputes"]
    ours = post(outsider_client, dispute, decision="dismiss")
    unknown = outsider_client.post(
        reverse("dashboard:review-dispute", args=[dispute.pk + 9999]), {"decision": "dismiss"}, **JSON
    )
    assert ours.status_code == unknown.status_code == 404 and ours.json() == unknown.json()
    assert Dispute.objects.get(pk=dispute.pk).state == DisputeState.PROPOSED
