"""The token property: for random grants (the principal's own and its team's, some given after the token
was issued) and a random token bound, no token reads or changes anything outside both its bound and its
principal's rights. Checked through the permission module (as the API authenticates the token) and
through the API itself. The oracle below is written from the rule's statement, on scope paths, not with
the module's code."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIRequestFactory

from governance.api.auth import TokenAuthentication
from governance.models import Memory
from governance.permissions import (
    ACTION_ROLES,
    Action,
    can,
    governed_scopes,
    memory_readable_scopes,
    roles_at,
    scope_access,
)
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add, principal_ensure, token_issue
from governance.services.scope import scope_ensure
from tests.security.conftest import client_with

PATHS = ["pw", "pw/a", "pw/a/x", "pw/a/y", "pw/b", "qw", "qw/c"]
RANK = {"agent": 1, "viewer": 1, "reviewer": 2, "curator": 3, "owner": 4}
ROLES = list(RANK)
_names = itertools.count()


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root + "/")


def _allowed_by_cap(role: str, cap: str) -> bool:
    """Stated independently: the cap itself, or any role ranked strictly below it."""
    return role == cap or RANK[role] < RANK[cap]


def _oracle(grants: list[tuple[str, str]], bound: tuple[str, str]) -> dict:
    """What the token may do, from its principal's grants (own + team, as (path, role)) and its bound."""
    bound_path, cap = bound
    usable = []  # (path of the part of the grant inside the bound, role)
    for path, role in grants:
        if not _allowed_by_cap(role, cap):
            continue
        if _under(path, bound_path):
            usable.append((path, role))
        elif _under(bound_path, path):
            usable.append((bound_path, role))
    roles = {p: {r for g, r in usable if _under(p, g)} for p in PATHS}
    governed = {p for p in PATHS if any(_under(p, g) for g, _ in usable)}
    readable = {p for p in PATHS if any(_under(p, g) or _under(g, p) for g, _ in usable)}
    return {"roles": roles, "governed": governed, "readable": readable}


grant = st.tuples(st.sampled_from(PATHS), st.sampled_from(ROLES))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    before=st.lists(grant, max_size=3),
    after=st.lists(grant, max_size=2),  # given to the principal after its token was issued
    team=st.lists(grant, max_size=2),
    in_team=st.booleans(),
    bound=grant,
    write_at=st.sampled_from(PATHS),
)
def test_no_token_acts_outside_its_bound_and_its_principals_grants(
    db, before, after, team, in_team, bound, write_at
):
    scopes = {p: scope_ensure(path=p, actor=None) for p in PATHS}
    n = next(_names)
    # A person's token (an agent holds at most the agent role, issue 20); a team holds roles in its home
    # workspace only, so its grants are those drawn in the workspace of its first one.
    agent = principal_ensure(name=f"prop-agent-{n}", kind="user", actor=None)
    group = principal_ensure(name=f"prop-team-{n}", kind="group", actor=None)
    team = [g for g in team if g[0].split("/")[0] == team[0][0].split("/")[0]]
    for path, role in before:
        grant_add(principal=agent, scope=scopes[path], role=role, actor=None)
    for path, role in team:
        grant_add(principal=group, scope=scopes[path], role=role, actor=None)
    raw = token_issue(principal=agent, scope=scopes[bound[0]], max_role=bound[1], actor=None)
    for path, role in after:
        grant_add(principal=agent, scope=scopes[path], role=role, actor=None)
    if in_team:
        agent.groups.add(group)
    held = [*before, *after, *(team if in_team else [])]
    expected = _oracle(held, bound)

    # The principal exactly as an API request with this token sees it.
    request = APIRequestFactory().get("/", HTTP_AUTHORIZATION=f"Token {raw}")
    acting = TokenAuthentication().authenticate(request)[1].principal

    for path, scope in scopes.items():
        assert roles_at(acting, scope) == expected["roles"][path], path
        access = scope_access(acting, path)
        assert set(access.roles) == expected["roles"][path], path
        assert access.visible == (path in expected["readable"]), path
        for action in (
            Action.READ,
            Action.WRITE_CANDIDATE,
            Action.CONFIRM,
            Action.FORGET_HARD,
            Action.MANAGE_GRANTS,
        ):
            assert can(acting, scope, action) == bool(expected["roles"][path] & ACTION_ROLES[action])
    assert set(governed_scopes(acting).values_list("path", flat=True)) == expected["governed"]
    assert set(memory_readable_scopes(acting).values_list("path", flat=True)) == expected["readable"]

    # Through the API: a write lands only where both allow it, and a list never shows another scope's memory.
    client = client_with(raw)
    marker = f"prop note {n}"
    response = client.post(
        "/api/v1/memories",
        {"scope": write_at, "kind": "semantic", "text": marker, "source": {"kind": "user"}},
        format="json",
    )
    may_write = bool(expected["roles"][write_at] & ACTION_ROLES[Action.WRITE_CANDIDATE])
    assert (response.status_code == 201) == may_write, (response.status_code, response.content)
    assert Memory.objects.filter(text=marker).exists() == may_write
    memory_record(
        item=MemoryInput(
            scope=scopes[write_at], kind="semantic", text=f"seen? {n}", source_kind="user", status="active"
        ),
        actor=None,
    )
    listed = client.get("/api/v1/memories", {"q": f"seen? {n}"})
    assert listed.status_code == 200
    shown = {m["scope"] for m in listed.json()["results"]}
    assert shown == ({write_at} & expected["readable"])
