"""Issue 20, the workspace walls: every object belongs to one workspace, and a name or id of another
workspace is answered exactly as an unknown one. Two workspaces: acme (olivia owns it, rami reviews
acme/slides, slides-agent works there) and globex (otto owns globex/slides). Through the API with each
one's token, and the dashboard with their sessions."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from governance.errors import AgentRoleCap
from governance.models import ApiToken, AuditEvent, EvaluationRun, Grant, Memory, Principal, Role, Workspace
from governance.services.grant_membership import group_member_add
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add, principal_ensure, user_ensure
from governance.services.scope import scope_ensure
from tests.conftest import token_client
from tests.memoryui.conftest import signed_in


def _same(a, b, status):
    assert a.status_code == b.status_code == status, (a.status_code, b.status_code, a.content)
    body_a = a.json() if a["Content-Type"].startswith("application/json") else a.content
    body_b = b.json() if b["Content-Type"].startswith("application/json") else b.content
    assert body_a == body_b


@pytest.fixture
def globex_team(outsider, other_workspace_scope):
    """A team of globex with a role there (its home, taken from its first grant)."""
    team = principal_ensure(name="globex-crew", kind="group", actor=None)
    grant_add(principal=team, scope=other_workspace_scope, role=Role.REVIEWER, actor=None)
    return team


# --- Teams belong to one workspace -------------------------------------------------------------------------


def test_another_workspaces_new_team_cannot_be_joined_or_managed(owner, outsider, other_workspace_scope):
    made = token_client(outsider).post("/api/v1/teams", {"name": "globex-new"}, format="json")
    assert made.status_code == 201 and made.json()["workspace"] == "globex"
    as_owner = token_client(owner)
    for base in ("/api/v1/teams", "/api/v1/groups"):
        foreign = as_owner.post(f"{base}/globex-new/members", {"member": owner.name}, format="json")
        unknown = as_owner.post(f"{base}/no-such-team/members", {"member": owner.name}, format="json")
        _same(foreign, unknown, 404)
        gone = as_owner.delete(f"{base}/globex-new/members/{owner.name}")
        _same(gone, as_owner.delete(f"{base}/no-such-team/members/{owner.name}"), 404)
    assert not Principal.objects.get(name="globex-new").members.exists()
    # The dashboard's team form on acme's Members page: the same answer as for a name nobody has.
    page = signed_in(owner, "pw-olivia")
    foreign = page.post("/workspaces/acme/teams/members/", {"team": "globex-new", "member": owner.name})
    unknown = page.post("/workspaces/acme/teams/members/", {"team": "no-such-team", "member": owner.name})
    assert foreign.status_code == unknown.status_code == 400
    assert not Principal.objects.get(name="globex-new").members.exists()


def test_members_page_and_api_list_only_this_workspaces_teams(owner, outsider, other_workspace_scope):
    assert (
        token_client(outsider).post("/api/v1/teams", {"name": "globex-new"}, format="json").status_code == 201
    )
    assert token_client(owner).post("/api/v1/teams", {"name": "acme-new"}, format="json").status_code == 201
    page = signed_in(owner, "pw-olivia").get("/workspaces/acme/members/").content.decode()
    assert "acme-new" in page and "globex-new" not in page
    listed = token_client(owner).get("/api/v1/workspaces/acme/members").json()
    assert "globex-new" not in json.dumps(listed)
    assert (
        "acme-new" not in signed_in(outsider, "pw-otto").get("/workspaces/globex/members/").content.decode()
    )


def test_a_team_is_created_in_a_workspace_its_creator_owns(owner, outsider):
    foreign = token_client(owner).post("/api/v1/teams", {"name": "x", "workspace": "globex"}, format="json")
    unknown = token_client(owner).post("/api/v1/teams", {"name": "x", "workspace": "nowhere"}, format="json")
    _same(foreign, unknown, 404)
    assert not Principal.objects.filter(name="x").exists()


# --- Grants name only principals of the workspace ---------------------------------------------------------


def test_a_grant_naming_another_workspaces_person_or_team_answers_as_an_unknown_name(
    owner,
    outsider,
    globex_team,
    project_scope,
):
    as_owner = token_client(owner)
    unknown = as_owner.post(
        "/api/v1/grants",
        {"principal": "nobody-at-all", "scope": project_scope.path, "role": Role.VIEWER},
        format="json",
    )
    for name in (outsider.name, globex_team.name):
        foreign = as_owner.post(
            "/api/v1/grants",
            {"principal": name, "scope": project_scope.path, "role": Role.VIEWER},
            format="json",
        )
        _same(foreign, unknown, 400)
    assert not Grant.objects.filter(
        scope__workspace__slug="acme", principal__in=[outsider, globex_team]
    ).exists()
    # The dashboard's two grant forms answer the same way.
    page = signed_in(owner, "pw-olivia")
    for url, scope_field in (
        ("/governance/grants/add/", "grant_scope"),
        ("/workspaces/acme/members/add/", "grant_scope"),
    ):
        answers = [
            page.post(url, {"principal": name, scope_field: project_scope.path, "role": Role.VIEWER})
            for name in ("nobody-at-all", outsider.name, globex_team.name)
        ]
        assert {a.status_code for a in answers} == {400}
    assert not Grant.objects.filter(
        scope__workspace__slug="acme", principal__in=[outsider, globex_team]
    ).exists()


def test_a_person_of_both_workspaces_is_a_member_of_each(
    owner, outsider, project_scope, other_workspace_scope
):
    both = user_ensure(username="bea", password="pw-bea", actor=None)
    grant_add(principal=both, scope=project_scope, role=Role.VIEWER, actor=None)
    grant_add(principal=both, scope=other_workspace_scope, role=Role.VIEWER, actor=None)
    for actor, scope in ((owner, project_scope), (outsider, other_workspace_scope)):
        made = token_client(actor).post(
            "/api/v1/grants", {"principal": "bea", "scope": scope.path, "role": Role.REVIEWER}, format="json"
        )
        assert made.status_code == 201, made.content


# --- An agent holds at most the agent role ----------------------------------------------------------------


@pytest.mark.parametrize("role", [Role.REVIEWER, Role.CURATOR, Role.OWNER])
def test_an_agent_is_never_given_a_deciding_role(owner, agent, project_scope, role):
    as_owner = token_client(owner)
    grant = as_owner.post(
        "/api/v1/grants", {"principal": agent.name, "scope": project_scope.path, "role": role}, format="json"
    )
    assert grant.status_code == 400 and grant.json()["error"] == AgentRoleCap.code
    token = as_owner.post(
        "/api/v1/tokens", {"principal": agent.name, "scope": project_scope.path, "role": role}, format="json"
    )
    assert token.status_code == 400 and token.json()["error"] == AgentRoleCap.code
    page = signed_in(owner, "pw-olivia").post(
        "/workspaces/acme/members/add/",
        {"principal": agent.name, "grant_scope": project_scope.path, "role": role},
    )
    assert page.status_code == 400
    with pytest.raises(CommandError):
        call_command(
            "create_token",
            agent.name,
            "--scope",
            project_scope.path,
            "--role",
            role,
            stdout=StringIO(),
            stderr=StringIO(),
        )
    assert set(Grant.objects.filter(principal=agent).values_list("role", flat=True)) == {Role.AGENT}
    assert not ApiToken.objects.filter(principal=agent).exclude(max_role=Role.AGENT).exists()
    # The agent role itself, and viewer, still go.
    ok = as_owner.post(
        "/api/v1/tokens",
        {"principal": agent.name, "scope": project_scope.path, "role": Role.AGENT},
        format="json",
    )
    assert ok.status_code == 201


def test_an_agent_gets_no_deciding_role_through_a_team(owner, agent, project_scope):
    assert token_client(owner).post("/api/v1/teams", {"name": "deciders"}, format="json").status_code == 201
    team = Principal.objects.get(name="deciders")
    as_owner = token_client(owner)
    assert (
        as_owner.post(
            "/api/v1/grants",
            {"principal": "deciders", "scope": project_scope.path, "role": Role.REVIEWER},
            format="json",
        ).status_code
        == 201
    )
    joined = as_owner.post("/api/v1/teams/deciders/members", {"member": agent.name}, format="json")
    assert joined.status_code == 400 and joined.json()["error"] == AgentRoleCap.code
    # The other order: an agent in a team first, then a deciding role for the team.
    crew = principal_ensure(name="crew", kind="group", actor=None, workspace=project_scope.workspace)
    group_member_add(group=crew, member=agent, actor=None)
    granted = as_owner.post(
        "/api/v1/grants",
        {"principal": "crew", "scope": project_scope.path, "role": Role.CURATOR},
        format="json",
    )
    assert granted.status_code == 400 and granted.json()["error"] == AgentRoleCap.code
    assert not team.members.filter(pk=agent.pk).exists()


def test_existing_over_granted_agents_are_capped_by_the_migration(agent, project_scope):
    from importlib import import_module

    from django.apps import apps

    step = import_module("governance.migrations.0027_walls_by_identity").agents_at_most_agent
    Grant.objects.create(principal=agent, scope=project_scope, role=Role.OWNER)  # as before the rule
    other = principal_ensure(name="old-bot", kind="agent", actor=None)
    Grant.objects.create(principal=other, scope=project_scope, role=Role.REVIEWER)
    ApiToken.objects.create(
        principal=other, prefix="x", key_hash="h" * 64, scope=project_scope, max_role="curator"
    )
    step(apps, None)
    assert set(Grant.objects.filter(principal=agent).values_list("role", flat=True)) == {Role.AGENT}
    assert set(Grant.objects.filter(principal=other).values_list("role", flat=True)) == {Role.AGENT}
    assert ApiToken.objects.get(principal=other).max_role == Role.AGENT


# --- History by identity, not by path ---------------------------------------------------------------------


@pytest.fixture
def site_admin(db):
    principal = user_ensure(username="sam-admin", password="pw-sam", actor=None)
    get_user_model().objects.filter(username="sam-admin").update(is_superuser=True)
    principal.refresh_from_db()
    return principal


def test_a_freed_workspace_slug_carries_none_of_the_old_workspaces_history(owner, project_scope, site_admin):
    memory = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="semantic", text="Decks are 16:9", source_kind="user", status="active"
        ),
        actor=owner,
    )
    renamed = token_client(owner).patch("/api/v1/workspaces/acme", {"slug": "acme-old"}, format="json")
    assert renamed.status_code == 200
    made = token_client(site_admin).post(
        "/api/v1/workspaces", {"slug": "acme", "name": "New Acme"}, format="json"
    )
    assert made.status_code == 201
    assert (
        token_client(site_admin)
        .post("/api/v1/scopes", {"parent": "acme", "name": "slides"}, format="json")
        .status_code
        == 201
    )
    newcomer = signed_in(site_admin, "pw-sam").get("/governance/audit/").content.decode()
    assert f"memory {memory.pk}<" not in newcomer and "acme/slides" in newcomer  # its own scope's event only
    # The renamed workspace keeps its whole history.
    assert f"memory {memory.pk}<" in signed_in(owner, "pw-olivia").get("/governance/audit/").content.decode()


def test_a_scope_renamed_into_a_freed_path_carries_none_of_its_history(owner, project_scope, sibling_scope):
    memory = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="semantic", text="Slides use Inter", source_kind="user", status="active"
        ),
        actor=owner,
    )
    as_owner = token_client(owner)
    assert (
        as_owner.patch(f"/api/v1/scopes/{project_scope.pk}", {"name": "decks"}, format="json").status_code
        == 200
    )
    assert (
        as_owner.patch(f"/api/v1/scopes/{sibling_scope.pk}", {"name": "slides"}, format="json").status_code
        == 200
    )
    helper = user_ensure(username="hana", password="pw-hana", actor=None)
    grant_add(principal=helper, scope=sibling_scope, role=Role.CURATOR, actor=None)
    seen = signed_in(helper, "pw-hana").get("/governance/audit/").content.decode()
    assert f"memory {memory.pk}<" not in seen


def test_an_exports_audit_section_carries_no_tokens_grants_or_forgotten_hashes(owner, agent, project_scope):
    as_owner = token_client(owner)
    assert (
        as_owner.post(
            "/api/v1/tokens",
            {"principal": agent.name, "scope": project_scope.path, "role": Role.AGENT},
            format="json",
        ).status_code
        == 201
    )
    kept = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="semantic", text="Kept rule", source_kind="user", status="active"
        ),
        actor=owner,
    )
    gone = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="semantic", text="Secret rule", source_kind="user", status="active"
        ),
        actor=owner,
    )
    assert as_owner.post(
        f"/api/v1/memories/{gone.pk}/forget", {"reason": "wrong", "mode": "hard"}, format="json"
    ).status_code in (200, 202)
    body = b"".join(as_owner.get(f"/api/v1/scopes/{project_scope.pk}/export").streaming_content).decode()
    audit = [json.loads(line) for line in body.splitlines() if json.loads(line)["type"] == "audit"]
    assert audit and {e["target_type"] for e in audit} <= {"scope", "memory", "relation", "summary"}
    assert str(kept.pk) in {e["target_id"] for e in audit}
    assert str(gone.pk) not in {e["target_id"] for e in audit if e["target_type"] == "memory"}
    assert all(gone.content_hash not in json.dumps(e) for e in audit)  # (the tombstone keeps its keyed hash)
    assert not {e["action"] for e in audit} & {"token.issue", "grant.add"}


# --- Evaluation sandboxes by identity ---------------------------------------------------------------------


def test_nobody_names_a_workspace_like_an_evaluation_sandbox(site_admin, owner):
    made = token_client(site_admin).post(
        "/api/v1/workspaces", {"slug": "eval-run-999", "name": "x"}, format="json"
    )
    assert made.status_code == 400 and made.json()["field"] == "slug"
    renamed = token_client(owner).patch("/api/v1/workspaces/acme", {"slug": "eval-run-1000"}, format="json")
    assert renamed.status_code == 400
    assert not Workspace.objects.filter(slug__startswith="eval-run-").exists()


def test_a_run_never_imports_into_or_drops_a_workspace_it_did_not_create(owner, workspace_scope):
    from django.db import connection

    from governance.evaluation.runs import evaluation_run_retrieval
    from tests.governance.evaluation.test_benchmark_files import LOCOMO

    with connection.cursor() as cursor:  # the id the next run will get: a tenant names a workspace after it
        cursor.execute("SELECT nextval(pg_get_serial_sequence('governance_evaluationrun', 'id'))")
        next_id = cursor.fetchone()[0] + 1
    squatter = scope_ensure(path=f"eval-run-{next_id}/mine", actor=None)  # made before the reserved prefix
    upload = SimpleUploadedFile("mini.json", json.dumps(LOCOMO).encode(), content_type="application/json")
    response = signed_in(owner, "pw-olivia").post(
        "/evaluation/upload/", {"file": upload, "workspace": "acme"}
    )
    run = EvaluationRun.objects.get()
    assert response.status_code == 302 and run.pk == next_id
    evaluation_run_retrieval(run_id=run.pk)
    run.refresh_from_db()
    assert run.state == "failed" and run.sandbox_workspace_id is None
    assert Workspace.objects.filter(pk=squatter.workspace_id).exists()
    assert not Memory.objects.filter(scope__workspace_id=squatter.workspace_id).exists()
    assert not AuditEvent.objects.filter(
        action="evaluation.sandbox_drop", target_id=str(run.pk), data__rows__gt=0
    ).exists()


# --- Imports name only the target workspace's people -------------------------------------------------------


def test_an_import_matches_names_only_to_members_of_the_target_workspace(
    owner, reviewer, agent, outsider, project_scope, other_workspace_scope
):
    from governance.services.portability import scope_import
    from tests.governance.portability.helpers import as_lines, export_records

    memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="fmt",
            status="active",
            text="Export as PPTX.",
            source_kind="user",
        ),
        actor=owner,
    )
    records = export_records("acme/slides")
    globex_member = user_ensure(username="gus", password="pw-gus", actor=None)
    grant_add(principal=globex_member, scope=other_workspace_scope, role=Role.VIEWER, actor=None)
    records = [
        {**r, "name": "gus"} if r.get("type") == "principal" and r.get("name") == "rami" else r
        for r in records
    ]
    scope_import(lines=as_lines(records), into="globex/slides/copy", actor=outsider, grants="keep")
    held = dict(Grant.objects.filter(scope__path="globex/slides/copy").values_list("principal__name", "role"))
    home = other_workspace_scope.workspace_id
    assert held["gus"] == Role.REVIEWER  # a member of globex: matched
    # acme's owner wrote the rule: in globex it was written by a placeholder, not by olivia.
    rule = Memory.objects.get(scope__path="globex/slides/copy", key="fmt")
    assert rule.created_by.name == f"import:{home}:olivia" and rule.created_by != owner
    assert f"import:{home}:slides-agent" in held and "slides-agent" not in held
    assert not Grant.objects.filter(principal=owner, scope__workspace_id=home).exists()
    # A person who later signs up under a name of the file inherits nothing: placeholders hold ':'.
    newcomer = user_ensure(username="olivia2", password="pw", actor=None)
    assert not Grant.objects.filter(principal=newcomer).exists()
    assert all(":" in name for name in held if name != "gus")


# --- The review queue shows no text of a scope the reviewer cannot read ------------------------------------


def test_the_review_queue_masks_a_linked_memory_of_a_scope_the_reviewer_cannot_read(
    reviewer,
    project_scope,
    sibling_scope,
):
    from governance.selectors.review import UNREADABLE_TEXT
    from governance.services.relation import relation_add

    secret = memory_record(
        item=MemoryInput(
            scope=sibling_scope,
            kind="episodic",
            text="Payroll is due on the 3rd",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    proposal = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            text="Slides due on the 3rd",
            source_kind="user",
            status="proposed",
        ),
        actor=None,
    )
    relation_add(source_id=proposal.pk, target_id=secret.pk, kind="derived_from", actor=None)
    api = token_client(reviewer).get("/api/v1/review")
    assert api.status_code == 200
    item = next(i for i in api.json() if i["memory"]["id"] == proposal.pk)
    assert [e["text"] for e in item["supporting_episodes"]] == [UNREADABLE_TEXT]
    assert "Payroll" not in api.content.decode()
    page = signed_in(reviewer, "pw-rami").get("/review/")
    assert page.status_code == 200 and b"Payroll" not in page.content


def test_the_dashboard_import_answers_another_workspaces_target_as_an_unknown_one(outsider, project_scope):
    page = signed_in(outsider, "pw-otto")

    def post(target):
        upload = SimpleUploadedFile("x.jsonl", b"{}\n", content_type="application/x-ndjson")
        return page.post("/portability/import/", {"file": upload, "target": target, "action": "import"})

    foreign, unknown = post(project_scope.path), post("acme/no-such-scope")
    assert foreign.status_code == unknown.status_code == 400
    from django.utils.html import escape

    from memoryui.views.portability import UNKNOWN_TARGET

    assert (
        escape(UNKNOWN_TARGET) in foreign.content.decode()
        and escape(UNKNOWN_TARGET) in unknown.content.decode()
    )


def test_the_migration_gives_each_team_one_home_and_splits_a_team_of_two_workspaces(
    owner,
    reviewer,
    project_scope,
    other_workspace_scope,
):
    from importlib import import_module

    from django.apps import apps

    step = import_module("governance.migrations.0027_walls_by_identity").homes_for_teams
    both = Principal.objects.create(kind="group", name="both-sides")  # as before homes existed
    reviewer.groups.add(both)
    Grant.objects.create(principal=both, scope=project_scope, role=Role.VIEWER)
    Grant.objects.create(principal=both, scope=other_workspace_scope, role=Role.VIEWER)
    made = Principal.objects.create(kind="group", name="made-by-olivia")
    from django.db import transaction

    from governance.services.audit import AuditEntry, audit_record

    with transaction.atomic():
        audit_record(actor=owner, entry=AuditEntry("principal.create", "principal", str(made.pk)))
    step(apps, None)
    both.refresh_from_db()
    made.refresh_from_db()
    twin = Principal.objects.get(name="both-sides-globex")
    assert (both.workspace_id, twin.workspace_id) == (
        project_scope.workspace_id,
        other_workspace_scope.workspace_id,
    )
    assert set(Grant.objects.filter(principal=both).values_list("scope__workspace_id", flat=True)) == {
        project_scope.workspace_id
    }
    assert Grant.objects.filter(principal=twin, scope=other_workspace_scope).exists()
    assert list(twin.members.all()) == [reviewer]
    assert made.workspace_id == project_scope.workspace_id  # its creator's workspace
