"""Roles × actions × scopes, through the services and through the API, with the owner / reviewer /
outsider trio and one principal per role. The expected table is written out here on purpose (not read
from permissions.py), so a change to the rules has to change this test too."""

import pytest

from governance.errors import NotFound, PermissionDenied
from governance.models import Grant, Memory, Role, Status
from governance.services.memory import (
    MemoryInput,
    memory_confirm,
    memory_forget,
    memory_record,
    memory_reject,
    memory_retire,
)
from governance.services.principal import (
    GRANT_ABOVE_OWN,
    grant_add,
    grant_revoke,
    principal_ensure,
    user_ensure,
)
from governance.services.scope import scope_ensure
from tests.conftest import token_client as client_for

ALLOWED = {
    "confirm": {"reviewer", "curator", "owner"},
    "reject": {"reviewer", "curator", "owner"},
    "retire": {"curator", "owner"},
    "forget_soft": {"curator", "owner"},
    "forget_hard": {"owner"},
    "grant": {"owner"},
}
ROLES = ["agent", "viewer", "reviewer", "curator", "owner"]
# Where the target lies relative to the role's grant on acme/slides: below it, on it, beside it, elsewhere.
PLACES = {
    "same": "acme/slides",
    "child": "acme/slides/export",
    "sibling": "acme/payments",
    "other": "globex/x",
}


@pytest.fixture
def role_principal(project_scope, request):
    role = request.param
    principal = principal_ensure(name=f"p-{role}", kind="agent" if role == "agent" else "user", actor=None)
    grant_add(principal=principal, scope=project_scope, role=role, actor=None)
    return role, principal


def target_memory(place: str) -> Memory:
    scope = scope_ensure(path=PLACES[place], actor=None)
    return memory_record(
        item=MemoryInput(
            scope=scope,
            kind="preference",
            text=f"likes PDF ({place})",
            source_kind="assistant",
            status="proposed",
        ),
        actor=None,
    )


def do(action: str, memory: Memory, actor):
    if action == "confirm":
        return memory_confirm(memory_id=memory.pk, actor=actor, reason="ok")
    if action == "reject":
        return memory_reject(memory_id=memory.pk, actor=actor, reason="no")
    if action == "retire":
        return memory_retire(memory_id=memory.pk, actor=actor, reason="old")
    if action == "forget_soft":
        return memory_forget(memory_id=memory.pk, actor=actor, reason="asked")
    if action == "forget_hard":
        return memory_forget(memory_id=memory.pk, actor=actor, reason="asked", hard=True)
    if action == "grant":
        viewer = principal_ensure(name="new-viewer", kind="user", actor=None)
        return grant_add(principal=viewer, scope=memory.scope, role=Role.VIEWER, actor=actor)
    raise AssertionError(action)


def expected(role: str, action: str, place: str) -> str:
    if place in ("sibling", "other"):
        return "404"
    return "ok" if role in ALLOWED[action] else "403"


@pytest.mark.parametrize("role_principal", ROLES, indirect=True)
@pytest.mark.parametrize("action", list(ALLOWED))
@pytest.mark.parametrize("place", list(PLACES))
def test_service_permission_matrix(role_principal, action, place):
    role, principal = role_principal
    memory = target_memory(place)
    want = expected(role, action, place)
    if want == "ok":
        do(action, memory, principal)
        return
    with pytest.raises(NotFound if want == "404" else PermissionDenied) as exc:
        do(action, memory, principal)
    if want == "403":
        assert exc.value.message  # every denial says why
    assert Memory.objects.get(pk=memory.pk).status == Status.PROPOSED  # nothing half-done


API_CALLS = {
    "confirm": ("confirm", {"reason": "ok"}, 200),
    "reject": ("reject", {"reason": "no"}, 200),
    "retire": ("retire", {"reason": "old"}, 200),
    "forget_soft": ("forget", {"mode": "soft", "reason": "asked"}, 202),
    "forget_hard": ("forget", {"mode": "hard", "reason": "asked"}, 202),
}


@pytest.mark.parametrize("role_principal", ROLES, indirect=True)
@pytest.mark.parametrize("action", list(API_CALLS))
@pytest.mark.parametrize("place", ["same", "sibling", "other"])
def test_api_permission_matrix(role_principal, action, place):
    role, principal = role_principal
    memory = target_memory(place)
    verb, body, ok_status = API_CALLS[action]
    response = client_for(principal).post(f"/api/v1/memories/{memory.pk}/{verb}", body, format="json")
    want = expected(role, action, place)
    if want == "ok":
        assert response.status_code == ok_status, response.json()
        return
    assert response.status_code == int(want), response.json()
    payload = response.json()
    assert payload["error"] == ("not_found" if want == "404" else "permission_denied")
    assert payload["message"]


