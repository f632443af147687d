"""End to end in Chromium: a reviewer confirms a proposal; a curator supersedes a memory and sees it in the
timeline and the graph, then forgets one and sees it gone from the turn's replay."""

import re

from playwright.sync_api import expect

from governance.models import Memory, Status
from governance.recall import assemble_context
from tests.browser.conftest import nav, sign_in
from tests.memoryui.conftest import remember


def test_reviewer_confirms_a_proposal_from_the_review_queue(page, reviewer, project_scope):
    from governance.services.memory import memory_propose

    proposal = remember(project_scope, "The user prefers dark themes", kind="preference", status="candidate")
    memory_propose(memory_id=proposal.pk, actor=None)
    sign_in(page, "rami", "pw-rami")
    nav(page, "Review")
    expect(page.get_by_role("heading", name=re.compile("Review queue"))).to_be_visible()
    page.get_by_label(f"Select memory {proposal.pk}").check()
    page.get_by_role("button", name="Confirm selected").click()
    expect(page.locator(".msg.success")).to_contain_text("Confirmed 1 of 1")
    expect(page.get_by_text("Nothing waits for review here")).to_be_visible()
    assert Memory.objects.get(pk=proposal.pk).status == Status.ACTIVE


def test_reviewer_is_not_offered_curation(page, reviewer, project_scope):
    fact = remember(project_scope, "Export slides as PDF", kind="convention", key="export_format")
    sign_in(page, "rami", "pw-rami")
    page.goto(f"/memories/{fact.pk}/")
    expect(page.get_by_text("No action is open to you")).to_be_visible()
    expect(page.get_by_text("Supersede with a new text")).to_have_count(0)


def test_curator_supersedes_and_sees_it_in_timeline_and_graph(page, curator, project_scope):
    fact = remember(project_scope, "Export slides as PDF", kind="convention", key="export_format")
    remember(project_scope, "The client likes short decks", kind="preference")
    sign_in(page, "cora", "pw-cora")
    nav(page, "Memories")
    expect(page.locator("#memory-table")).to_contain_text("2 memories")
    page.get_by_label("Text", exact=True).fill("PDF")  # htmx swaps the table as the user types
    expect(page.locator("#memory-table")).to_contain_text("1 memory")
    page.locator("#memory-table").get_by_role("link", name=re.compile("Export slides as PDF")).click()
    page.locator("summary", has_text="Supersede with a new text").click()
    page.get_by_label("New text").fill("Export slides as PPTX")
    page.locator("#reason-supersede").fill("the client asked for PowerPoint")
    # Who decides is said where the person acts; a supersede can itself be superseded: no "cannot be
    # undone" box to tick.
    expect(page.locator(".who-decides")).to_contain_text("one person")
    expect(page.locator("details[open] input[name=irreversible]")).to_have_count(0)
    page.locator("details[open] button[data-action=supersede]").click()
    expect(page.get_by_role("heading", name=re.compile("export_format revision 2"))).to_be_visible()
    expect(page.locator(".msg.success")).to_contain_text("supersede")
    expect(page.locator("ol.chain")).to_contain_text("Export slides as PDF")
    expect(page.locator("#activation-curve[data-ready] svg polyline.curve")).to_be_attached()

    nav(page, "Timeline")
    chart = page.locator("#timeline-chart")
    expect(chart).to_have_attribute("data-ready", "1")
    expect(chart.locator(".legendtext")).to_contain_text(["export_format r2"])
    assert not any(
        "r1" in t for t in chart.locator(".legendtext").all_text_contents()
    )  # superseded: out of the top

    nav(page, "Graph")
    expect(page.locator("#graph-chart")).to_have_attribute("data-ready", "1")
    expect(page.locator("#graph-summary")).to_contain_text("2 memories, 1 relations")
    links = page.locator("#graph-list a")
    expect(links).to_contain_text(
        ["export_format r2 · acme/slides (active)", "export_format r1 · acme/slides (superseded)"],
        ignore_case=False,
    )
    # The keyboard path: the graph's memories are also a list of links that shows itself on focus.
    page.locator(f"#graph-list a[data-memory='{fact.pk}']").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=re.compile("export_format revision 1"))).to_be_visible()


def test_curator_forgets_a_memory_and_the_replay_drops_it(page, curator, project_scope):
    keep = remember(project_scope, "Slides use the company template", kind="convention", key="template")
    drop = remember(project_scope, "Slides are exported as PDF files", kind="convention", key="export_format")
    turn = assemble_context(
        principal=curator,
        scope=project_scope,
        query="how are slides exported and styled",
        budget_tokens=800,
        session="s1",
    )
    cited = {
        b.get("memory_id") for slot, blocks in turn["packet"].items() if slot != "skipped" for b in blocks
    }
    assert {keep.pk, drop.pk} <= cited, turn["packet"]

    sign_in(page, "cora", "pw-cora")
    page.goto(f"/memories/{drop.pk}/")
    page.locator("summary", has_text="Forget (soft").click()
    page.locator("#reason-forget").fill("the user asked us to forget it")
    page.locator("details[open] input[name=irreversible]").check()
    page.locator("details[open] button[data-action=forget]").click()
    expect(page.get_by_role("heading", name=re.compile("forgotten"))).to_be_visible()

    page.goto(f"/turns/{turn['turn_id']}/")
    expect(page.locator("main")).not_to_contain_text("Slides are exported as PDF files")
    page.get_by_role("button", name="Replay now").click()
    replay = page.locator("#replay")
    expect(replay.locator(f"[data-removed='{drop.pk}']")).to_have_count(1)
    expect(replay).not_to_contain_text("Slides are exported as PDF files")
    expect(replay).to_contain_text("template")
