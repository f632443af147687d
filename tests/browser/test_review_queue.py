"""End to end in Chromium: a reviewer walks a queue of 50 proposals by keyboard only — confirms most,
edits one then confirms it, rejects some with a reason each, skips two — and the database ends in exactly
that state (statuses, who confirmed, the reasons in the audit log). Disputes are in the same walk: two
proposals and a dispute decided by keyboard alone, in place, at 1440 and 390 px, light and dark, with
axe-core finding no serious or critical violation before and after.

axe-core is vendored (tests/data/vendor/axe-4.14.1.min.js, MPL-2.0, unmodified; docs/dependencies.md)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from governance.models import AuditEvent, Dispute, DisputeState, Memory, Status
from governance.services.dispute import dispute_propose
from governance.services.memory import MemoryInput, memory_record_batch
from tests.browser.conftest import settle, sign_in

N = 50
REJECT = {5, 12, 20, 33, 41}
SKIP = {3, 4}
EDIT = 9
EDITED_TEXT = "The client wants slide numbers on every page, bottom right"


def plan(i: int) -> str:
    return "reject" if i in REJECT else "skip" if i in SKIP else "edit" if i == EDIT else "confirm"


def test_reviewer_walks_a_queue_of_50_by_keyboard(page, reviewer, agent, project_scope):
    proposals = memory_record_batch(
        items=[
            MemoryInput(
                scope=project_scope,
                kind="preference",
                text=f"Proposal {i}: the client likes layout {i}",
                source_kind="user",
                status="proposed",
                session="s-review",
            )
            for i in range(N)
        ],
        actor=agent,
    )
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sign_in(page, "rami", "pw-rami")
    page.goto("/review/?scope=acme/slides")
    expect(
        page.get_by_role("heading", name=re.compile(r"Review queue .*50 proposals await you"))
    ).to_be_visible()

    # The help overlay opens with ? and closes with Escape.
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_hidden()

    page.keyboard.press("j")  # the first item becomes current
    for i, memory in enumerate(proposals):
        item = page.locator(f"#item-{memory.pk}")
        expect(item).to_have_class(re.compile(r"\bcurrent\b"))
        expect(item).to_be_focused()
        action = plan(i)
        if action == "skip":
            page.keyboard.press("j")
            continue
        if action == "confirm":
            page.keyboard.press("c")
        elif action == "reject":
            page.keyboard.press("r")
            expect(item.get_by_label("Reason (required)")).to_be_focused()
            page.keyboard.type(f"Not what the client said (item {i})")
            page.keyboard.press("Enter")
        else:
            page.keyboard.press("e")
            expect(item.get_by_label("Text", exact=True)).to_be_focused()
            page.keyboard.press("Control+a")
            page.keyboard.type(EDITED_TEXT)
            page.keyboard.press("Tab")  # key
            page.keyboard.press("Tab")  # kind
            page.keyboard.press("Tab")  # why
            page.keyboard.type("The user named the position")
            page.keyboard.press("Enter")
        expect(item).to_have_class(re.compile(r"\bdecided\b"))
        # A decided card collapses: its Confirm, Edit and Reject controls are gone from view (the page
        # hides them; no component's display rule may show them again).
        for control in item.locator(".decide form:not(.undo-reject)").all():
            expect(control).to_be_hidden()
    # The walk ends on the last item; k goes back up past decided items to the last one skipped.
    page.keyboard.press("k")
    expect(page.locator(f"#item-{proposals[4].pk}")).to_be_focused()
    assert errors == []

    rows = {m.pk: m for m in Memory.objects.filter(pk__in=[p.pk for p in proposals])}
    for i, memory in enumerate(proposals):
        row, action = rows[memory.pk], plan(i)
        expected = {
            "confirm": Status.ACTIVE,
            "reject": Status.REJECTED,
            "skip": Status.PROPOSED,
            "edit": Status.REJECTED,
        }[action]
        assert row.status == expected, (i, action, row.status)
        if action == "confirm":
            assert row.confirmed_by_id == reviewer.pk
        if action == "reject":
            event = AuditEvent.objects.get(
                target_type="memory", target_id=str(memory.pk), action="memory.reject"
            )
            assert (event.actor_id, event.reason) == (reviewer.pk, f"Not what the client said (item {i})")
    edited = Memory.objects.get(meta__edited_from=proposals[EDIT].pk)
    assert (edited.text, edited.status, edited.created_by_id, edited.confirmed_by_id) == (
        EDITED_TEXT,
        Status.ACTIVE,
        reviewer.pk,
        reviewer.pk,
    )
    confirm = AuditEvent.objects.get(target_type="memory", target_id=str(edited.pk), action="memory.confirm")
    assert confirm.reason == "The user named the position"
    assert Memory.objects.filter(pk__in=[p.pk for p in proposals], status=Status.PROPOSED).count() == len(
        SKIP
    )


def test_review_queue_works_without_javascript(browser, live_server, reviewer, project_scope):
    """Progressive enhancement: with JavaScript off, each decision is a plain form post."""
    from governance.services.memory import memory_record

    item = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="preference",
            text="The user likes green",
            source_kind="user",
            status="proposed",
        ),
        actor=None,
    )
    context = browser.new_context(java_script_enabled=False, base_url=live_server.url)
    page = context.new_page()
    try:
        sign_in(page, "rami", "pw-rami")
        page.goto("/review/?scope=acme/slides")
        entry = page.locator(f"#item-{item.pk}")
        entry.get_by_text("Reject…").click()
        entry.get_by_label("Reason (required)").fill("green was the old brand")
        entry.get_by_role("button", name="Reject", exact=True).click()
        expect(page.locator(".msg.success")).to_contain_text(f"Rejected #{item.pk}")
        assert Memory.objects.get(pk=item.pk).status == Status.REJECTED
    finally:
        context.close()


def test_similar_memories_load_inline_and_the_supersedes_shortcut_takes_the_key(
    page, reviewer, project_scope
):
    from tests.memoryui.conftest import remember

    fact = remember(project_scope, "Export slides as PPTX", kind="convention", key="export_format")
    item = remember(
        project_scope, "Export the slides as PDF from now on", kind="convention", status="proposed"
    )
    sign_in(page, "rami", "pw-rami")
    page.goto("/review/?scope=acme/slides")
    entry = page.locator(f"#item-{item.pk}")
    hit = entry.locator(f".similar-hit[data-memory='{fact.pk}']")
    expect(hit).to_contain_text("Export slides as PPTX")
    expect(hit).to_contain_text("active, score")
    hit.get_by_role("button", name="This supersedes export_format").click()
    form = entry.locator(".decide-edit")
    expect(form.get_by_label("Key")).to_have_value("export_format")
    expect(form.get_by_label("Text", exact=True)).to_be_focused()
    page.keyboard.press("Control+Enter")
    expect(entry).to_have_class(re.compile(r"\bdecided\b"))
    edited = Memory.objects.get(meta__edited_from=item.pk)
    assert (edited.key, edited.revision, edited.status) == ("export_format", 2, Status.ACTIVE)
    assert Memory.objects.get(pk=fact.pk).status == Status.SUPERSEDED


def test_similar_memories_loaded_into_an_item_are_no_tab_stops(page, reviewer, project_scope):
    """The similar memories arrive after the page has made each item one Tab stop; their links and the
    supersedes shortcut are reached by shortcut too, so Tab still goes from an item to the next item."""
    from tests.memoryui.conftest import remember

    fact = remember(project_scope, "Export slides as PPTX", kind="convention", key="export_format")
    item = remember(
        project_scope, "Export the slides as PDF from now on", kind="convention", status="proposed"
    )
    remember(project_scope, "Use the wide slide template", kind="convention", status="proposed")
    sign_in(page, "rami", "pw-rami")
    page.goto("/review/?scope=acme/slides")
    entry = page.locator(f"#item-{item.pk}")
    expect(entry.locator(f".similar-hit[data-memory='{fact.pk}'] a")).to_be_visible()
    entry.focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.classList.contains('review-item')")
    assert page.evaluate("document.activeElement.id") != f"item-{item.pk}"


def test_x_selects_items_for_one_bulk_decision(page, reviewer, project_scope):
    from tests.memoryui.conftest import remember

    items = [
        remember(project_scope, f"Bulk proposal {i} about fonts", kind="preference", status="proposed")
        for i in range(3)
    ]
    sign_in(page, "rami", "pw-rami")
    page.goto("/review/?scope=acme/slides")
    settle(page)
    boxes = page.locator(".review-item input[name=memory]")
    # Into the queue as Tab or a click brings a reviewer there (the first item focused is the current one),
    # whatever the page focused on load.
    page.locator(".review-item").first.focus()
    expect(page.locator(".review-item.current")).to_have_count(1)
    page.keyboard.press("x")  # first
    expect(boxes.nth(0)).to_be_checked()
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("x")  # third
    expect(boxes.nth(2)).to_be_checked()
    expect(page.locator("[data-selected-count]")).to_have_text("(2 selected)")
    expect(page.locator("#review-form")).to_have_class(re.compile(r"\bin-use\b"))
    page.get_by_role("button", name="Confirm selected").focus()
    page.keyboard.press("Enter")
    expect(page.locator(".msg.success")).to_contain_text("Confirmed 2 of 2")
    statuses = [Memory.objects.get(pk=m.pk).status for m in items]
    assert statuses == [Status.ACTIVE, Status.PROPOSED, Status.ACTIVE]


def test_a_reject_is_undone_by_proposing_it_again(page, reviewer, project_scope):
    from tests.memoryui.conftest import remember

    first = remember(
        project_scope, "The client wants a dark title slide", kind="preference", status="proposed"
    )
    remember(project_scope, "The client wants a light appendix", kind="preference", status="proposed")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sign_in(page, "rami", "pw-rami")
    page.goto("/review/?scope=acme/slides")
    entry = page.locator(f"#item-{first.pk}")
    page.keyboard.press("j")
    page.keyboard.press("r")
    page.keyboard.type("Not what the client said")
    page.keyboard.press("Enter")
    undo = entry.get_by_role("button", name="Undo (propose again)")
    expect(undo).to_be_visible()
    expect(undo).to_have_attribute("tabindex", "-1")  # one Tab stop per item: u reaches it
    page.keyboard.press("u")  # the next item is current now; u undoes the reject just made
    link = entry.locator("a.result-link")
    expect(link).to_be_visible()
    new = Memory.objects.get(meta__reproposed__from=first.pk)
    expect(link).to_have_attribute("href", f"/memories/{new.pk}/")
    expect(entry.locator(".outcome .badge")).to_have_text("proposed")
    expect(undo).to_have_count(0)
    assert (new.status, new.text) == (Status.PROPOSED, first.text)
    assert Memory.objects.get(pk=first.pk).status == Status.REJECTED
    assert errors == []


AXE = Path(__file__).resolve().parents[1] / "data" / "vendor" / "axe-4.14.1.min.js"
AXE_RUN = """() => axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
  .filter(v => v.impact === "serious" || v.impact === "critical")
  .map(v => v.id + " (" + v.impact + "): " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | ")))"""
DISPUTE_REASON = "品牌手册已改为黑体"


class Keys:
    """The keyboard, counting every key pressed (a typed character is one key)."""

    def __init__(self, page):
        self.page, self.count = page, 0

    def press(self, key: str) -> None:
        self.count += 1
        self.page.keyboard.press(key)

    def type(self, text: str) -> None:
        self.count += len(text)
        self.page.keyboard.type(text)


def _axe(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    return page.evaluate(AXE_RUN)


@pytest.mark.parametrize(
    "width,theme", [(1440, "light"), (1440, "dark"), (390, "light"), (390, "dark")], ids=str
)
def test_two_proposals_and_a_dispute_decided_by_keyboard_alone(
    page, live_server, curator, project_scope, width, theme
):
    from tests.memoryui.conftest import remember

    proposals = [
        remember(project_scope, "The client wants slide numbers bottom right", status="proposed"),
        remember(project_scope, "客户希望每页都有页码", kind="preference", status="proposed"),
    ]
    older, newer = (
        remember(project_scope, text, occurred_at=timezone.now() - timedelta(days=days))
        for text, days in (("演示文稿使用宋体。", 20), ("The decks now use Heiti (黑体) for every title.", 2))
    )
    dispute = dispute_propose(newer=newer, older=older, similarity=0.84, reason="another value", cues=["now"])
    page.set_viewport_size({"width": width, "height": 900})
    page.context.add_cookies([{"name": "theme", "value": theme, "url": live_server.url}])
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sign_in(page, "cora", "pw-cora")
    page.goto("/review/?scope=acme/slides")
    heading = page.locator("#queue-count")
    expect(heading).to_have_text("2 proposals and 1 dispute await you")
    expect(page.locator("#nav-awaiting [data-n]")).to_have_text("3")
    assert page.evaluate("document.documentElement.dataset.theme") == theme
    assert _axe(page) == []
    page.evaluate("window.__sameDocument = true")  # gone if anything reloads the page

    keys = Keys(page)
    card = page.locator(f"#dispute-{dispute.pk}")
    expect(card).to_contain_text("演示文稿使用宋体。")
    keys.press("j")  # the dispute is the first card of the walk
    expect(card).to_be_focused()
    keys.press("n")  # the newer one holds: the reason is asked
    expect(card.get_by_label("Why it holds (required)")).to_be_focused()
    keys.type(DISPUTE_REASON)
    keys.press("Enter")
    expect(card).to_have_class(re.compile(r"\bdecided\b"))
    expect(card.locator(".outcome .badge")).to_have_text("the newer holds")
    expect(card.locator("a.result-link")).to_have_attribute("href", f"/memories/{newer.pk}/")
    expect(card.locator(".side-by-side")).to_be_hidden()  # collapsed to its result
    expect(card.locator(".decide details, .decide form")).to_have_count(3)  # its details, both forms
    for control in card.locator(".decide details, .decide form").all():
        expect(control).to_be_hidden()
    expect(heading).to_have_text("2 proposals await you")
    for memory in proposals:
        item = page.locator(f"#item-{memory.pk}")
        expect(item).to_be_focused()  # the walk goes on from the dispute to the proposals
        keys.press("c")
        expect(item.locator(".outcome .badge")).to_have_text("active")
        expect(item.locator(".provenance")).to_be_hidden()
    expect(heading).to_have_text("Nothing here awaits your decision")
    expect(page.locator("#nav-awaiting")).to_have_count(0)
    print(
        f"\nkeys at {width} px, {theme}: {keys.count} ({keys.count - len(DISPUTE_REASON)} keys and a "
        f"{len(DISPUTE_REASON)}-character reason) for two proposals and a dispute"
    )
    assert keys.count == 5 + len(DISPUTE_REASON)  # j, n, Enter, c, c
    assert page.evaluate("window.__sameDocument === true")  # decided in place, no reload
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert _axe(page) == []  # the decided cards too
    assert errors == []

    settled = Dispute.objects.get(pk=dispute.pk)
    assert (settled.state, settled.holds_id, settled.decided_by_id) == (
        DisputeState.CONFIRMED,
        newer.pk,
        curator.pk,
    )
    assert Memory.objects.get(pk=older.pk).status == Status.SUPERSEDED
    assert (
        AuditEvent.objects.get(action="dispute.confirm", target_id=str(dispute.pk)).reason == DISPUTE_REASON
    )
    assert [Memory.objects.get(pk=m.pk).confirmed_by_id for m in proposals] == [curator.pk, curator.pk]


def test_a_dispute_is_decided_without_javascript_too(browser, live_server, curator, project_scope):
    """Progressive enhancement: with JavaScript off the dispute's forms post and the queue comes back."""
    from tests.memoryui.conftest import remember

    older = remember(project_scope, "We host the decks on Dropbox.")
    newer = remember(project_scope, "我们已把演示文稿迁到 SharePoint。")
    dispute = dispute_propose(
        newer=newer, older=older, similarity=0.84, reason="another value", cues=["迁到"]
    )
    context = browser.new_context(java_script_enabled=False, base_url=live_server.url)
    page = context.new_page()
    try:
        sign_in(page, "cora", "pw-cora")
        page.goto("/review/?scope=acme/slides")
        card = page.locator(f"#dispute-{dispute.pk}")
        card.get_by_text("Say which one holds…").click()
        card.get_by_label(f"the older, #{older.pk}").check()
        card.get_by_label("Why it holds (required)").fill("the move was called off")
        card.get_by_role("button", name="Confirm").click()
        expect(page.locator(".msg.success")).to_contain_text(
            f"Dispute {dispute.pk} settled: #{older.pk} holds"
        )
        assert Memory.objects.get(pk=newer.pk).status == Status.SUPERSEDED
    finally:
        context.close()


def test_a_reviewer_dismisses_a_dispute_with_d_and_is_told_who_says_which_holds(
    page, reviewer, project_scope
):
    from tests.memoryui.conftest import remember

    older = remember(project_scope, "Decks are reviewed on Mondays.")
    newer = remember(project_scope, "幻灯片改为周二审阅。")
    dispute = dispute_propose(newer=newer, older=older, similarity=0.8, reason="another value", cues=["改为"])
    sign_in(page, "rami", "pw-rami")
    page.goto("/review/?scope=acme/slides")
    card = page.locator(f"#dispute-{dispute.pk}")
    expect(page.locator("#queue-count")).to_have_text("1 dispute awaits you")
    page.keyboard.press("j")
    page.keyboard.press("n")  # a reviewer may not end a memory: told so, nothing posted
    expect(card.locator(".outcome")).to_have_text(
        "Saying which one holds needs the curator or owner role here; d dismisses the dispute."
    )
    assert Dispute.objects.get(pk=dispute.pk).state == DisputeState.PROPOSED
    page.keyboard.press("d")
    expect(card.locator(".outcome .badge")).to_have_text("both stand")
    expect(page.locator("#queue-count")).to_have_text("Nothing here awaits your decision")
    assert Dispute.objects.get(pk=dispute.pk).state == DisputeState.DISMISSED
    assert {m.status for m in Memory.objects.filter(pk__in=[older.pk, newer.pk])} == {Status.ACTIVE}
