"""Issue 10, part 3: a token acts only within what it was issued for (a scope subtree and a highest role),
and within its principal's grants as they are now; it expires, dies with its user, and can be listed and
revoked by its own principal or an owner over its scope."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from governance.errors import AgentRoleCap
from governance.models import ApiToken, Grant, Memory, Principal, Role, Status
from governance.services.grant_membership import group_member_add
from governance.services.principal import grant_add, principal_ensure, token_issue, user_ensure
from tests.conftest import token_client
from tests.security.conftest import client_with


def _issue(issuer, agent, scope, role, **extra):
    return token_client(issuer).post(
        "/api/v1/tokens", {"principal": agent.name, "scope": scope.path, "role": role, **extra}, format="json"
    )


def test_a_grant_added_after_issue_never_widens_the_token(
    owner, agent, project_scope, sibling_scope, remember
):
    issued = _issue(owner, agent, project_scope, Role.AGENT)
    assert issued.status_code == 201
    as_agent = client_with(issued.json()["token"])
    proposal = remember(project_scope, "Slides use 16:9", status="proposed")
    elsewhere = remember(sibling_scope, "Payments settle on Fridays")
    # Later, someone gives the agent more: a grant in a sibling scope (a reviewer role in its own scope is
    # refused outright now: an agent holds at most the agent role, issue 20).
    with pytest.raises(AgentRoleCap):
        grant_add(principal=agent, scope=project_scope, role=Role.REVIEWER, actor=None)
    grant_add(principal=agent, scope=sibling_scope, role=Role.VIEWER, actor=None)

    confirm = as_agent.post(f"/api/v1/memories/{proposal.pk}/confirm", {"reason": "ok"}, format="json")
    assert confirm.status_code == 403
    assert as_agent.get(f"/api/v1/memories/{elsewhere.pk}").status_code == 404
    assert (
        as_agent.post(f"/api/v1/memories/{elsewhere.pk}/retire", {"reason": "x"}, format="json").status_code
        == 404
    )
    assert Memory.objects.get(pk=proposal.pk).status == Status.PROPOSED
    assert Memory.objects.get(pk=elsewhere.pk).status == Status.ACTIVE
    # What the bound allows still works.
    assert as_agent.get(f"/api/v1/memories/{proposal.pk}").status_code == 200


def test_a_group_joined_after_issue_never_widens_the_token(owner, agent, project_scope, remember):
    issued = _issue(owner, agent, project_scope, Role.AGENT)
    as_agent = client_with(issued.json()["token"])
    curators = principal_ensure(name="slides-curators", kind="group", actor=None)
    grant_add(principal=curators, scope=project_scope, role=Role.CURATOR, actor=None)
    agent.groups.add(curators)
    memory = remember(project_scope, "Decks end with a summary slide")
    response = as_agent.post(f"/api/v1/memories/{memory.pk}/retire", {"reason": "stale"}, format="json")
    assert response.status_code == 403
    assert Memory.objects.get(pk=memory.pk).status == Status.ACTIVE


def test_a_grant_removed_after_issue_narrows_the_token_at_once(owner, agent, project_scope):
    as_agent = client_with(_issue(owner, agent, project_scope, Role.AGENT).json()["token"])
    body = {"scope": project_scope.path, "query": "anything", "budget_tokens": 200}
    assert as_agent.post("/api/v1/recall", body, format="json").status_code == 200
    Grant.objects.filter(principal=agent).delete()
    assert as_agent.post("/api/v1/recall", body, format="json").status_code == 404


def test_the_issue_check_counts_the_agents_group_grants(project_scope, workspace_scope, agent, remember):
    """A project owner may issue a token for an agent whose team holds more above the project: the token is
    bound to the project and the role asked for, so the team's curator role on the workspace never reaches it."""
    project_owner = user_ensure(username="pia", password="pw", actor=None)
    grant_add(principal=project_owner, scope=project_scope, role=Role.OWNER, actor=None)
    team = principal_ensure(name="ops-team", kind="group", actor=None)
    grant_add(principal=team, scope=workspace_scope, role=Role.CURATOR, actor=None)
    agent.groups.add(team)
    issued = _issue(project_owner, agent, project_scope, Role.AGENT)
    assert issued.status_code == 201
    above = remember(workspace_scope, "The company font is Inter")
    response = client_with(issued.json()["token"]).post(
        f"/api/v1/memories/{above.pk}/retire", {"reason": "x"}, format="json"
    )
    assert response.status_code in (403, 404)
    assert Memory.objects.get(pk=above.pk).status == Status.ACTIVE


def test_issuing_never_exceeds_the_issuers_own_role_there(project_scope, workspace_scope, agent, curator):
    project_owner = user_ensure(username="pia", password="pw", actor=None)
    owners = principal_ensure(name="slides-owners", kind="group", actor=None)
    grant_add(principal=owners, scope=project_scope, role=Role.OWNER, actor=None)
    group_member_add(group=owners, member=project_owner, actor=None)  # owner through a group only
    assert _issue(project_owner, agent, project_scope, Role.AGENT).status_code == 201
    assert _issue(project_owner, agent, workspace_scope, Role.AGENT).status_code == 404  # above its grant
    assert _issue(curator, agent, project_scope, Role.AGENT).status_code == 403  # not an owner
    assert ApiToken.objects.filter(principal=agent).count() == 1


def test_an_expired_token_is_refused_with_a_clear_401(owner, agent, project_scope):
    from governance.api.auth import TOKEN_EXPIRED

    soon = timezone.now() + timedelta(hours=1)
    issued = _issue(owner, agent, project_scope, Role.AGENT, expires_at=soon.isoformat())
    assert issued.status_code == 201
    client = client_with(issued.json()["token"])
    assert client.get("/api/v1/memories").status_code == 200
    ApiToken.objects.filter(principal=agent).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client.get("/api/v1/memories")
    assert response.status_code == 401 and response.json()["message"] == TOKEN_EXPIRED


