"""End to end in Chromium, at 1440 and 390 px: a stored turn's page names every memory each stage dropped
(the rest behind "and N more"), a forgotten one without words, each with a "why not" that answers on the
page; "Try a query" does the same for its dry-run packet and answers "why not" for a memory picked from the
scope. axe-core finds no serious or critical violation on either, and nothing is wider than the window."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from governance.models import Memory, Turn
from governance.propagation import embed_memories
from governance.recall import assemble_context
from governance.services.memory import memory_forget
from tests.browser.conftest import settle, sign_in
from tests.browser.test_dashboard_day import AXE, AXE_RUN, DESKTOP, PHONE
from tests.memoryui.conftest import remember
from tests.memoryui.test_turn_drops import MANY, QUERY, _note, _zh


def _world(project_scope):
    for i in range(MANY):
        remember(project_scope, _note(i), kind="episodic")
        remember(project_scope, _zh(i), kind="episodic")
    embed_memories(list(Memory.objects.values_list("pk", flat=True)))
    result = assemble_context(principal=None, scope=project_scope, query=QUERY, budget_tokens=300)
    return Turn.objects.get(pk=result["turn_id"])


def _fits_and_axe_is_quiet(page, where: str) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), where
    page.add_script_tag(path=str(AXE))
    assert page.evaluate(AXE_RUN) == [], where


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1440", "390"])
def test_a_turn_and_a_tried_query_name_every_drop_with_a_why_not(page, reviewer, project_scope, size):
    turn = _world(project_scope)
    counts = turn.trace["counts"]
    not_placed = counts["pack"]["ids"]["not_placed"]
    forgotten = counts["fuse"]["ids"]["cut"][0]
    memory_forget(memory_id=forgotten, actor=None, reason="asked to")
    page.set_viewport_size(size)
    sign_in(page, "rami", "pw-rami")

    page.goto(f"/turns/{turn.pk}/")
    settle(page)
    fuse = page.locator('#why li[data-stage="fuse"]')
    expect(fuse.locator('li[data-reason="cut"]')).to_contain_text("below the fusion cut-off")
    expect(fuse.locator(f'li[data-dropped="{forgotten}"]')).to_have_text(
        re.compile(r"^\s*a forgotten memory\s+why not #\d+\?\s*$")
    )
    pack = page.locator('#why li[data-stage="pack"] li[data-reason="not_placed"]')
    expect(pack.locator("li[data-dropped]")).to_have_count(len(not_placed))
    hidden = pack.locator("details.more li[data-dropped]")
    expect(hidden.first).to_be_hidden()
    pack.locator("details.more summary").click()
    expect(hidden.first).to_be_visible()
    # "why not" on a dropped memory answers in the Why not card, which scrolls into view.
    last = not_placed[-1]
    pack.locator(f'li[data-dropped="{last}"]').get_by_role("link", name=f"why not #{last}?").click()
    answer = page.locator("#why-not-result .answer")
    expect(answer).to_have_attribute("data-memory", str(last))
    expect(answer).to_contain_text("not among the best of its slot")
    expect(answer).to_be_in_viewport()
    _fits_and_axe_is_quiet(page, f"turn {size}")

    page.goto("/turns/")
    settle(page)
    panel = page.locator("#try-query")
    panel.locator("summary").click()
    panel.get_by_label("Query", exact=True).fill(QUERY)
    panel.get_by_label("Budget").fill("300")
    panel.get_by_role("button", name="Assemble").click()
    tried = page.locator("#try-result")
    cut = tried.locator('li[data-stage="fuse"] li[data-reason="cut"] li[data-dropped]')
    expect(cut.first).to_be_visible()
    first = cut.first.get_attribute("data-dropped")
    cut.first.get_by_role("button", name=f"why not #{first}?").click()
    answer = tried.locator("#try-why-not-result .answer")
    expect(answer).to_have_attribute("data-verdict", "cut by fusion")
    # A memory picked from the scope by its Chinese words.
    tried.get_by_label("Memory", exact=True).fill("标签乙007")
    tried.get_by_role("button", name="Find").click()
    pick = tried.locator("#try-why-not-result .why-pick")
    expect(pick).to_have_count(1)
    pick.click()
    expect(tried.locator("#try-why-not-result .answer")).to_contain_text("标签乙007")
    _fits_and_axe_is_quiet(page, f"try {size}")
