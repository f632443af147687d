"""Issue 20, the last finding: a team's name is unique within its workspace only. Two workspaces (acme:
olivia owns it, rami reviews acme/slides, slides-agent works there; globex: otto owns globex/slides) can
each have a team "ops"; each owner sees and manages only their own; a name resolves within the caller's
workspace (grants, team members, imports, sign-up); and a name another workspace holds answers as a free
one. A workspace's short name stays one address across the installation: its clash answer says "taken",
the same for every caller."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from governance.models import Grant, Principal, PrincipalKind, Role
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add, user_ensure
from tests.conftest import token_client
from tests.memoryui.conftest import signed_in


@pytest.fixture
def anonymous():
    from rest_framework.test import APIClient

    return APIClient()


def _ops(workspace_slug: str) -> Principal:
    return Principal.objects.get(name="ops", kind=PrincipalKind.GROUP, workspace__slug=workspace_slug)


@pytest.fixture
def two_ops(owner, outsider, project_scope, other_workspace_scope):
    """Each workspace's owner makes a team "ops" through the API."""
    for actor, slug in ((owner, "acme"), (outsider, "globex")):
        made = token_client(actor).post("/api/v1/teams", {"name": "ops"}, format="json")
        assert made.status_code == 201, made.content
        assert made.json()["workspace"] == slug
    return _ops("acme"), _ops("globex")


def test_two_workspaces_each_have_a_team_ops_and_a_second_one_in_the_same_workspace_is_taken(
    owner, outsider, two_ops
):
    acme_ops, globex_ops = two_ops
    assert acme_ops.pk != globex_ops.pk
    again = token_client(owner).post("/api/v1/teams", {"name": "ops"}, format="json")
    assert again.status_code == 409 and again.json()["field"] == "name", again.content
    # The database holds the rule too, whatever writes the row.
    with pytest.raises(IntegrityError), transaction.atomic():
        Principal.objects.create(kind=PrincipalKind.GROUP, name="ops", workspace=acme_ops.workspace)
    # A name only another workspace's team has is a free name here: the answer reveals nothing of globex.
    token_client(outsider).post("/api/v1/teams", {"name": "globex-only"}, format="json")
    free = token_client(owner).post("/api/v1/teams", {"name": "globex-only"}, format="json")
    assert free.status_code == 201 and free.json()["workspace"] == "acme"
    # The dashboard's team form answers the same way.
    page = signed_in(outsider, "pw-otto")
    assert page.post("/workspaces/globex/teams/", {"team": "acme-dash"}).status_code in (200, 302)
    made = signed_in(owner, "pw-olivia").post("/workspaces/acme/teams/", {"team": "acme-dash"})
    assert made.status_code in (200, 302)
    assert set(Principal.objects.filter(name="acme-dash").values_list("workspace__slug", flat=True)) == {
        "acme",
        "globex",
    }


def test_each_owner_sees_and_manages_only_their_own_ops(
    owner, outsider, reviewer, agent, anonymous, two_ops, project_scope
):
    acme_ops, globex_ops = two_ops
    as_owner, as_outsider = token_client(owner), token_client(outsider)
    for base in ("/api/v1/teams", "/api/v1/groups"):
        assert as_owner.post(f"{base}/ops/members", {"member": "rami"}, format="json").status_code == 204
        assert as_outsider.post(f"{base}/ops/members", {"member": "otto"}, format="json").status_code == 204
    assert list(acme_ops.members.values_list("name", flat=True)) == ["rami"]
    assert list(globex_ops.members.values_list("name", flat=True)) == ["otto"]
    # Naming globex's team from acme: the answer for a workspace nobody has.
    foreign = as_owner.post("/api/v1/teams/ops/members?workspace=globex", {"member": "olivia"}, format="json")
    unknown = as_owner.post(
        "/api/v1/teams/ops/members?workspace=nowhere", {"member": "olivia"}, format="json"
    )
    assert foreign.status_code == unknown.status_code == 404 and foreign.json() == unknown.json()
    gone = as_owner.delete("/api/v1/teams/ops/members/otto?workspace=globex")
    assert gone.status_code == 404 and gone.json() == unknown.json()
    # otto is no member of acme: removing him from acme's ops is an unknown name, not globex's ops.
    assert as_owner.delete("/api/v1/teams/ops/members/otto").status_code == 404
    assert globex_ops.members.filter(name="otto").exists()
    # The other roles: a reviewer and an agent of acme may not manage acme's ops; nobody without a token.
    for actor in (reviewer, agent):
        denied = token_client(actor).post("/api/v1/teams/ops/members", {"member": "rami"}, format="json")
        assert denied.status_code in (403, 404), (actor.name, denied.content)
    assert anonymous.post("/api/v1/teams/ops/members", {"member": "rami"}, format="json").status_code == 401
    # The members pages and API list each workspace's own ops, with its own members.
    acme_page = signed_in(owner, "pw-olivia").get("/workspaces/acme/members/").content.decode()
    assert "ops" in acme_page and "otto" not in acme_page
    listed = token_client(owner).get("/api/v1/workspaces/acme/members").json()
    assert "otto" not in str(listed)
    # Removing works on the caller's own team.
    assert as_owner.delete("/api/v1/teams/ops/members/rami").status_code == 204
    assert not acme_ops.members.exists() and globex_ops.members.filter(name="otto").exists()