def test_trio_through_the_api(project_scope, owner, reviewer, outsider):
    memory = target_memory("same")
    assert (
        client_for(outsider)
        .post(f"/api/v1/memories/{memory.pk}/forget", {"mode": "hard", "reason": "x"}, format="json")
        .status_code
        == 404
    )
    denied = client_for(reviewer).post(
        f"/api/v1/memories/{memory.pk}/forget", {"mode": "hard", "reason": "x"}, format="json"
    )
    assert denied.status_code == 403 and "owner" in denied.json()["message"]
    done = client_for(owner).post(
        f"/api/v1/memories/{memory.pk}/forget", {"mode": "hard", "reason": "x"}, format="json"
    )
    assert done.status_code == 202
    body = done.json()
    assert body["memory"]["status"] == "forgotten"
    assert set(body["propagation"]["stores"]) == {"embedding", "keyword", "cache", "summaries", "turns"}
    state = client_for(owner).get(f"/api/v1/outbox/{body['propagation']['id']}")
    assert state.status_code == 200 and state.json()["topic"] == "memory.forgotten"
    assert client_for(outsider).get(f"/api/v1/outbox/{body['propagation']['id']}").status_code == 404


def test_bad_forget_input_is_a_400_with_fields(project_scope, owner):
    memory = target_memory("same")
    response = client_for(owner).post(
        f"/api/v1/memories/{memory.pk}/forget", {"mode": "shred"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_input" and set(response.json()["fields"]) == {
        "mode",
        "reason",
    }
    assert Memory.objects.get(pk=memory.pk).status == Status.PROPOSED


def test_nobody_grants_above_their_own_role_or_outside_their_subtree(
    workspace_scope, project_scope, owner, reviewer, curator
):
    newbie = user_ensure(username="newbie", actor=None)
    # A curator or reviewer cannot hand out any role, not even one below their own.
    for actor in (curator, reviewer):
        with pytest.raises(PermissionDenied):
            grant_add(principal=newbie, scope=project_scope, role=Role.VIEWER, actor=actor)
    # An owner of a sub-scope cannot grant on the scope above it (it cannot even see it: 404).
    sub_owner = user_ensure(username="subowner", actor=None)
    grant_add(principal=sub_owner, scope=project_scope, role=Role.OWNER, actor=owner)
    with pytest.raises(NotFound):
        grant_add(principal=newbie, scope=workspace_scope, role=Role.VIEWER, actor=sub_owner)
    from governance.permissions import can_grant

    assert can_grant(sub_owner, project_scope, Role.OWNER)
    assert not can_grant(curator, project_scope, Role.VIEWER)
    assert not can_grant(sub_owner, workspace_scope, Role.VIEWER)
    assert Grant.objects.filter(principal=newbie).count() == 0
    assert GRANT_ABOVE_OWN.startswith("Nobody")


def test_grants_api_list_add_revoke(project_scope, owner, reviewer, outsider):
    newbie = user_ensure(username="newbie", actor=None)
    c = client_for(owner)
    added = c.post(
        "/api/v1/grants", {"principal": "newbie", "scope": "acme/slides", "role": "viewer"}, format="json"
    )
    assert added.status_code == 201, added.json()
    grant_id = added.json()["id"]
    listed = client_for(reviewer).get("/api/v1/grants?scope=acme/slides").json()
    assert {(g["principal"], g["role"]) for g in listed} >= {
        ("newbie", "viewer"),
        ("rami", "reviewer"),
        ("olivia", "owner"),
    }
    assert client_for(outsider).get("/api/v1/grants?scope=acme/slides").status_code == 404
    assert "newbie" not in {g["principal"] for g in client_for(outsider).get("/api/v1/grants").json()}
    assert client_for(reviewer).delete(f"/api/v1/grants/{grant_id}").status_code == 403
    assert client_for(outsider).delete(f"/api/v1/grants/{grant_id}").status_code == 404
    assert c.delete(f"/api/v1/grants/{grant_id}", {"reason": "trial over"}, format="json").status_code == 204
    assert not Grant.objects.filter(principal=newbie).exists()
    bad = c.post(
        "/api/v1/grants", {"principal": "nobody", "scope": "acme/slides", "role": "viewer"}, format="json"
    )
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_input"


def test_revoking_a_grant_needs_a_right_over_its_scope(project_scope, owner):
    viewer = user_ensure(username="vic", actor=None)
    grant = grant_add(principal=viewer, scope=project_scope, role=Role.VIEWER, actor=owner)
    with pytest.raises(PermissionDenied):
        grant_revoke(grant_id=grant.pk, actor=viewer, reason="tidy up")
    grant_revoke(grant_id=grant.pk, actor=owner, reason="left the team")
    assert not Grant.objects.filter(pk=grant.pk).exists()
