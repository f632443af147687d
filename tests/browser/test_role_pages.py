"""In Chromium: the pages issue 51 asked to lead somewhere, at 1440 and 390 px, light and dark, with axe-core
finding no serious or critical violation: a reviewer's menu and the pages it may still open by address;
an owner making an invitation, copying its link with the button (Clipboard API, and the select-all fallback
when the clipboard is refused) and reloading without a second link; a forgotten memory's tombstone and its
timeline."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from governance.models import Invitation
from governance.services.memory import memory_forget
from tests.browser.conftest import nav, settle, sign_in
from tests.browser.test_dashboard_day import AXE, AXE_RUN, DESKTOP, PHONE
from tests.memoryui.conftest import remember

CHINESE = "在公告发布之前不要提及客户的合并计划"


def _check_here(page, label: str, problems: dict) -> None:
    """The document as it is, at both widths and in both themes (no navigation: a page shown once stays)."""
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for size in (DESKTOP, PHONE):
            page.set_viewport_size(size)
            key = f"{label} {scheme} {size['width']}"
            width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            if width[0] > width[1]:
                problems.setdefault(key, []).append(f"too wide: {width}")
            if not page.evaluate("typeof window.axe") == "object":
                page.add_script_tag(path=str(AXE))
            found = page.evaluate(AXE_RUN)
            if found:
                problems.setdefault(key, []).extend(found)


def _sweep(page, urls: list[str]) -> dict:
    """Every page at both widths and in both themes: no horizontal scroll on a phone, no serious or critical
    axe-core finding."""
    problems: dict[str, list] = {}
    for url in urls:
        page.goto(url)
        settle(page)
        _check_here(page, url, problems)
    return problems


def test_a_reviewers_menu_leads_somewhere_and_the_other_pages_say_whom_to_ask(
    page, owner, reviewer, project_scope
):
    active = remember(project_scope, "Export slides as PPTX", kind="convention", key="export_format")
    sign_in(page, "rami", "pw-rami")
    menu = page.get_by_role("navigation", name="Pages")
    expect(menu.get_by_role("link", name="Webhooks")).to_have_count(0)
    expect(menu.get_by_role("link", name="Export/import")).to_have_count(0)
    expect(menu.get_by_role("link", name="Admin", exact=True)).to_have_count(0)
    nav(page, "Members")
    expect(page.locator("#my-standing")).to_contain_text("Owners of acme/slides (olivia) manage its grants.")
    page.goto("/webhooks/")
    expect(page.locator("#no-webhook-workspace")).to_contain_text("Ask an owner of acme (olivia)")
    page.goto(f"/memories/{active.pk}/")
    expect(page.locator("#no-action")).to_contain_text("you can confirm or reject proposals there")
    urls = [
        "/",
        "/workspaces/",
        "/workspaces/acme/members/",
        "/webhooks/",
        "/portability/",
        "/governance/grants/",
    ]
    problems = _sweep(page, [*urls, f"/memories/{active.pk}/"])
    assert problems == {}, json.dumps(problems, indent=1)


@pytest.mark.parametrize("clipboard", ["granted", "refused"])
def test_an_owner_copies_the_invitation_link_once_and_a_reload_makes_no_second(
    browser, live_server, owner, project_scope, clipboard
):
    context = browser.new_context(viewport=DESKTOP, base_url=live_server.url)
    if clipboard == "granted":
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    if clipboard == "refused":  # as on a plain-http address or with the permission denied
        page.add_init_script("Object.defineProperty(navigator, 'clipboard', {value: undefined})")
    try:
        sign_in(page, "olivia", "pw-olivia")
        page.goto("/workspaces/acme/members/")
        form = page.locator("#invite")
        form.locator("input[name=note]").fill("给小王")
        form.locator("select[name=role]").select_option("reviewer")
        form.locator("select[name=invite_scope]").select_option("acme/slides")
        with page.expect_navigation():
            form.get_by_role("button", name="Create link").click()
        assert re.search(r"/workspaces/acme/members/\?invited=\d+$", page.url)
        field = page.get_by_label("Invitation link", exact=True)
        link = field.input_value()
        assert "/invite/" in link and link.split("/invite/")[1].strip("/") not in page.url
        page.get_by_role("button", name="Copy link").click()
        status = page.locator("#invitation-copied")
        if clipboard == "granted":
            expect(status).to_have_text("Copied")
            assert page.evaluate("navigator.clipboard.readText()") == link
        else:
            expect(status).to_have_text(re.compile("Copied|Ctrl\\+C"))
            selected = page.evaluate(
                "(() => { const f = document.getElementById('invitation-url');"
                " return f.value.substring(f.selectionStart, f.selectionEnd); })()"
            )
            assert selected == link  # the whole link is selected for Ctrl+C
        problems: dict[str, list] = {}
        _check_here(page, "the link, shown once", problems)
        assert problems == {}, json.dumps(problems, indent=1)
        page.reload()
        settle(page)
        expect(page.locator("#invitation-shown-once")).to_contain_text("was shown once")
        expect(page.locator("#invitation-url")).to_have_count(0)
        assert link not in page.content()
        assert Invitation.objects.count() == 1
        expect(page.get_by_role("button", name=re.compile("Withdraw the invitation"))).to_have_count(1)
        problems = _sweep(page, [page.url.replace(live_server.url, "")])
        assert problems == {}, json.dumps(problems, indent=1)
    finally:
        context.close()


def test_a_forgotten_memorys_page_and_timeline_are_tombstones_with_a_way_back(
    page, owner, curator, reviewer, project_scope
):
    soft = remember(project_scope, f"{CHINESE}（软）", kind="convention")
    hard = remember(project_scope, "Never mention the merger before the announcement", kind="convention")
    memory_forget(memory_id=soft.pk, actor=curator, reason="用户要求")
    memory_forget(memory_id=hard.pk, actor=owner, reason="asked by legal", hard=True)
    sign_in(page, "rami", "pw-rami")
    page.goto(f"/memories/{soft.pk}/")
    expect(page.locator("#tombstone")).to_contain_text(f"Memory {soft.pk} was forgotten on")
    expect(page.locator("#tombstone")).to_contain_text("by cora (用户要求)")
    assert CHINESE not in page.content()
    with page.expect_navigation():
        page.locator("#tombstone-way-back").get_by_role("link", name="The memories of acme/slides").click()
    assert "scope=acme%2Fslides" in page.url
    page.goto(f"/timeline/?m={hard.pk}")
    expect(page.locator(f'[data-tombstone="{hard.pk}"]')).to_contain_text("its text purged")
    assert "merger" not in page.content()
    problems = _sweep(page, [f"/memories/{soft.pk}/", f"/memories/{hard.pk}/", f"/timeline/?m={hard.pk}"])
    assert problems == {}, json.dumps(problems, indent=1)
