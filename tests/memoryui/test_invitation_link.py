"""An invitation link is shown once, on the page after the POST (POST-redirect-GET), with a copy button;
a reload of that page makes no second invitation and shows the link no more; the raw token reaches no URL,
no later page and no cache, and only its hash is stored."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from governance.models import Invitation
from governance.services.invitation import BAD_DAYS
from memoryui.forms.administration import BAD_ROLE
from memoryui.views.administration import INVITATION_LINKS

CREATE = "/workspaces/acme/invitations/"


def _create(client, **extra):
    data = {"invite_scope": "acme/slides", "role": "reviewer", "note": "Pat", "days": "7", **extra}
    return client.post(CREATE, data)


def test_the_link_is_shown_once_after_a_redirect_and_a_reload_makes_no_second_one(
    owner_client, project_scope
):
    made = _create(owner_client)
    invitation = Invitation.objects.get()
    assert (
        made.status_code == 302 and made["Location"] == f"/workspaces/acme/members/?invited={invitation.pk}"
    )
    first = owner_client.get(made["Location"])
    html = first.content.decode()
    link = re.search(r'id="invitation-url" readonly value="(http://testserver/invite/([^"/]+)/)"', html)
    raw = link.group(2)
    assert Invitation.hash(raw) == invitation.token_hash and raw not in invitation.token_hash
    assert 'data-copy="invitation-url"' in html and ">Copy link</button>" in html
    assert 'role="status"' in html and "js/copy" in html
    assert "no-store" in first["Cache-Control"]
    assert INVITATION_LINKS not in owner_client.session  # nothing of the token waits anywhere now
    again = owner_client.get(made["Location"])  # the reload
    assert Invitation.objects.count() == 1
    html = again.content.decode()
    assert raw not in html and 'id="invitation-url"' not in html
    assert 'id="invitation-shown-once"' in html and "was shown once" in html
    assert f'data-invitation="{invitation.pk}"' in html  # listed among the open ones, with Withdraw
    assert "Withdraw the invitation" in html


def test_the_note_in_chinese_heads_the_link_card(owner_client, project_scope):
    made = _create(owner_client, note="给小王的邀请")
    html = owner_client.get(made["Location"]).content.decode()
    assert "Invitation link for 给小王的邀请" in html


@pytest.mark.parametrize(
    "field,value,message",
    [("days", "31", BAD_DAYS), ("days", "soon", BAD_DAYS), ("role", "emperor", BAD_ROLE)],
)
def test_bad_input_is_refused_by_the_form_and_creates_nothing(
    owner_client, project_scope, field, value, message
):
    refused = _create(owner_client, **{field: value})
    assert refused.status_code == 400 and message in refused.content.decode()
    assert not Invitation.objects.exists()


def test_a_reviewer_is_refused_and_another_workspace_is_not_found(
    reviewer_client, outsider_client, owner, project_scope
):
    assert _create(reviewer_client, role="viewer").status_code == 403
    assert _create(outsider_client, role="viewer").status_code == 404
    assert not Invitation.objects.exists()


def test_anonymous_is_sent_to_sign_in_and_nothing_is_made(project_scope):
    response = _create(Client())
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not Invitation.objects.exists()


def test_another_person_following_the_url_sees_neither_link_nor_invitation(
    owner_client, reviewer_client, project_scope
):
    made = _create(owner_client)
    invitation = Invitation.objects.get()
    html = reviewer_client.get(made["Location"]).content.decode()
    assert 'id="invitation-link"' not in html and invitation.prefix not in html
    # and the owner still gets the one showing: the link waits in the owner's own session only
    assert 'id="invitation-url"' in owner_client.get(made["Location"]).content.decode()


def test_the_invitation_page_sends_no_referrer_and_is_not_cached(owner_client, project_scope):
    made = _create(owner_client)
    html = owner_client.get(made["Location"]).content.decode()
    link = re.search(r'value="http://testserver(/invite/[^"]+/)"', html).group(1)
    page = Client().get(link)
    assert page.status_code == 200 and page["Referrer-Policy"] == "no-referrer"
    assert "no-store" in page["Cache-Control"]
