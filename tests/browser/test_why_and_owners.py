"""End to end in Chromium: an owner is stopped from removing the last owner; a reviewer goes from a turn
to why a memory was not used."""

import re

from playwright.sync_api import expect

from governance.models import Grant, Role, Turn, TurnMemory
from governance.permissions import LAST_OWNER
from governance.services.principal import grant_add, principal_ensure
from tests.browser.conftest import nav, sign_in
from tests.memoryui.conftest import remember


def test_an_owner_is_stopped_from_removing_the_last_owner(page, owner, workspace_scope, reviewer):
    # A team holding owner with no member does not count, so olivia stays the last owner of acme.
    team = principal_ensure(name="platform", kind="group", actor=None)
    team_grant = grant_add(principal=team, scope=workspace_scope, role=Role.OWNER, actor=None)
    sign_in(page, "olivia", "pw-olivia")
    nav(page, "Governance")
    own_row = page.locator("#grants tr", has_text="olivia")
    expect(own_row).to_contain_text("last owner")
    expect(own_row.get_by_role("link", name=re.compile("Revoke"))).to_have_count(0)
    # Revoking the empty team's grant is allowed (it covers nothing), through the confirm page with a reason.
    page.get_by_role("link", name="Revoke owner of platform on acme").click()
    expect(page.get_by_role("heading", name="Revoke a grant")).to_be_visible()
    page.get_by_label(re.compile("Reason")).fill("the team was never staffed")
    page.get_by_role("button", name="Revoke").click()
    expect(page.locator(".msg.success")).to_contain_text("Revoked owner of platform on acme")
    assert not Grant.objects.filter(pk=team_grant.pk).exists()
    # Her own last grant, asked for by address, is refused with the sentence and no revoke button.
    mine = Grant.objects.get(principal=owner, scope=workspace_scope)
    page.goto(f"/governance/grants/revoke/?grant={mine.pk}")
    expect(page.get_by_role("alert")).to_contain_text(LAST_OWNER.format(path="acme"))
    expect(page.get_by_role("button", name="Revoke")).to_have_count(0)
    assert Grant.objects.filter(pk=mine.pk).exists()


def test_from_a_turn_to_why_memory_x_was_not_used(page, reviewer, project_scope):
    used = remember(project_scope, "Export slides as PPTX", kind="convention", key="export_format")
    cold = remember(project_scope, "The client once asked for a PDF handout", kind="episodic")
    turn = Turn.objects.create(
        scope=project_scope,
        session="s1",
        query="how do we export?",
        budget_limit=300,
        budget_used=40,
        packet={
            "constraints": [
                {
                    "memory_id": used.pk,
                    "text": used.text,
                    "status": "active",
                    "score": 0.9,
                    "reason": "keyed fact in force",
                }
            ],
            "skipped": [
                {
                    "memory_id": cold.pk,
                    "text": cold.text,
                    "status": "active",
                    "slot": "evidence",
                    "score": 0.1,
                    "reason": "cold and not among the best matches",
                    "stage": "rank",
                }
            ],
        },
        trace={
            "stages": [
                {"name": "eligible", "ms": 1, "in": 2, "out": 2},
                {"name": "rank", "ms": 1, "in": 2, "out": 1},
                {"name": "pack", "ms": 1, "in": 1, "out": 1},
            ]
        },
    )
    TurnMemory.objects.create(turn=turn, memory=used, slot="constraints", included=True)
    TurnMemory.objects.create(turn=turn, memory=cold, slot="evidence", included=False)
    sign_in(page, "rami", "pw-rami")
    nav(page, "Turns")
    page.get_by_role("link", name="how do we export?").click()
    rank = page.locator('#why li[data-stage="rank"]')
    expect(rank).to_contain_text("2 came in → 1 went out")
    expect(rank).to_contain_text("cold and not among the best matches")
    rank.get_by_role("link", name=re.compile("The client once asked")).click()
    uses = page.locator("#turn-uses")
    expect(uses).to_contain_text("skipped at rank")
    expect(uses.locator(f'tr[data-turn="{turn.pk}"]')).to_contain_text("cold and not among the best matches")
