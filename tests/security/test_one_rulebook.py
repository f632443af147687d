"""Issue 10, part 7: one rulebook. The API and the dashboard answer the same question the same way, and
nothing tells a caller whether an object it may not see exists (unknown and not-yours are one 404)."""

from __future__ import annotations

import re
from pathlib import Path

from django.test import Client

from governance.models import ApiToken, Outbox, Role
from governance.services.grant_membership import group_member_add
from governance.services.principal import grant_add, principal_ensure, token_issue
from tests.conftest import token_client


def _browser(principal, password):
    client = Client()
    assert client.login(username=principal.name, password=password)
    return client


def test_the_dashboard_offers_the_audit_check_only_to_whom_the_api_allows(owner, reviewer):
    reviewer_page = _browser(reviewer, "pw-rami")
    assert token_client(reviewer).get("/api/v1/audit/verify").status_code == 403
    assert reviewer_page.get("/governance/verify/").status_code == 403
    assert b'id="chain-state"' not in reviewer_page.get("/governance/audit/").content
    owner_page = _browser(owner, "pw-olivia")
    assert token_client(owner).get("/api/v1/audit/verify").status_code == 200
    assert owner_page.get("/governance/verify/").status_code == 200
    assert b'id="chain-state"' in owner_page.get("/governance/audit/").content


def test_api_and_dashboard_agree_that_a_turn_above_the_callers_grant_is_not_its_to_read(
    owner,
    reviewer,
    workspace_scope,
    project_scope,
):
    asked = token_client(owner).post(
        "/api/v1/context",
        {"scope": workspace_scope.path, "query": "plans for Q3", "budget_tokens": 200},
        format="json",
    )
    assert asked.status_code == 200
    turn_id = asked.json()["turn_id"]
    api = token_client(reviewer).get(f"/api/v1/turns/{turn_id}")
    dashboard = _browser(reviewer, "pw-rami").get(f"/turns/{turn_id}/")
    assert (api.status_code, dashboard.status_code) == (404, 404)
    # And both show it to the owner who asked.
    assert token_client(owner).get(f"/api/v1/turns/{turn_id}").status_code == 200
    assert _browser(owner, "pw-olivia").get(f"/turns/{turn_id}/").status_code == 200


def test_an_outbox_row_about_no_single_scope_is_not_readable_by_another_workspaces_owner(
    owner, outsider, project_scope
):
    team = principal_ensure(name="slides-team", kind="group", actor=None)
    grant_add(principal=team, scope=project_scope, role=Role.REVIEWER, actor=None)
    # A person: an agent may not join a team that holds a role above the agent role (issue 20).
    member = principal_ensure(name="helper", kind="user", actor=None)
    group_member_add(group=team, member=member, actor=owner)
    row = Outbox.objects.filter(topic="grant.changed", payload__principal_id=member.pk).latest("pk")
    foreign = token_client(outsider).get(f"/api/v1/outbox/{row.pk}")
    unknown = token_client(outsider).get("/api/v1/outbox/987654321")
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.json() == unknown.json()


def test_an_outbox_row_of_a_batch_is_read_within_the_scopes_of_its_memories(
    reviewer, outsider, agent, project_scope
):
    events = token_client(agent).post(
        "/api/v1/events",
        {
            "scope": project_scope.path,
            "session": "s1",
            "turns": [{"role": "user", "content": "Please always export the deck as PDF"}],
        },
        format="json",
    )
    assert events.status_code == 201
    row = Outbox.objects.filter(topic="memory.created", memory__isnull=True).latest("pk")
    assert token_client(reviewer).get(f"/api/v1/outbox/{row.pk}").status_code == 200
    assert token_client(outsider).get(f"/api/v1/outbox/{row.pk}").status_code == 404


def test_unknown_and_foreign_principals_are_the_same_404(outsider, project_scope, agent):
    team = principal_ensure(name="slides-team", kind="group", actor=None)
    grant_add(principal=team, scope=project_scope, role=Role.REVIEWER, actor=None)
    as_outsider = token_client(outsider)
    foreign = as_outsider.post("/api/v1/groups/slides-team/members", {"member": agent.name}, format="json")
    unknown = as_outsider.post("/api/v1/groups/no-such-team/members", {"member": agent.name}, format="json")
    assert foreign.status_code == unknown.status_code == 404 and foreign.json() == unknown.json()
    bound = {"scope": "globex/slides", "role": "agent"}
    foreign = as_outsider.post("/api/v1/tokens", {"principal": agent.name, **bound}, format="json")
    unknown = as_outsider.post("/api/v1/tokens", {"principal": "no-such-agent", **bound}, format="json")
    assert foreign.status_code == unknown.status_code == 404 and foreign.json() == unknown.json()
    assert not ApiToken.objects.filter(principal=agent).exists()


def test_unknown_and_foreign_tokens_are_the_same_404(owner, outsider, agent, project_scope):
    token_issue(principal=agent, scope=project_scope, max_role=Role.AGENT, actor=owner)
    token = ApiToken.objects.get(principal=agent)
    foreign = token_client(outsider).delete(f"/api/v1/tokens/{token.pk}")
    unknown = token_client(outsider).delete("/api/v1/tokens/987654321")
    assert foreign.status_code == unknown.status_code == 404 and foreign.json() == unknown.json()
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None


def test_the_dashboards_grant_form_answers_unknown_and_foreign_scopes_alike(outsider, project_scope, agent):
    browser = _browser(outsider, "pw-otto")
    foreign = browser.post(
        "/governance/grants/add/",
        {"principal": agent.name, "grant_scope": project_scope.path, "role": "viewer"},
    )
    unknown = browser.post(
        "/governance/grants/add/",
        {"principal": agent.name, "grant_scope": "acme/nothing-here", "role": "viewer"},
    )
    assert foreign.status_code == unknown.status_code == 400
    assert foreign.context["error"].message == unknown.context["error"].message


RULES = re.compile(
    r"ROLE_RANK|principal_ids\(\)|require_two_reviewers=True|meta\.get\(\"approvals\"|"
    r"Grant\.objects\.filter\(principal"
)


def test_access_rules_are_written_only_in_the_permission_module():
    """Grant rank, role lookup, four-eyes counting and the scope sets are asked of governance.permissions;
    nobody else reads grants or ranks roles themselves."""
    root = Path(__file__).resolve().parents[2]
    allowed = {
        *(root / "governance" / "permissions").glob("*.py"),
        root / "governance" / "models" / "principal.py",
        root / "governance" / "models" / "__init__.py",
    }
    offenders = [
        f"{path.relative_to(root)}:{n}"
        for package in ("governance", "memoryui")
        for path in (root / package).rglob("*.py")
        if path not in allowed and "migrations" not in path.parts
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if RULES.search(line)
    ]
    assert offenders == []


def test_api_and_dashboard_agree_on_a_memory_of_the_scope_above_the_readers_grant(
    reviewer, outsider, workspace_scope, remember
):
    above = remember(workspace_scope, "The company font is Inter")
    assert token_client(reviewer).get(f"/api/v1/memories/{above.pk}").status_code == 200
    assert _browser(reviewer, "pw-rami").get(f"/memories/{above.pk}/").status_code == 200
    assert token_client(outsider).get(f"/api/v1/memories/{above.pk}").status_code == 404
    assert _browser(outsider, "pw-otto").get(f"/memories/{above.pk}/").status_code == 404
