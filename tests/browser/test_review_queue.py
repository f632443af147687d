"""End to end in Chromium: a reviewer walks a queue of 50 proposals by keyboard only — confirms most,
edits one then confirms it, rejects some with a reason each, skips two — and the database ends in exactly
that state (statuses, who confirmed, the reasons in the audit log)."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from governance.models import AuditEvent, Memory, Status
from governance.services.memory import MemoryInput, memory_record_batch
from tests.browser.conftest import sign_in

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
    expect(page.get_by_role("heading", name=re.compile(r"Review queue .*\(50\)"))).to_be_visible()

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
    page.keyboard.press("j")
    page.keyboard.press("x")  # first
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("x")  # third
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
