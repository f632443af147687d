"""A grant (or an API token) is revoked only with a reason, and the rule is grant_revoke's (token_revoke's): the dashboard's confirm page and
the API's DELETE grants/{id} refuse an empty one with the same 400 and sentence, and keep the grant. Only
an owner over the grant's scope gets that far: every other role, another workspace's owner and a visitor
who is not signed in are refused before the reason is looked at, reason or not, and change nothing."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from governance.models import ApiToken, AuditEvent, Grant, Role
from governance.services.principal import (
    GRANT_REVOKE_REASON_REQUIRED,
    TOKEN_REVOKE_REASON_REQUIRED,
    grant_add,
    token_issue,
    user_ensure,
)
from memoryui.views.governance import REVOKE_REASON_REQUIRED
from tests.conftest import token_client
from tests.memoryui.conftest import signed_in

REVOKE = "/governance/grants/revoke/"
CHINESE_REASON = "项目结束，维克离开团队"

# Who asks, and what each is answered when it asks to revoke a viewer's grant in the project scope, with
# or without a reason: the owner gets as far as the reason; the others never do.
DASHBOARD_REFUSALS = {"curator": 403, "reviewer": 403, "reader": 403, "outsider": 404}
API_REFUSALS = {"curator": 403, "reviewer": 403, "reader": 403, "agent": 403, "outsider": 404}


@pytest.fixture
def reader(project_scope):
    principal = user_ensure(username="rhea", password="pw-rhea", actor=None)
    grant_add(principal=principal, scope=project_scope, role=Role.VIEWER, actor=None)
    return principal


@pytest.fixture
def target(project_scope, owner):
    """The grant everyone tries to revoke: a viewer's, given by the workspace's owner."""
    vic = user_ensure(username="vic", password="pw-vic", actor=None)
    return grant_add(principal=vic, scope=project_scope, role=Role.VIEWER, actor=owner)


PASSWORDS = {"curator": "pw-cora", "reviewer": "pw-rami", "reader": "pw-rhea", "outsider": "pw-otto"}


def _revoke_events() -> int:
    return AuditEvent.objects.filter(action="grant.revoke").count()


def test_the_rule_and_its_sentence_are_the_services():
    assert REVOKE_REASON_REQUIRED == GRANT_REVOKE_REASON_REQUIRED


@pytest.mark.parametrize("reason", ["", "   ", "\t\n"])
def test_the_dashboard_refuses_an_owner_an_empty_reason_and_keeps_the_grant(owner_client, target, reason):
    answer = owner_client.post(REVOKE, {"grant": target.pk, "reason": reason})
    assert answer.status_code == 400 and REVOKE_REASON_REQUIRED.encode() in answer.content
    assert Grant.objects.filter(pk=target.pk).exists() and _revoke_events() == 0


@pytest.mark.parametrize("reason", ["", "   "])
def test_the_api_refuses_an_owner_an_empty_reason_with_the_same_sentence(owner, target, reason):
    answer = token_client(owner).delete(f"/api/v1/grants/{target.pk}", {"reason": reason}, format="json")
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "invalid_input",
        "message": GRANT_REVOKE_REASON_REQUIRED,
        "field": "reason",
    }
    assert Grant.objects.filter(pk=target.pk).exists() and _revoke_events() == 0


def test_the_api_refuses_a_delete_with_no_body_at_all(owner, target):
    answer = token_client(owner).delete(f"/api/v1/grants/{target.pk}")
    assert answer.status_code == 400 and answer.json()["field"] == "reason"
    assert Grant.objects.filter(pk=target.pk).exists()


@pytest.mark.parametrize("reason", ["left the project", CHINESE_REASON])
def test_an_owner_revokes_with_a_reason_in_either_place_and_the_audit_keeps_it(
    owner, owner_client, target, reason
):
    answer = owner_client.post(REVOKE, {"grant": target.pk, "reason": f"  {reason} "})
    assert answer.status_code == 302 and not Grant.objects.filter(pk=target.pk).exists()
    assert AuditEvent.objects.get(action="grant.revoke").reason == reason
    again = grant_add(principal=target.principal, scope=target.scope, role=Role.VIEWER, actor=owner)
    api = token_client(owner).delete(f"/api/v1/grants/{again.pk}", {"reason": reason}, format="json")
    assert api.status_code == 204 and not Grant.objects.filter(pk=again.pk).exists()
    assert list(AuditEvent.objects.filter(action="grant.revoke").values_list("reason", flat=True)) == [
        reason,
        reason,
    ]


@pytest.mark.parametrize("who", sorted(DASHBOARD_REFUSALS))
@pytest.mark.parametrize("reason", ["", "she moved team", CHINESE_REASON])
def test_other_roles_and_workspaces_are_refused_on_the_dashboard_reason_or_not(
    request, who, reason, target, reader
):
    client = signed_in(request.getfixturevalue(who), PASSWORDS[who])
    asked = client.get(REVOKE, {"grant": target.pk})
    posted = client.post(REVOKE, {"grant": target.pk, "reason": reason})
    assert (asked.status_code, posted.status_code) == (DASHBOARD_REFUSALS[who],) * 2
    assert REVOKE_REASON_REQUIRED.encode() not in posted.content  # refused before the reason is read
    assert Grant.objects.filter(pk=target.pk).exists() and _revoke_events() == 0


@pytest.mark.parametrize("who", sorted(API_REFUSALS))
@pytest.mark.parametrize("reason", ["", CHINESE_REASON])
def test_other_roles_and_workspaces_are_refused_by_the_api_reason_or_not(
    request, who, reason, target, reader
):
    answer = token_client(request.getfixturevalue(who)).delete(
        f"/api/v1/grants/{target.pk}", {"reason": reason}, format="json"
    )
    assert answer.status_code == API_REFUSALS[who]
    assert answer.json().get("field") != "reason"
    assert Grant.objects.filter(pk=target.pk).exists() and _revoke_events() == 0


def test_a_visitor_not_signed_in_is_sent_to_sign_in_or_refused(target):
    page = Client().post(REVOKE, {"grant": target.pk, "reason": "x"})
    assert page.status_code == 302 and "/accounts/login/" in page["Location"]
    api = Client().delete(f"/api/v1/grants/{target.pk}", {"reason": "x"}, content_type="application/json")
    assert api.status_code == 401
    assert Grant.objects.filter(pk=target.pk).exists()


def test_on_an_empty_installation_a_revoke_finds_nothing_to_revoke(db):
    nobody = user_ensure(username="nia", password="pw-nia", actor=None)  # no grant anywhere
    client = signed_in(nobody, "pw-nia")
    assert client.get(REVOKE, {"grant": 1}).status_code == 404
    assert client.post(REVOKE, {"grant": 1, "reason": ""}).status_code == 404
    assert token_client(nobody).delete("/api/v1/grants/1", {"reason": ""}, format="json").status_code == 404


# --- API tokens: the same rule, token_revoke's ----------------------------------------------------------


@pytest.fixture
def agent_token(agent, project_scope):
    """The agent's token, bound to the project scope (so its owners may revoke it)."""
    token_issue(principal=agent, actor=None, scope=project_scope, max_role=Role.AGENT)
    return ApiToken.objects.get(principal=agent)


