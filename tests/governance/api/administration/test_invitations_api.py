"""Invitations: a one-time link with expiry, stored hashed, that creates the user with the invited role;
sent by whoever may grant that role there."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from governance.errors import InvitationInvalid
from governance.models import AuditEvent, Invitation, Role
from governance.permissions import roles_at
from governance.services.principal import grant_revoke
from tests.conftest import token_client


def _invite(client, scope="acme/slides", role="reviewer", **extra):
    return client.post(
        "/api/v1/invitations",
        {"scope": scope, "role": role, "note": "Pat from design", **extra},
        format="json",
    )


def _accept(client, token, username="pat", password="a-long-enough-passphrase"):
    return client.post(
        "/api/v1/invitations/accept",
        {"token": token, "username": username, "password": password},
        format="json",
    )


def test_an_invitation_creates_the_user_with_the_role_once(owner, project_scope, anonymous):
    sent = _invite(token_client(owner))
    assert sent.status_code == 201, sent.content
    raw = sent.json()["token"]
    assert sent.json()["link"] == f"/invite/{raw}/"
    stored = Invitation.objects.get()
    assert stored.token_hash == Invitation.hash(raw) and raw not in (stored.token_hash, stored.prefix + "x")
    accepted = _accept(anonymous, raw)
    assert accepted.status_code == 201, accepted.content
    assert accepted.json() == {"principal": "pat", "scope": "acme/slides", "role": "reviewer"}
    pat = get_user_model().objects.get(username="pat")
    assert pat.check_password("a-long-enough-passphrase") and not pat.is_superuser
    assert roles_at(pat.principal, project_scope) == {Role.REVIEWER}
    event = AuditEvent.objects.get(action="invitation.accept")
    assert event.actor_id == pat.principal.pk and event.data["invited_by"] == "olivia"
    again = _accept(anonymous, raw, username="pat2")
    assert again.status_code == 410 and again.json() == InvitationInvalid().as_dict()


def test_expired_revoked_and_unknown_links_get_one_answer(owner, project_scope, anonymous):
    client = token_client(owner)
    expired = _invite(client).json()
    Invitation.objects.filter(pk=expired["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    revoked = _invite(client).json()
    assert client.delete(f"/api/v1/invitations/{revoked['id']}").status_code == 204
    answers = [_accept(anonymous, t) for t in (expired["token"], revoked["token"], "no-such-token")]
    assert {a.status_code for a in answers} == {410} and len({str(a.json()) for a in answers}) == 1
    assert not get_user_model().objects.filter(username="pat").exists()


def test_a_link_does_not_outlive_its_senders_right_to_grant(owner, project_scope, anonymous):
    from governance.services.principal import grant_add, user_ensure

    deputy = user_ensure(username="dee", actor=None)
    grant = grant_add(principal=deputy, scope=project_scope, role=Role.OWNER, actor=None)
    raw = _invite(token_client(deputy)).json()["token"]
    grant_revoke(grant_id=grant.pk, actor=owner, reason="left the team")
    assert _accept(anonymous, raw).status_code == 410


def test_who_may_invite(owner, reviewer, curator, agent, outsider, anonymous, project_scope):
    for principal in (reviewer, curator, agent):
        assert _invite(token_client(principal)).status_code == 403
    foreign, unknown = _invite(token_client(outsider)), _invite(token_client(outsider), scope="acme/none")
    assert foreign.status_code == unknown.status_code == 404
    assert (
        anonymous.post(
            "/api/v1/invitations", {"scope": "acme/slides", "role": "viewer"}, format="json"
        ).status_code
        == 401
    )
    # Never above one's own role: an owner of a sub-scope may invite owners there, not elsewhere.
    assert _invite(token_client(owner), role="owner").status_code == 201
    assert [i["scope"] for i in token_client(owner).get("/api/v1/invitations").json()] == ["acme/slides"]
    assert token_client(outsider).get("/api/v1/invitations").json() == []


def test_a_taken_name_or_weak_password_is_refused_and_the_link_stays_usable(
    owner, reviewer, project_scope, anonymous
):
    raw = _invite(token_client(owner)).json()["token"]
    taken = _accept(anonymous, raw, username="rami")
    weak = _accept(anonymous, raw, password="123")
    assert (taken.status_code, taken.json()["error"]) == (409, "conflict")
    assert (weak.status_code, weak.json()["error"]) == (400, "invalid_input")
    assert _accept(anonymous, raw).status_code == 201