def test_an_expiry_in_the_past_is_refused_at_issue(owner, agent, project_scope):
    response = _issue(
        owner, agent, project_scope, Role.AGENT, expires_at=(timezone.now() - timedelta(days=1)).isoformat()
    )
    assert response.status_code == 400 and response.json()["field"] == "expires_at"
    assert not ApiToken.objects.filter(principal=agent).exists()


def test_a_deactivated_users_token_is_refused_with_401(reviewer):
    from governance.api.auth import TOKEN_USER_INACTIVE

    client = token_client(reviewer)
    assert client.get("/api/v1/memories").status_code == 200
    reviewer.user.is_active = False
    reviewer.user.save(update_fields=["is_active"])
    response = client.get("/api/v1/memories")
    assert response.status_code == 401 and response.json()["message"] == TOKEN_USER_INACTIVE


def test_create_token_refuses_a_name_held_by_a_principal_of_another_kind(reviewer, project_scope):
    from governance.services.principal import PRINCIPAL_KIND_TAKEN

    with pytest.raises(CommandError) as exc:
        call_command(
            "create_token",
            reviewer.name,
            "--scope",
            "acme/slides",
            "--role",
            "owner",
            stdout=StringIO(),
            stderr=StringIO(),
        )
    assert str(exc.value) == PRINCIPAL_KIND_TAKEN.format(name=reviewer.name, kind="user")
    assert not ApiToken.objects.filter(principal=reviewer).exists()
    assert set(Grant.objects.filter(principal=reviewer).values_list("role", flat=True)) == {Role.REVIEWER}
    assert Principal.objects.filter(name=reviewer.name).count() == 1


def test_create_token_binds_the_token_to_its_scope_and_role(db):
    out = StringIO()
    call_command(
        "create_token",
        "bot",
        "--kind",
        "user",
        "--scope",
        "neo/alpha",
        "--role",
        "reviewer",
        "--expires-in-days",
        "3",
        stdout=out,
        stderr=StringIO(),
    )
    token = ApiToken.objects.select_related("scope").get(principal__name="bot")
    assert (token.scope.path, token.max_role) == ("neo/alpha", "reviewer")
    assert timedelta(days=2, hours=23) < token.expires_at - timezone.now() <= timedelta(days=3)


def test_tokens_are_listed_and_revoked_by_their_principal_or_an_owner_of_their_scope(
    owner,
    reviewer,
    outsider,
    agent,
    project_scope,
):
    first = _issue(owner, agent, project_scope, Role.AGENT).json()["token"]
    second = _issue(owner, agent, project_scope, Role.AGENT).json()["token"]
    ids = sorted(ApiToken.objects.filter(principal=agent).values_list("pk", flat=True))
    listed = token_client(owner).get("/api/v1/tokens").json()
    assert set(ids) <= {t["id"] for t in listed}
    assert {t["scope"] for t in listed if t["id"] in ids} == {project_scope.path}
    assert not {t["id"] for t in token_client(outsider).get("/api/v1/tokens").json()} & set(ids)
    # The agent revokes its own first token, with that token; an outsider and a reviewer may not revoke.
    assert (
        client_with(first)
        .delete(f"/api/v1/tokens/{ids[0]}", {"reason": "rotated"}, format="json")
        .status_code
        == 204
    )
    assert client_with(first).get("/api/v1/memories").status_code == 401
    assert token_client(outsider).delete(f"/api/v1/tokens/{ids[1]}").status_code == 404
    assert token_client(reviewer).delete(f"/api/v1/tokens/{ids[1]}").status_code == 403
    assert client_with(second).get("/api/v1/memories").status_code == 200
    assert (
        token_client(owner)
        .delete(f"/api/v1/tokens/{ids[1]}", {"reason": "代理已停用"}, format="json")
        .status_code
        == 204
    )
    assert client_with(second).get("/api/v1/memories").status_code == 401


def test_the_dashboard_lists_and_revokes_tokens_its_user_owns(owner, agent, project_scope):
    from django.test import Client

    raw = token_issue(principal=agent, scope=project_scope, max_role=Role.AGENT, actor=owner)
    token = ApiToken.objects.get(principal=agent)
    browser = Client()
    assert browser.login(username=owner.name, password="pw-olivia")
    page = browser.get("/governance/grants/")
    assert token in page.context["tokens"]
    # Revoking asks for a reason, as revoking a grant does (issue 22): without one nothing is revoked.
    assert browser.post("/governance/tokens/revoke/", {"token": token.pk}).status_code == 400
    assert client_with(raw).get("/api/v1/memories").status_code == 200
    response = browser.post("/governance/tokens/revoke/", {"token": token.pk, "reason": "agent retired"})
    assert response.status_code == 302
    assert client_with(raw).get("/api/v1/memories").status_code == 401


def test_authenticating_a_bound_token_is_still_one_query(
    owner, agent, project_scope, django_assert_num_queries
):
    from rest_framework.test import APIRequestFactory

    from governance.api.auth import TokenAuthentication
    from governance.permissions import bound_of

    raw = token_issue(principal=agent, scope=project_scope, max_role=Role.AGENT, actor=owner)
    ApiToken.objects.update(last_used_at=timezone.now())  # no use to record: only the lookup is counted
    request = APIRequestFactory().get("/api/v1/memories", HTTP_AUTHORIZATION=f"Token {raw}")
    with django_assert_num_queries(1):
        user, token = TokenAuthentication().authenticate(request)
    bound = bound_of(token.principal)
    assert bound is not None and bound.tree == str(project_scope.tree) and bound.max_role == Role.AGENT