def _active(token) -> bool:
    return ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).exists()


def test_a_token_revoke_without_a_reason_is_the_same_400_on_the_dashboard_and_the_api(
    owner, owner_client, agent_token
):
    page = owner_client.post("/governance/tokens/revoke/", {"token": agent_token.pk, "reason": " "})
    assert page.status_code == 400 and TOKEN_REVOKE_REASON_REQUIRED.encode() in page.content
    api = token_client(owner).delete(f"/api/v1/tokens/{agent_token.pk}", {"reason": ""}, format="json")
    assert api.status_code == 400
    assert api.json() == {
        "error": "invalid_input",
        "message": TOKEN_REVOKE_REASON_REQUIRED,
        "field": "reason",
    }
    assert _active(agent_token) and not AuditEvent.objects.filter(action="token.revoke").exists()


@pytest.mark.parametrize("who, status", [("reviewer", 403), ("curator", 403), ("outsider", 404)])
def test_who_may_not_revoke_a_token_is_refused_before_its_reason_is_read(request, who, status, agent_token):
    for reason in ("", CHINESE_REASON):
        answer = token_client(request.getfixturevalue(who)).delete(
            f"/api/v1/tokens/{agent_token.pk}", {"reason": reason}, format="json"
        )
        assert answer.status_code == status and answer.json().get("field") != "reason"
    assert _active(agent_token)


def test_an_agent_revokes_its_own_token_saying_why(agent, agent_token):
    own = APIClient()
    own.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(principal=agent, actor=None)}")
    assert own.delete(f"/api/v1/tokens/{agent_token.pk}", {}, format="json").status_code == 400
    assert (
        own.delete(f"/api/v1/tokens/{agent_token.pk}", {"reason": CHINESE_REASON}, format="json").status_code
        == 204
    )
    assert not _active(agent_token)
    assert AuditEvent.objects.get(action="token.revoke").reason == CHINESE_REASON