def test_a_person_in_both_workspaces_says_which_ops(
    owner, outsider, two_ops, project_scope, other_workspace_scope
):
    acme_ops, globex_ops = two_ops
    both = user_ensure(username="bea", password="pw-bea", actor=None)
    for scope in (project_scope, other_workspace_scope):
        grant_add(principal=both, scope=scope, role=Role.OWNER, actor=None)
    as_bea = token_client(both)
    which = as_bea.post("/api/v1/teams/ops/members", {"member": "bea"}, format="json")
    assert which.status_code == 400 and which.json()["field"] == "workspace", which.content
    assert (
        as_bea.post(
            "/api/v1/teams/ops/members?workspace=globex", {"member": "bea"}, format="json"
        ).status_code
        == 204
    )
    assert globex_ops.members.filter(pk=both.pk).exists() and not acme_ops.members.exists()


def test_a_grant_by_name_in_acme_never_reaches_globexs_ops(owner, outsider, two_ops, project_scope):
    acme_ops, globex_ops = two_ops
    made = token_client(owner).post(
        "/api/v1/grants",
        {"principal": "ops", "scope": project_scope.path, "role": Role.VIEWER},
        format="json",
    )
    assert made.status_code == 201, made.content
    page = signed_in(owner, "pw-olivia")
    page.post("/governance/grants/add/", {"principal": "ops", "grant_scope": "acme", "role": Role.VIEWER})
    page.post(
        "/workspaces/acme/members/add/",
        {"principal": "ops", "grant_scope": "acme/slides", "role": Role.CURATOR},
    )
    assert set(Grant.objects.filter(principal=acme_ops).values_list("scope__path", flat=True)) == {
        "acme/slides",
        "acme",
    }
    assert not Grant.objects.filter(principal=globex_ops).exists()
    # globex's owner granting "ops" on globex reaches globex's team only.
    there = token_client(outsider).post(
        "/api/v1/grants", {"principal": "ops", "scope": "globex/slides", "role": Role.VIEWER}, format="json"
    )
    assert there.status_code == 201
    assert Grant.objects.filter(principal=globex_ops, scope__path="globex/slides").exists()
    assert not Grant.objects.filter(principal=acme_ops, scope__workspace__slug="globex").exists()


def test_an_import_maps_team_names_within_the_target_workspace(owner, outsider, two_ops, project_scope):
    from governance.services.portability import scope_import
    from tests.governance.portability.helpers import as_lines, export_records

    acme_ops, globex_ops = two_ops
    grant_add(principal=acme_ops, scope=project_scope, role=Role.REVIEWER, actor=owner)
    memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="fmt",
            status="active",
            text="Use PPTX.",
            source_kind="user",
        ),
        actor=owner,
    )
    records = export_records("acme/slides")
    scope_import(lines=as_lines(records), into="globex/slides/copy", actor=outsider, grants="keep")
    assert Grant.objects.filter(
        principal=globex_ops, scope__path="globex/slides/copy", role=Role.REVIEWER
    ).exists()
    assert not Grant.objects.filter(principal=acme_ops, scope__workspace__slug="globex").exists()
    # The system's import (the command line) maps within the target workspace as well.
    scope_import(lines=as_lines(records), into="acme/slides-copy", actor=None, grants="keep")
    assert Grant.objects.filter(principal=acme_ops, scope__path="acme/slides-copy").exists()
    assert not Grant.objects.filter(principal=globex_ops, scope__workspace__slug="acme").exists()


def test_signing_up_under_another_workspaces_team_name_is_a_free_name(owner, outsider, two_ops, anonymous):
    def invite_and_accept(inviter, scope, username):
        sent = token_client(inviter).post(
            "/api/v1/invitations", {"scope": scope, "role": "viewer"}, format="json"
        )
        assert sent.status_code == 201, sent.content
        return anonymous.post(
            "/api/v1/invitations/accept",
            {"token": sent.json()["token"], "username": username, "password": "a-long-enough-passphrase"},
            format="json",
        )

    token_client(outsider).post("/api/v1/teams", {"name": "globex-crew"}, format="json")
    assert invite_and_accept(owner, "acme/slides", "globex-crew").status_code == 201
    # In the workspace joined, a team's name is taken (a name there means its team first).
    taken = invite_and_accept(owner, "acme/slides", "ops")
    free = invite_and_accept(owner, "acme/slides", "olivia")
    assert taken.status_code == free.status_code == 409 and taken.json() == free.json()


def test_a_workspace_short_name_clash_says_taken_and_the_same_to_every_caller(
    owner, outsider, other_workspace_scope
):
    from governance.services.scope import scope_ensure

    ini_owner = user_ensure(username="ina", password="pw-ina", actor=None)
    grant_add(
        principal=ini_owner, scope=scope_ensure(path="initech", actor=None), role=Role.OWNER, actor=None
    )
    answers = [
        token_client(owner).patch("/api/v1/workspaces/acme", {"slug": "globex"}, format="json"),
        token_client(ini_owner).patch("/api/v1/workspaces/initech", {"slug": "globex"}, format="json"),
    ]
    assert {a.status_code for a in answers} == {409}
    bodies = [a.json() for a in answers]
    assert bodies[0] == bodies[1] and "globex" in str(bodies[0]) and "taken" in str(bodies[0]).lower()
    # Nothing about the workspace behind the name: neither its name, its id, nor who owns it.
    assert "otto" not in str(bodies[0]) and "Globex" not in str(bodies[0])
    # A caller who may not rename gets its refusal before any word about the name.
    assert (
        token_client(outsider).patch("/api/v1/workspaces/acme", {"slug": "globex"}, format="json").status_code
        == 404
    )
