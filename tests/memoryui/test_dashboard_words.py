"""Words and defaults of the dashboard (issue 22): the relation verbs, a superseded memory without
"activation now", the outcome sentences, viewer as the default role, a token revoked only with a reason
(audited), the theme kept in a cookie, the review decision's result, meaning search's cut-off."""

from __future__ import annotations

import json

from django.urls import reverse

from governance.models import ApiToken, AuditEvent, Role
from governance.services.principal import token_issue
from memoryui.views.glossary import terms
from tests.memoryui.conftest import remember
from tests.memoryui.test_memory_list import embedded, meaning  # noqa: F401  (the fixture)


def test_a_superseded_memory_says_is_superseded_by_and_shows_no_activation_now(reviewer_client, history):
    page = reviewer_client.get(reverse("dashboard:memory", args=[history["first"].pk])).content.decode()
    assert "is superseded by" in page and "is supersedes by" not in page
    assert "Activation now" not in page and "never recalled" in page
    assert "(when it happened)" in page and "(when it was written here)" in page
    assert (
        "Activation now"
        in reviewer_client.get(reverse("dashboard:memory", args=[history["second"].pk])).content.decode()
    )


def test_the_glossary_has_every_word_the_pages_use():
    assert {"revoke", "retire", "forget", "supersede", "packet", "confidence", "stage", "tier"} <= {
        t.slug for t in terms()
    }


def test_an_action_says_what_became_of_the_memory(curator_client, project_scope):
    memory = remember(project_scope, "Old habit", kind="semantic")
    response = curator_client.post(
        reverse("dashboard:memory-act", args=[memory.pk]),
        {"action": "retire", "reason": "not true any more", "irreversible": "yes"},
        follow=True,
    )
    text = response.content.decode()
    assert (
        f"Memory {memory.pk} is retired: it is kept but never recalled again." in text and "Done:" not in text
    )


def test_add_people_and_invite_default_to_viewer(owner_client):
    page = owner_client.get(reverse("dashboard:members", args=["acme"])).content.decode()
    assert page.count('<option value="viewer" selected>') == 2
    assert "not grants: only owners change grants" in page
    grants = owner_client.get(reverse("dashboard:governance")).content.decode()
    assert '<option value="viewer" selected>' in grants


def test_a_token_is_revoked_only_with_a_reason_which_is_audited(
    owner_client, outsider_client, agent, project_scope, owner
):
    token_issue(principal=agent, actor=owner, scope=project_scope, max_role=Role.AGENT)
    token = ApiToken.objects.get(principal=agent)
    url = reverse("dashboard:token-revoke")
    confirm = owner_client.get(url, {"token": token.pk})
    assert confirm.status_code == 200 and b"Reason (kept in the audit log)" in confirm.content
    assert outsider_client.get(url, {"token": token.pk}).status_code == 404  # not theirs: as if unknown
    refused = owner_client.post(url, {"token": token.pk, "reason": " "})
    assert refused.status_code == 400 and b"invalid_input" in refused.content
    token.refresh_from_db()
    assert token.revoked_at is None
    done = owner_client.post(url, {"token": token.pk, "reason": "the laptop was lost"})
    assert done.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert (
        AuditEvent.objects.filter(action="token.revoke", target_id=str(token.pk)).get().reason
        == "the laptop was lost"
    )


def test_the_theme_is_kept_in_a_cookie_the_server_reads(reviewer_client):
    assert b"data-theme" not in reviewer_client.get(reverse("dashboard:overview")).content
    response = reviewer_client.post(reverse("dashboard:theme"), {"theme": "dark", "next": "/turns/"})
    assert response.status_code == 302 and response["Location"] == "/turns/"
    assert response.cookies["theme"]["max-age"] >= 300 * 24 * 3600
    assert b'<html lang="en" data-theme="dark">' in reviewer_client.get(reverse("dashboard:overview")).content
    assert reviewer_client.post(reverse("dashboard:theme"), {"theme": "pink"}).status_code == 400
    off_site = reviewer_client.post(
        reverse("dashboard:theme"), {"theme": "light", "next": "https://evil.example/"}
    )
    assert off_site["Location"] == "/"


def test_a_review_decision_answers_with_its_result(reviewer_client, history):
    proposal = history["proposal"]
    response = reviewer_client.post(
        reverse("dashboard:review-decide", args=[proposal.pk]),
        {
            "decision": "edit",
            "text": "The user prefers dark slides",
            "key": "",
            "kind": "preference",
            "reason": "more precise",
            "back": "",
        },
        HTTP_ACCEPT="application/json",
    )
    body = json.loads(response.content)
    assert response.status_code == 200 and body["text"] == "The user prefers dark slides"
    assert body["result_id"] != proposal.pk and body["result_url"] == f"/memories/{body['result_id']}/"
    assert body["waiting"] == 0


def test_a_reject_echoes_its_reason(reviewer_client, project_scope):
    from governance.services.memory import memory_propose

    memory = remember(project_scope, "A guess", status="candidate")
    memory_propose(memory_id=memory.pk, actor=None)
    body = json.loads(
        reviewer_client.post(
            reverse("dashboard:review-decide", args=[memory.pk]),
            {"decision": "reject", "reason": "not what the user said"},
            HTTP_ACCEPT="application/json",
        ).content
    )
    assert body["reason"] == "not what the user said" and body["status"] == "rejected"


def test_meaning_search_has_a_cut_off_the_reader_widens(owner_client, embedded):  # noqa: F811
    near, response = meaning(owner_client)
    reach = response.context["reach"]
    assert reach["name"] == "near" and all(
        m.similarity >= reach["best"] - 0.05 for m in response.context["rows"]
    )
    wide, _ = meaning(owner_client, reach="all")
    assert set(near) <= set(wide) and len(wide) == len(near) + reach["hidden"]
    page = response.content.decode()
    assert "Sorted by similarity" in page and "Written</a> ↓" not in page
    assert (
        owner_client.get(
            reverse("dashboard:memories"), {"mode": "meaning", "q": "x", "reach": "far"}
        ).status_code
        == 400
    )
