"""The administration pages: workspaces, the Members page (role matrix, add people, invitations, teams,
new scopes) and the scope settings page, with the session of each role, another workspace's, and none."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from governance.models import AuditEvent, Grant, Invitation, Role, Scope
from governance.permissions import FOUR_EYES_OFF_REASON, roles_at
from governance.selectors.members import workspace_members
from governance.services.grant_membership import group_member_add, team_create
from governance.services.principal import grant_add, principal_ensure, principal_for_user, user_ensure
from governance.services.scope import scope_ensure
from tests.memoryui.conftest import signed_in


@pytest.fixture
def admin_client(db):
    get_user_model().objects.create_superuser(username="sam", password="pw-sam-admin-1")
    return signed_in(type("P", (), {"name": "sam"}), "pw-sam-admin-1")


def test_pages_need_a_sign_in(project_scope):
    anonymous = Client()
    for url in ("/workspaces/", "/workspaces/acme/members/", f"/scopes/{project_scope.pk}/settings/"):
        response = anonymous.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_only_a_site_admin_is_offered_and_allowed_to_create_a_workspace(admin_client, owner_client):
    assert b'id="workspace-create"' not in owner_client.get("/workspaces/").content
    refused = owner_client.post("/workspaces/new/", {"slug": "mine", "name": "Mine"})
    assert refused.status_code == 403
    assert b'id="workspace-create"' in admin_client.get("/workspaces/").content
    created = admin_client.post("/workspaces/new/", {"slug": "mine", "name": "Mine"})
    assert created.status_code == 302 and created["Location"] == "/workspaces/mine/members/"
    page = admin_client.get("/workspaces/mine/members/")
    assert page.status_code == 200 and b'data-principal="sam"' in page.content


def test_the_matrix_shows_each_role_where_it_holds_and_why(owner_client, owner, reviewer, project_scope):
    team = team_create(name="designers", actor=owner)
    grant_add(principal=team, scope=project_scope, role=Role.CURATOR, actor=owner)
    group_member_add(group=team, member=user_ensure(username="nina", actor=None), actor=owner)
    html = owner_client.get("/workspaces/acme/members/").content.decode()
    row = re.search(r'data-principal="nina">(.*?)</tr>', html, re.S).group(1)
    assert 'title="curator: team designers"' in row and "read · propose · confirm · revoke" in row
    rami = re.search(r'data-principal="rami">(.*?)</tr>', html, re.S).group(1)
    assert '<td data-scope="acme" ><span class="muted">—</span>' in rami.replace("\n", "")
    assert "read · propose · confirm" in rami and "administer" not in rami
    olivia = re.search(r'data-principal="olivia">(.*?)</tr>', html, re.S).group(1)
    assert 'title="owner: from acme"' in olivia and "administer" in olivia


def test_a_reviewer_sees_its_own_subtree_and_no_admin_forms(reviewer_client):
    page = reviewer_client.get("/workspaces/acme/members/")
    assert page.status_code == 200
    assert b'id="add-member"' not in page.content and b'id="invite"' not in page.content
    assert b'data-scope="acme"' not in page.content and b'data-scope="acme/slides"' in page.content


def test_another_workspace_is_the_same_404_as_an_unknown_one(outsider_client, project_scope):
    assert outsider_client.get("/workspaces/acme/members/").status_code == 404
    assert outsider_client.get("/workspaces/nope/members/").status_code == 404
    assert outsider_client.get(f"/scopes/{project_scope.pk}/settings/").status_code == 404
    assert (
        outsider_client.post(
            "/workspaces/acme/members/add/", {"principal": "otto", "grant_scope": "acme", "role": "owner"}
        ).status_code
        == 404
    )


def test_an_owner_adds_a_colleague_as_reviewer_with_the_picker(owner_client, project_scope):
    colleague = user_ensure(username="carl", actor=None)
    page = owner_client.get("/workspaces/acme/members/").content.decode()
    assert '<option value="carl">user</option>' in page
    done = owner_client.post(
        "/workspaces/acme/members/add/",
        {"principal": "carl", "grant_scope": "acme/slides", "role": "reviewer"},
    )
    assert done.status_code == 302
    assert roles_at(colleague, project_scope) == {Role.REVIEWER}


def test_a_reviewer_cannot_add_members(reviewer_client, project_scope):
    user_ensure(username="carl", actor=None)
    refused = reviewer_client.post(
        "/workspaces/acme/members/add/", {"principal": "carl", "grant_scope": "acme/slides", "role": "viewer"}
    )
    assert refused.status_code == 403 and not Grant.objects.filter(principal__name="carl").exists()


def test_an_invitation_link_is_shown_once_and_creates_the_account(owner_client, project_scope):
    page = owner_client.post(
        "/workspaces/acme/invitations/",
        {"invite_scope": "acme/slides", "role": "viewer", "note": "Pat", "days": "3"},
        follow=True,
    )
    assert page.status_code == 200 and page.redirect_chain[0][1] == 302
    link = re.search(r'value="(http://testserver/invite/[^"]+/)"', page.content.decode()).group(1)
    assert link.rsplit("/", 2)[1] not in Invitation.objects.get().token_hash
    anonymous = Client()
    assert b"viewer" in anonymous.get(link).content
    created = anonymous.post(link, {"username": "pat", "password": "a-long-enough-passphrase"})
    assert created.status_code == 302 and created["Location"] == "/accounts/login/"
    assert anonymous.login(username="pat", password="a-long-enough-passphrase")
    assert anonymous.get(link).status_code == 410


def test_an_owner_opens_a_scope_and_creates_a_team(owner_client, owner):
    assert owner_client.post("/workspaces/acme/scopes/", {"parent": "acme", "name": "web"}).status_code == 302
    assert Scope.objects.filter(path="acme/web").exists()
    assert owner_client.post("/workspaces/acme/teams/", {"team": "web-team"}).status_code == 302
    assert (
        owner_client.post(
            "/workspaces/acme/teams/members/", {"team": "web-team", "member": "olivia"}
        ).status_code
        == 302
    )
    assert principal_ensure(name="web-team", kind="group", actor=None).members.filter(pk=owner.pk).exists()


def test_scope_settings_by_role(owner_client, reviewer_client, four_eyes_scope):
    url = f"/scopes/{four_eyes_scope.pk}/settings/"
    assert b'id="settings"' not in reviewer_client.get(url).content
    assert (
        reviewer_client.post(url + "change/", {"action": "settings", "agent_write": "none"}).status_code
        == 403
    )
    page = owner_client.get(url)
    assert page.status_code == 200 and b'id="settings"' in page.content and b'id="retention"' in page.content
    silent = owner_client.post(url + "change/", {"action": "settings", "agent_write": "propose"})
    assert silent.status_code == 400 and FOUR_EYES_OFF_REASON in silent.content.decode()
    four_eyes_scope.refresh_from_db()
    assert four_eyes_scope.require_two_reviewers is True


def test_scope_settings_page_saves_retention_rename_and_archive(owner_client, owner, project_scope):
    url = f"/scopes/{project_scope.pk}/settings/change/"
    assert (
        owner_client.post(
            url, {"action": "retention", "enabled": "on", "retire_unused_days": "30", "kinds": ["semantic"]}
        ).status_code
        == 302
    )
    assert project_scope.retention_policy.retire_unused_days == 30
    assert (
        owner_client.post(
            url,
            {"action": "retention", "enabled": "on", "turns_max_age_days": "90", "turns_max_count": "2000"},
        ).status_code
        == 302
    )
    project_scope.retention_policy.refresh_from_db()
    policy = project_scope.retention_policy
    assert (policy.turns_max_age_days, policy.turns_max_count, policy.archive_turns) == (90, 2000, False)
    assert (
        b'name="turns_max_count" type="number" min="1" value="2000"'
        in owner_client.get(f"/scopes/{project_scope.pk}/settings/").content
    )
    assert owner_client.post(url, {"action": "retention", "turns_max_count": "many"}).status_code == 400
    assert owner_client.post(url, {"action": "rename", "name": "decks"}).status_code == 302
    assert owner_client.post(url, {"action": "archive", "reason": "done"}).status_code == 302
    project_scope.refresh_from_db()
    assert project_scope.path == "acme/decks" and project_scope.archived_at is not None
    assert AuditEvent.objects.filter(action__in=["scope.rename", "scope.archive"], actor=owner).count() == 2
    bad = owner_client.post(url, {"action": "retention", "retire_unused_days": "soon"})
    assert bad.status_code == 400


def test_members_selector_query_count_does_not_grow_with_people(owner, project_scope):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def count() -> int:
        principal = principal_for_user(get_user_model().objects.get(username="olivia"))
        with CaptureQueriesContext(connection) as queries:
            workspace_members(principal, project_scope.workspace)
        return len(queries)

    team = team_create(name="all", actor=owner)
    grant_add(principal=team, scope=project_scope, role=Role.VIEWER, actor=None)
    few = count()
    for i in range(12):
        person = user_ensure(username=f"p{i}", actor=None)
        grant_add(
            principal=person,
            scope=scope_ensure(path=f"acme/slides/t{i}", actor=None),
            role=Role.VIEWER,
            actor=None,
        )
        group_member_add(group=team, member=person, actor=owner)
    many = count()
    assert many == few <= 10
    assert len(workspace_members(owner, project_scope.workspace).rows) >= 13


def test_djangos_admin_site_is_switched_off(admin_client):
    assert admin_client.get("/admin/").status_code == 404


def test_a_team_member_is_removed_from_the_members_page_and_a_reviewer_cannot(
    owner_client, reviewer_client, owner, project_scope
):
    team = team_create(name="designers", actor=owner)
    grant_add(principal=team, scope=project_scope, role=Role.CURATOR, actor=owner)
    nina = user_ensure(username="nina", actor=None)
    group_member_add(group=team, member=nina, actor=owner)
    form = {"team": "designers", "member": "nina"}
    assert reviewer_client.post("/workspaces/acme/teams/members/remove/", form).status_code == 403
    assert owner_client.post("/workspaces/acme/teams/members/remove/", form).status_code == 302
    assert roles_at(nina, project_scope) == set()
    assert AuditEvent.objects.filter(action="group.member_remove", actor=owner).exists()
