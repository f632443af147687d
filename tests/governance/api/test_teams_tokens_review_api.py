import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from governance.models import ApiToken, AuditEvent, Role
from governance.permissions import roles_at
from governance.selectors.review import review_queue
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add, principal_ensure, user_ensure
from tests.conftest import token_client as client_for


@pytest.fixture
def team(project_scope):
    group = principal_ensure(name="slides-team", kind="group", actor=None)
    grant_add(principal=group, scope=project_scope, role=Role.CURATOR, actor=None)
    return group


def test_a_member_holds_the_roles_of_its_group_until_removed(team, project_scope, owner, reviewer):
    newbie = user_ensure(username="nina", actor=None)
    assert (
        client_for(reviewer)
        .post("/api/v1/groups/slides-team/members", {"member": "nina"}, format="json")
        .status_code
        == 403
    )
    assert (
        client_for(owner)
        .post("/api/v1/groups/slides-team/members", {"member": "nina"}, format="json")
        .status_code
        == 204
    )
    assert Role.CURATOR in roles_at(newbie, project_scope)
    assert AuditEvent.objects.filter(action="group.member_add", data__member="nina").exists()
    assert client_for(owner).delete("/api/v1/groups/slides-team/members/nina").status_code == 204
    assert roles_at(newbie, project_scope) == set()


def test_an_owner_of_a_sub_scope_cannot_add_members_to_a_team_holding_roles_above_it(
    workspace_scope, project_scope, owner
):
    big_team = principal_ensure(name="all-hands", kind="group", actor=None)
    grant_add(principal=big_team, scope=workspace_scope, role=Role.VIEWER, actor=None)
    sub_owner = user_ensure(username="sub", actor=None)
    grant_add(principal=sub_owner, scope=project_scope, role=Role.OWNER, actor=owner)
    user_ensure(username="nina", actor=None)
    response = client_for(sub_owner).post(
        "/api/v1/groups/all-hands/members", {"member": "nina"}, format="json"
    )
    assert response.status_code == 403 and "owner role" in response.json()["message"]


def test_agent_tokens_are_issued_once_and_revoked_by_an_owner(project_scope, owner, reviewer, agent):
    bound = {"scope": project_scope.path, "role": "agent"}
    issued = client_for(owner).post("/api/v1/tokens", {"principal": agent.name, **bound}, format="json")
    assert issued.status_code == 201
    raw = issued.json()["token"]
    assert ApiToken.objects.filter(principal=agent, revoked_at__isnull=True).count() == 1
    as_agent = APIClient()
    as_agent.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    assert as_agent.get("/api/v1/review").status_code == 200
    token = ApiToken.objects.get(principal=agent)
    assert client_for(reviewer).delete(f"/api/v1/tokens/{token.pk}").status_code == 403
    assert (
        client_for(owner)
        .delete(f"/api/v1/tokens/{token.pk}", {"reason": "agent retired"}, format="json")
        .status_code
        == 204
    )
    assert as_agent.get("/api/v1/review").status_code == 401
    assert (
        client_for(owner).post("/api/v1/tokens", {"principal": "rami", **bound}, format="json").status_code
        == 400
    )


def test_review_queue_api_shows_kind_supporting_and_conflicting(project_scope, reviewer, outsider, agent):
    active = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="font",
            text="Use Inter",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="font",
            text="Use Helvetica",
            source_kind="model_inference",
        ),
        actor=agent,
    )
    items = client_for(reviewer).get("/api/v1/review?scope=acme/slides").json()
    assert [(i["kind"], i["conflicting"]["id"], i["can_confirm"]) for i in items] == [
        ("conflict", active.pk, True)
    ]
    assert client_for(outsider).get("/api/v1/review?scope=acme/slides").status_code == 404
    assert client_for(outsider).get("/api/v1/review").json() == []


def test_review_queue_query_count_does_not_grow_with_the_queue(project_scope, reviewer):
    def make(n, start=0):
        for i in range(start, start + n):
            memory_record(
                item=MemoryInput(
                    scope=project_scope,
                    kind="preference",
                    text=f"likes option {i}",
                    source_kind="assistant",
                    status="proposed",
                ),
                actor=None,
            )

    make(2)
    with CaptureQueriesContext(connection) as small:
        assert len(review_queue(principal=reviewer)) == 2
    make(20, start=2)  # distinct statements: a repeat would be merged into the first (near-duplicates)
    with CaptureQueriesContext(connection) as large:
        assert len(review_queue(principal=reviewer)) == 22
    assert len(large.captured_queries) == len(small.captured_queries)
