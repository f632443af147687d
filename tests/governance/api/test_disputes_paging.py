"""`GET /api/v1/disputes` pages past its limit (issue 25): each dispute carries a `cursor`; `after` lists the
ones after it, newest first, with the one cursor codec (governance/runtime/cursor.py). Each role's token,
another workspace's and none; a damaged or foreign cursor is a 400 naming `after`."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from governance.models import Role
from governance.runtime import cursor as codec
from governance.services.dispute import dispute_propose
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add, user_ensure
from tests.conftest import token_client

pytestmark = pytest.mark.django_db


def _said(scope, text):
    return memory_record(
        item=MemoryInput(scope=scope, kind="semantic", text=text, source_kind="user", status="active"),
        actor=None,
    )


def _disputes(scope, n):
    out = []
    for i in range(n):
        older, newer = _said(scope, f"Build {i} uses Maven."), _said(scope, f"Build {i} has moved to Gradle.")
        out.append(dispute_propose(newer=newer, older=older, similarity=0.9, reason="r", cues=["moved … to"]))
    return [d.pk for d in out]


def _walk(client, **params):
    pages, after = [], ""
    while True:
        response = client.get("/api/v1/disputes", {"scope": "acme/slides", **params, "after": after})
        assert response.status_code == 200, response.content
        body = response.json()
        if not body:
            return pages
        pages.append([d["id"] for d in body])
        after = body[-1]["cursor"]


def test_the_list_pages_with_each_role_and_hides_other_workspaces(
    project_scope, other_workspace_scope, owner, curator, reviewer, agent, outsider
):
    viewer = user_ensure(username="vic", actor=None)
    grant_add(principal=viewer, scope=project_scope, role=Role.VIEWER, actor=None)
    ours = _disputes(project_scope, 55)
    _disputes(other_workspace_scope, 1)
    for who, principal in (
        ("owner", owner),
        ("curator", curator),
        ("reviewer", reviewer),
        ("viewer", viewer),
        ("agent", agent),
    ):
        client = token_client(principal)
        pages = _walk(client)
        assert [len(p) for p in pages] == [50, 5], who
        assert sum(pages, []) == ours[::-1], who  # newest first, each once, none of another workspace
        assert [len(p) for p in _walk(client, limit=20)] == [20, 20, 15], who
    foreign = token_client(outsider).get("/api/v1/disputes", {"scope": "acme/slides"})
    unknown = token_client(outsider).get("/api/v1/disputes", {"scope": "acme/nowhere"})
    assert foreign.status_code == unknown.status_code == 404 and foreign.json() == unknown.json()
    assert APIClient().get("/api/v1/disputes", {"scope": "acme/slides", "after": "x"}).status_code == 401


@pytest.mark.parametrize(
    "after",
    ["x", "1", "a" * 401, "review-cursor"],
)
def test_a_damaged_or_foreign_cursor_is_a_400_naming_after(project_scope, curator, after):
    _disputes(project_scope, 1)
    if after == "review-cursor":  # signed, but for another list
        after = codec.encode("review", ["2026-01-01T00:00:00+00:00", 1])
    response = token_client(curator).get("/api/v1/disputes", {"scope": "acme/slides", "after": after})
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "invalid_input" and "after" in str(body)
