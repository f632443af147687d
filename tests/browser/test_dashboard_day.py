"""A working day with the dashboard (issue 22), in Chromium against the real stack: find a turn by a word of
its query and ask "why not" for a memory it did not use; decide three review items by keyboard alone and
see each result; every page at 390 px no wider than the window, and axe-core finding no serious or
critical violation on it; the theme switch kept across sign-outs.

axe-core is vendored (tests/data/vendor/axe-4.14.1.min.js, MPL-2.0, unmodified; docs/dependencies.md)."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import expect

from devtools.demo import ensure_demo_user, load_demo
from governance.models import Memory, Scope, Status, Turn
from governance.recall import assemble_context
from governance.services.dispute import dispute_propose
from governance.services.memory import MemoryInput, memory_propose, memory_record
from tests.browser.conftest import settle, sign_in

AXE = Path(__file__).resolve().parents[1] / "data" / "vendor" / "axe-4.14.1.min.js"
PHONE, DESKTOP = {"width": 390, "height": 844}, {"width": 1440, "height": 900}
# Two animation frames first: a viewport just resized fires its "resize" event (which makes a table that now
# scrolls a Tab stop, static/js/common.js) in the next rendering step, and axe must see the page after it.
AXE_RUN = """() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))
  .then(() => axe.run(document, {resultTypes: ["violations"]})).then(r => r.violations
  .filter(v => v.impact === "serious" || v.impact === "critical")
  .map(v => v.id + " (" + v.impact + "): " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | ")))"""


def _propose(scope, text, **kw):
    memory = memory_record(
        item=MemoryInput(
            scope=scope,
            kind=kw.pop("kind", "semantic"),
            text=text,
            source_kind="model_inference",
            status="candidate",
            **kw,
        ),
        actor=None,
    )
    memory_propose(memory_id=memory.pk, actor=None, reason="seen in two sessions")
    return memory


def _demo():
    load_demo()
    demo = ensure_demo_user()
    slides = Scope.objects.get(path="demo/slides")
    # A memory the turn cannot use whatever the worker has embedded by then: it lives in a sibling scope
    # (demo/brochure) that the reader may read but a read in demo/slides never sees. In demo/slides itself
    # the live worker sometimes embedded it before the turn was asked, and with so few memories the vector
    # path then placed it in the evidence: the turn used it and there was no "why not" to ask.
    brochure = Scope.objects.get(path="demo/brochure")
    unused = memory_record(
        item=MemoryInput(
            scope=brochure,
            kind="semantic",
            source_kind="user",
            text="The office plants are watered on Fridays",
            status="active",
        ),
        actor=None,
    )
    asked = assemble_context(
        principal=demo,
        scope=slides,
        query="Which file format do we export the quarterly deck in?",
        budget_tokens=400,
        session="day-1",
    )
    proposals = [
        _propose(slides, t)
        for t in ("Decks use the 16:9 layout", "Speaker notes go in English", "The client logo sits top left")
    ]
    return demo, slides, unused, Turn.objects.get(pk=asked["turn_id"]), proposals


def _proposals_awaiting(heading: str) -> int:
    """The proposals in the queue's heading ("3 proposals and 1 dispute await you"; none: "Nothing …")."""
    found = re.match(r"(\d+) proposals?\b", heading)
    return int(found.group(1)) if found else 0


def test_find_a_turn_ask_why_not_and_decide_three_items_by_keyboard(page, live_server):
    _demo_user, slides, unused, turn, proposals = _demo()
    sign_in(page, "demo", "demo")

    # Find the turn by a word of its query.
    page.goto("/turns/")
    page.get_by_label("Words of the query").fill("quarterly")
    page.get_by_role("button", name="Find turns").click()
    page.wait_for_load_state("networkidle")
    rows = page.locator("table.turns-table tbody tr")
    expect(rows).to_have_count(1)
    rows.first.locator("td[data-label=Query] a").click()
    page.wait_for_url(f"**/turns/{turn.pk}/")

    # Why not the memory about plants? Picked by its words; the answer names the stage and the reason.
    page.locator("#why-not-q").fill("plants watered")
    page.locator("#why-not").get_by_role("button", name="Find").click()
    page.locator(f'a.why-pick[data-memory="{unused.pk}"]').click()
    answer = page.locator("#why-not-result .answer")
    expect(answer).to_be_visible()
    assert answer.get_attribute("data-stage") and answer.get_attribute("data-verdict") != "used"
    expect(answer.locator(".reason")).not_to_be_empty()
    # Its one label (memoryui/labels.py): id, first words, scope.
    label = f"#{unused.pk} The office plants are watered on Fridays · demo/brochure"
    expect(answer.get_by_role("link", name=label)).to_have_attribute("href", f"/memories/{unused.pk}/")

    # Three review items by keyboard alone: confirm, reject with a reason, edit then confirm.
    page.goto("/review/?scope=demo/slides")
    waiting = _proposals_awaiting(page.locator("#queue-count").inner_text())
    items = page.locator(".review-item")
    first = page.locator(f"#item-{proposals[0].pk}")
    first.focus()
    page.keyboard.press(
        "Tab"
    )  # one Tab stop per item: Tab goes to the next item, not into this one's controls
    assert page.evaluate("document.activeElement.classList.contains('review-item')")
    first.focus()
    page.keyboard.press("c")
    expect(first.locator(".outcome .badge")).to_have_text("active")
    assert _proposals_awaiting(page.locator("#queue-count").inner_text()) == waiting - 1
    second = page.locator(f"#item-{proposals[1].pk}")
    expect(second).to_be_focused()
    page.keyboard.press("r")
    page.keyboard.type("the user writes notes in German")
    page.keyboard.press("Enter")
    expect(second.locator(".outcome .badge")).to_have_text("rejected")
    expect(second.locator(".reject-reason")).to_contain_text("the user writes notes in German")
    third = page.locator(f"#item-{proposals[2].pk}")
    expect(third).to_be_focused()
    page.keyboard.press("e")
    page.keyboard.press("Control+a")
    page.keyboard.type("The client logo sits top right")
    for _ in range(3):  # text → key → kind → reason
        page.keyboard.press("Tab")
    page.keyboard.type("the brand guide says right")
    page.keyboard.press("Enter")
    expect(third.locator(".outcome .badge")).to_have_text("active")
    expect(third.locator(".proposed-text")).to_have_text("The client logo sits top right")
    new_id = Memory.objects.get(text="The client logo sits top right").pk
    expect(third.locator("a.result-link")).to_have_attribute("href", f"/memories/{new_id}/")
    assert _proposals_awaiting(page.locator("#queue-count").inner_text()) == waiting - 3
    assert [Memory.objects.get(pk=p.pk).status for p in proposals] == [
        Status.ACTIVE,
        Status.REJECTED,
        Status.REJECTED,
    ]
    assert items.count() >= 3


def test_the_phone_menu_the_dispute_and_the_theme_kept_across_sign_ins(page, live_server):
    _demo_user, slides, unused, turn, _proposals = _demo()
    # A contradiction the system proposed, so the review queue's disputes are on the page axe reads.
    older, newer = (
        memory_record(
            item=MemoryInput(scope=slides, kind="semantic", source_kind="user", text=text, status="active"),
            actor=None,
        )
        for text in ("We host the decks on Dropbox.", "We have moved the decks to SharePoint.")
    )
    dispute_propose(newer=newer, older=older, similarity=0.84, reason="another value", cues=["moved … to"])
    # Every page in both themes at both widths: tests/browser/test_dashboard_sweep.py.
    sign_in(page, "demo", "demo")
    page.set_viewport_size(PHONE)
    page.goto("/review/")
    # The dispute made above (this pair) is listed once, and the SharePoint memory is in no other: the live
    # worker, if it has embedded them, proposes the same pair (one per pair) and no dispute with the demo's
    # rule about the decks' format (tests/governance/recall/test_dispute_precision.py).
    pair = page.locator(".dispute-item").filter(has_text="SharePoint").filter(has_text="Dropbox")
    expect(pair).to_have_count(1)
    expect(page.locator(".dispute-item").filter(has_text="SharePoint")).to_have_count(1)

    # The header folds into a menu on a phone.
    page.goto("/")
    expect(page.get_by_role("navigation", name="Pages")).to_be_hidden()
    page.get_by_role("button", name="Menu").click()
    expect(page.get_by_role("navigation", name="Pages")).to_be_visible()

    # The theme switch: dark, kept after signing out and in again (a cookie the server reads).
    page.set_viewport_size(DESKTOP)
    with page.expect_navigation():
        page.get_by_label("Theme").select_option("dark")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, "demo", "demo")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(13, 17, 23)"
    page.add_script_tag(path=str(AXE))
    assert page.evaluate(AXE_RUN) == []  # the dark theme too

    # At 1440 px and 2,560 px too, the widest pages fit (meaning search was 1,474 px wide at 1440).
    for size in (DESKTOP, {"width": 2560, "height": 1440}):
        page.set_viewport_size(size)
        for url in (
            "/memories/?scope=demo&mode=meaning&q=export+format",
            "/memories/?scope=demo",
            f"/turns/{turn.pk}/",
        ):
            page.goto(url)
            settle(page)
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (size, url)
