"""Workspaces: created by site administrators only, with the creator as owner of the root; renamed by
its owners (a new short name rewrites every path); members as a role matrix."""

from __future__ import annotations

from governance.models import AuditEvent, Grant, Role, Scope, Workspace
from governance.permissions import WORKSPACE_CREATE_DENIED
from governance.services.grant_membership import group_member_add, team_create
from governance.services.principal import grant_add, principal_ensure, user_ensure
from tests.conftest import token_client


def test_a_site_admin_creates_a_workspace_and_owns_its_root(site_admin):
    response = token_client(site_admin).post("/api/v1/workspaces", {"slug": "initech", "name": "Initech"})
    assert response.status_code == 201, response.content
    root = Scope.objects.get(path="initech")
    assert root.parent_id is None and root.tree == str(root.pk) and root.workspace.name == "Initech"
    assert Grant.objects.filter(principal=site_admin, scope=root, role=Role.OWNER).exists()
    event = AuditEvent.objects.get(action="workspace.create", data__slug="initech")
    assert event.actor_id == site_admin.pk and event.data["owner"] == "sam"


def test_only_site_admins_create_workspaces(owner, reviewer, agent, outsider, anonymous):
    for principal in (owner, reviewer, agent, outsider):
        response = token_client(principal).post("/api/v1/workspaces", {"slug": "mine", "name": "Mine"})
        assert response.status_code == 403 and response.json()["message"] == WORKSPACE_CREATE_DENIED
    assert (
        anonymous.post("/api/v1/workspaces", {"slug": "mine", "name": "Mine"}, format="json").status_code
        == 401
    )
    assert not Workspace.objects.filter(slug="mine").exists()


def test_a_bound_token_of_a_site_admin_cannot_create_workspaces(site_admin, workspace_scope):
    from rest_framework.test import APIClient

    from governance.services.principal import token_issue

    grant_add(principal=site_admin, scope=workspace_scope, role=Role.OWNER, actor=None)
    client = APIClient()
    client.credentials(
        HTTP_AUTHORIZATION="Token "
        + token_issue(principal=site_admin, scope=workspace_scope, max_role=Role.OWNER, actor=site_admin)
    )
    assert (
        client.post("/api/v1/workspaces", {"slug": "mine", "name": "Mine"}, format="json").status_code == 403
    )


def test_an_existing_or_malformed_slug_is_refused_with_a_code(site_admin, workspace_scope):
    client = token_client(site_admin)
    taken = client.post("/api/v1/workspaces", {"slug": "acme", "name": "Again"})
    bad = client.post("/api/v1/workspaces", {"slug": "Not A Slug", "name": "x"})
    assert (taken.status_code, taken.json()["error"]) == (409, "conflict")
    assert (bad.status_code, bad.json()["error"]) == (400, "invalid_input")


def test_an_owner_renames_the_workspace_and_every_path_follows(owner, reviewer, project_scope):
    task = Scope.objects.create(
        workspace=project_scope.workspace, parent=project_scope, name="t1", path="acme/slides/t1"
    )
    task.tree = f"{project_scope.tree}.{task.pk}"
    task.save(update_fields=["tree"])
    assert token_client(reviewer).patch("/api/v1/workspaces/acme", {"name": "X"}).status_code == 403
    response = token_client(owner).patch(
        "/api/v1/workspaces/acme", {"slug": "acme-corp", "name": "Acme Corp"}
    )
    assert response.status_code == 200, response.content
    assert set(Scope.objects.filter(workspace__slug="acme-corp").values_list("path", flat=True)) == {
        "acme-corp",
        "acme-corp/slides",
        "acme-corp/slides/t1",
    }
    event = AuditEvent.objects.get(action="workspace.rename")
    assert event.data["old"]["slug"] == "acme" and event.data["new"]["slug"] == "acme-corp"
    # The reviewer's grant follows the scope row.
    assert token_client(reviewer).get("/api/v1/scopes").json()[0]["path"] == "acme-corp/slides"


def test_another_workspace_and_an_unknown_one_are_the_same_404(outsider, workspace_scope):
    foreign = token_client(outsider).get("/api/v1/workspaces/acme/members")
    unknown = token_client(outsider).get("/api/v1/workspaces/nope/members")
    assert foreign.status_code == unknown.status_code == 404 and foreign.json() == unknown.json()
    assert [w["slug"] for w in token_client(outsider).get("/api/v1/workspaces").json()] == ["globex"]


def test_members_show_inherited_and_team_roles_with_what_each_gives(owner, reviewer, project_scope):
    team = team_create(name="designers", actor=owner)
    grant_add(principal=team, scope=project_scope, role=Role.CURATOR, actor=owner)
    nina = user_ensure(username="nina", actor=None)
    group_member_add(group=team, member=nina, actor=owner)
    body = token_client(owner).get("/api/v1/workspaces/acme/members").json()
    assert body["scopes"] == ["acme", "acme/slides"]
    rows = {m["principal"]: {c["scope"]: c for c in m["scopes"]} for m in body["members"]}
    assert rows["olivia"]["acme/slides"]["via"] == ["owner: from acme"]
    assert rows["olivia"]["acme/slides"]["permissions"] == [
        "read",
        "propose",
        "confirm",
        "revoke",
        "administer",
    ]
    assert rows["rami"]["acme/slides"]["permissions"] == ["read", "propose", "confirm"]
    assert "acme" not in rows["rami"]
    assert rows["nina"]["acme/slides"]["via"] == ["curator: team designers"]
    assert rows["nina"]["acme/slides"]["permissions"] == ["read", "propose", "confirm", "revoke"]
    # The reviewer governs only acme/slides: its matrix has that column only.
    assert token_client(reviewer).get("/api/v1/workspaces/acme/members").json()["scopes"] == ["acme/slides"]


def test_teams_are_created_by_owners_only(owner, reviewer, agent, anonymous, workspace_scope):
    assert token_client(reviewer).post("/api/v1/teams", {"name": "x-team"}).status_code == 403
    assert token_client(agent).post("/api/v1/teams", {"name": "x-team"}).status_code == 403
    assert anonymous.post("/api/v1/teams", {"name": "x-team"}, format="json").status_code == 401
    created = token_client(owner).post("/api/v1/teams", {"name": "x-team"})
    assert created.status_code == 201 and created.json()["kind"] == "group"
    principal_ensure(name="taken", kind="agent", actor=None)
    assert token_client(owner).post("/api/v1/teams", {"name": "taken"}).status_code == 409
    added = token_client(owner).post("/api/v1/teams/x-team/members", {"member": "rami"})
    assert added.status_code == 204


def test_the_members_matrix_is_capped_and_narrowed_with_under(owner, project_scope):
    from governance.selectors.members import MATRIX_MAX_SCOPES
    from governance.services.scope import scope_ensure

    for i in range(MATRIX_MAX_SCOPES + 5):
        scope_ensure(path=f"acme/slides/t{i:03d}", actor=None)
    body = token_client(owner).get("/api/v1/workspaces/acme/members").json()
    assert len(body["scopes"]) == MATRIX_MAX_SCOPES and body["total_scopes"] == MATRIX_MAX_SCOPES + 7
    narrowed = token_client(owner).get("/api/v1/workspaces/acme/members?under=acme/slides/t001").json()
    assert narrowed["scopes"] == ["acme/slides/t001"] and narrowed["total_scopes"] == 1
    assert token_client(owner).get("/api/v1/workspaces/acme/members?under=globex").status_code == 404
