"""The review queue lists the contradictions the system proposed (Dispute) beside the proposals: both
texts, which one is newer, the wording that raised it and who may decide; Confirm (which one holds) and
Dismiss go through governance/services/dispute.py, which decides who may and audits it. Each role, another
workspace's user and no sign-in; a forgotten memory's text never appears in a dispute."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from governance.models import AuditEvent, Dispute, DisputeState, Memory, Relation, RelationKind, Role, Status
from governance.redaction.masking import FORGOTTEN_TEXT
from governance.runtime import cursor as codec
from governance.selectors.disputes import encode_cursor
from governance.services.dispute import dispute_propose
from governance.services.memory import memory_forget
from governance.services.principal import grant_add, user_ensure
from tests.memoryui.conftest import remember, signed_in

pytestmark = pytest.mark.django_db

OLD = "We use MySQL for the main database."
NEW = "The team has moved to PostgreSQL for the main database."


def said(scope, text, days_ago):
    return remember(scope, text, occurred_at=timezone.now() - timedelta(days=days_ago))


def propose(scope, old_text=OLD, new_text=NEW):
    old, new = said(scope, old_text, 20), said(scope, new_text, 2)
    dispute = dispute_propose(
        newer=new,
        older=old,
        similarity=0.84,
        reason="a later statement names another value",
        cues=["moved … to"],
    )
    assert dispute is not None
    return dispute, old, new


@pytest.fixture
def dispute(project_scope):
    return propose(project_scope)


@pytest.fixture
def viewer_client(project_scope):
    principal = user_ensure(username="vera", password="pw-vera", actor=None)
    grant_add(principal=principal, scope=project_scope, role=Role.VIEWER, actor=None)
    return signed_in(principal, "pw-vera")


def queue(client):
    response = client.get(reverse("dashboard:review"))
    assert response.status_code == 200
    return response


def act(client, dispute, **data):
    return client.post(reverse("dashboard:review-dispute", args=[dispute.pk]), data)


def confirm_body(holds, reason="we migrated last month"):
    return {"decision": "confirm", "holds": holds.pk, "reason": reason}


def unchanged(dispute, old, new):
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.PROPOSED
    assert {m.status for m in Memory.objects.filter(pk__in=[old.pk, new.pk])} == {Status.ACTIVE}


# --- The listing ------------------------------------------------------------------------------------------


def test_the_queue_shows_both_texts_which_is_newer_the_cue_and_who_may_decide(
    dispute, owner_client, curator_client, reviewer_client, viewer_client
):
    d, old, new = dispute
    allowed = {}
    for who, client in (
        ("owner", owner_client),
        ("curator", curator_client),
        ("reviewer", reviewer_client),
        ("viewer", viewer_client),
    ):
        response = queue(client)
        [item] = response.context["disputes"]
        assert item.dispute.pk == d.pk and item.newer.memory_id == new.pk and item.older.memory_id == old.pk
        html = response.content.decode()
        section = html[html.index('id="dispute-list"') :]
        assert OLD in section and NEW in section, who
        assert section.index("Newer") < section.index(NEW) < section.index("Older") < section.index(OLD)
        assert "moved … to" in section and "curator or owner" in html
        allowed[who] = (
            item.can_confirm,
            item.can_dismiss,
            'class="dispute-confirm"' in html,
            'class="dispute-dismiss"' in html,
        )
    assert allowed == {
        "owner": (True, True, True, True),
        "curator": (True, True, True, True),
        "reviewer": (False, True, False, True),
        "viewer": (False, False, False, False),
    }
    assert "you may read but not decide this one" in queue(viewer_client).content.decode()


def test_another_workspace_and_no_sign_in_see_no_dispute(dispute, outsider_client, other_workspace_scope):
    propose(other_workspace_scope, "Globex uses Oracle.", "Globex has moved to DB2.")
    shown = queue(outsider_client)
    assert [i.dispute.newer.scope.path for i in shown.context["disputes"]] == ["globex/slides"]
    assert OLD not in shown.content.decode() and NEW not in shown.content.decode()
    anonymous = Client().get(reverse("dashboard:review"))
    assert anonymous.status_code == 302 and "login" in anonymous["Location"]


def test_a_scope_filter_keeps_only_its_subtree(dispute, owner_client, sibling_scope):
    propose(sibling_scope, "Payments run on Stripe.", "Payments have moved to Adyen.")
    everything = owner_client.get(reverse("dashboard:review"))
    assert len(everything.context["disputes"]) == 2
    one = owner_client.get(reverse("dashboard:review"), {"scope": "acme/payments"})
    assert [i.dispute.newer.scope.path for i in one.context["disputes"]] == ["acme/payments"]


# --- Confirm and dismiss through the services ------------------------------------------------------------


def test_a_curator_confirms_which_holds_the_other_is_superseded_and_it_is_audited(
    dispute, curator_client, curator
):
    d, old, new = dispute
    response = act(curator_client, d, **confirm_body(new), back="scope=acme/slides")
    assert response.status_code == 302 and response["Location"].endswith("?scope=acme/slides")
    d.refresh_from_db()
    assert d.state == DisputeState.CONFIRMED and d.holds_id == new.pk and d.decided_by_id == curator.pk
    old.refresh_from_db()
    assert old.status == Status.SUPERSEDED
    assert Relation.objects.filter(source=new, target=old, kind=RelationKind.SUPERSEDES).exists()
    audit = AuditEvent.objects.get(action="dispute.confirm", target_id=str(d.pk))
    assert audit.actor_id == curator.pk and audit.reason == "we migrated last month"
    after = curator_client.get(response["Location"])
    assert after.context["disputes"] == []
    assert f"Dispute {d.pk} settled: #{new.pk} holds" in after.content.decode()
    again = act(curator_client, d, **confirm_body(new))
    assert again.status_code == 409  # decided once


def test_the_owner_may_keep_the_older_one(dispute, owner_client):
    d, old, new = dispute
    assert act(owner_client, d, **confirm_body(old, "the move was called off")).status_code == 302
    new.refresh_from_db()
    assert new.status == Status.SUPERSEDED and Memory.objects.get(pk=old.pk).status == Status.ACTIVE


def test_a_reviewer_dismisses_both_stay_and_it_is_audited(dispute, reviewer_client, reviewer):
    d, old, new = dispute
    response = act(reviewer_client, d, decision="dismiss", reason="two different databases")
    assert response.status_code == 302
    d.refresh_from_db()
    assert d.state == DisputeState.DISMISSED and d.decided_by_id == reviewer.pk
    assert {m.status for m in Memory.objects.filter(pk__in=[old.pk, new.pk])} == {Status.ACTIVE}
    assert AuditEvent.objects.get(action="dispute.dismiss", target_id=str(d.pk)).actor_id == reviewer.pk
    assert queue(reviewer_client).context["disputes"] == []


# --- Refusals ---------------------------------------------------------------------------------------------


def test_roles_without_the_right_are_refused_and_nothing_changes(dispute, reviewer_client, viewer_client):
    d, old, new = dispute
    for client in (reviewer_client, viewer_client):  # confirming ends a memory: the supersede right
        response = act(client, d, **confirm_body(new))
        assert response.status_code == 403 and response.context["error"].code == "permission_denied"
    response = act(viewer_client, d, decision="dismiss")
    assert response.status_code == 403
    unchanged(d, old, new)
    assert not AuditEvent.objects.filter(action__startswith="dispute.").exists()


def test_bad_input_is_a_clear_400_and_changes_nothing(dispute, curator_client):
    d, old, new = dispute
    cases = [
        ("reason", {**confirm_body(new), "reason": "  "}),
        ("reason", {**confirm_body(new), "reason": "理由" * 1001}),  # too long: refused, never cut
        ("holds", {**confirm_body(new), "holds": "abc"}),
        ("holds", {k: v for k, v in confirm_body(new).items() if k != "holds"}),
        ("decision", {"decision": "maybe"}),
    ]
    for field, data in cases:
        response = act(curator_client, d, **data)
        assert response.status_code == 400, field
        assert response.context["error"].as_dict()["field"] == field
    other = said(d.newer.scope, "Unrelated.", 1)
    assert act(curator_client, d, **confirm_body(other)).context["error"].as_dict()["field"] == "holds"
    unchanged(d, old, new)


def test_another_workspace_unknown_and_no_sign_in_get_the_same_refusal(dispute, outsider_client):
    d, old, new = dispute
    answers = []
    for dispute_id in (d.pk, d.pk + 999):
        for data in (confirm_body(new), {"decision": "dismiss"}):
            response = outsider_client.post(reverse("dashboard:review-dispute", args=[dispute_id]), data)
            answers.append((response.status_code, response.context["error"].as_dict()))
    assert answers[0][0] == 404 and all(a == answers[0] for a in answers)
    anonymous = Client().post(reverse("dashboard:review-dispute", args=[d.pk]), confirm_body(new))
    assert anonymous.status_code == 302 and "login" in anonymous["Location"]
    unchanged(d, old, new)


# --- A forgotten memory ------------------------------------------------------------------------------------


@pytest.mark.parametrize("hard", [False, True])
def test_a_forgotten_memorys_text_never_shows_in_a_dispute(
    dispute, owner, owner_client, reviewer_client, hard
):
    d, old, new = dispute
    memory_forget(memory_id=old.pk, actor=owner, reason="user asked", hard=hard)
    for client in (owner_client, reviewer_client):  # a soft forget keeps the text for owners: not here
        response = queue(client)
        html = response.content.decode()
        assert OLD not in html and "MySQL" not in html
        [item] = response.context["disputes"]
        assert item.older.text == FORGOTTEN_TEXT and item.older.withheld
        assert NEW in html and FORGOTTEN_TEXT in html
        assert 'class="dispute-confirm"' not in html  # nothing to choose between
    assert act(reviewer_client, d, decision="dismiss").status_code == 302


# --- Bounded queries ---------------------------------------------------------------------------------------


def test_the_page_query_count_does_not_grow_with_the_disputes(project_scope, curator_client):
    def count():
        with CaptureQueriesContext(connection) as ctx:
            queue(curator_client)
        return len(ctx.captured_queries)

    def add(n, tag):
        for i in range(n):
            propose(project_scope, f"Build {tag}{i} uses Maven.", f"Build {tag}{i} has moved to Gradle.")

    add(2, "a")
    small = count()
    add(12, "b")
    assert count() == small
    assert len(queue(curator_client).context["disputes"]) == 14


# --- Paging past a page, and the queue's other filters ---------------------------------------------------


def many(scope, n, tag="p"):
    """`n` disputes in `scope`, oldest first."""
    return [
        propose(scope, f"Build {tag}{i} uses Maven.", f"Build {tag}{i} has moved to Gradle.")[0]
        for i in range(n)
    ]


def listed(response):
    return [i.dispute.pk for i in response.context["disputes"]]


def walk(client, params=None):
    """Every dispute the queue lists, page by page through its disputes links; the pages seen."""
    url, pages = reverse("dashboard:review") + "?" + urlencode(params or {}), []
    while url:
        response = client.get(url)
        assert response.status_code == 200
        pages.append(listed(response))
        nxt = response.context["links"].get("disputes_next")
        url = reverse("dashboard:review") + nxt if nxt else None
    return pages


def test_more_than_a_page_of_disputes_pages_with_each_role_and_only_ones_own(
    project_scope,
    other_workspace_scope,
    owner_client,
    curator_client,
    reviewer_client,
    viewer_client,
    outsider_client,
):
    ours = [d.pk for d in many(project_scope, 55)]
    theirs = propose(other_workspace_scope, "Globex uses Oracle.", "Globex has moved to DB2.")[0]
    for who, client in (
        ("owner", owner_client),
        ("curator", curator_client),
        ("reviewer", reviewer_client),
        ("viewer", viewer_client),
    ):
        pages = walk(client)
        assert [len(p) for p in pages] == [50, 5], who
        assert sum(pages, []) == ours, who  # oldest first, each once, none of another workspace
        first = client.get(reverse("dashboard:review"))
        assert first.context["disputes_waiting"] == 55 and "(55)" in first.content.decode()
        assert "Next 50 disputes" in first.content.decode()
        newest = walk(client, {"sort": "newest"})
        assert sum(newest, []) == ours[::-1], who
    second = curator_client.get(
        reverse("dashboard:review")
        + curator_client.get(reverse("dashboard:review")).context["links"]["disputes_next"]
    )
    assert "First disputes" in second.content.decode()
    assert walk(outsider_client) == [[theirs.pk]]
    anonymous = Client().get(reverse("dashboard:review"), {"disputes_after": "x"})
    assert anonymous.status_code == 302 and "login" in anonymous["Location"]


def test_the_disputes_follow_the_queues_filters_and_a_bad_cursor_is_a_400(project_scope, curator_client):
    plain = many(project_scope, 2)
    rule = remember(project_scope, "Builds use Maven.", kind="convention", key="build_tool")
    change = said(project_scope, "The builds have moved to Gradle.", 1)
    ruled = dispute_propose(
        newer=change, older=rule, similarity=0.9, reason="another value", cues=["moved … to"]
    )

    def shown(**params):
        response = curator_client.get(reverse("dashboard:review"), params)
        assert response.status_code == 200
        return listed(response)

    everything = [*(d.pk for d in plain), ruled.pk]
    assert shown() == everything
    assert shown(kind="convention") == [ruled.pk]  # the kind of either memory
    assert shown(kind="episodic") == []
    assert shown(proposer="-") == everything  # the system proposes every dispute
    assert shown(proposer="cora") == []
    assert shown(newer="1d") == everything and shown(older="1d") == []
    Dispute.objects.filter(pk=plain[0].pk).update(created_at=timezone.now() - timedelta(days=8))
    assert shown(older="7d") == [plain[0].pk] and shown(newer="7d") == [plain[1].pk, ruled.pk]
    for bad in ("x", "1", codec.encode("review", ["2026-01-01T00:00:00+00:00", 1])):
        response = curator_client.get(reverse("dashboard:review"), {"disputes_after": bad})
        assert response.status_code == 400 and "disputes_after" in response.content.decode()
    # The proposals' page stays where it is while the disputes page on.
    page = curator_client.get(reverse("dashboard:review"), {"disputes_after": encode_cursor(plain[0])})
    assert listed(page) == [plain[1].pk, ruled.pk]
