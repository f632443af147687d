"""In Chromium: the memories list sorted by a column header, a bulk retire with one reason and its per-row
result, and the header's type-ahead scope field."""

import re

from playwright.sync_api import expect

from governance.models import Memory
from tests.browser.conftest import nav, sign_in
from tests.memoryui.conftest import remember


def test_curator_sorts_by_confidence_and_retires_two_memories_at_once(page, curator, project_scope):
    low = remember(project_scope, "Decks use the blue template", confidence=0.2)
    high = remember(project_scope, "Charts never use pie slices", confidence=0.9)
    keep = remember(project_scope, "Titles are short", confidence=0.5)
    sign_in(page, "cora", "pw-cora")
    nav(page, "Memories")
    page.locator("#memory-table thead").get_by_role("link", name="Confidence").click()
    expect(page.locator("#memory-table th[aria-sort=descending]")).to_contain_text("Confidence")
    first_ids = page.locator("#memory-table tbody tr td:nth-child(2)").all_text_contents()
    assert first_ids == [str(high.pk), str(keep.pk), str(low.pk)]
    assert "sort=confidence" in page.url  # the view is a link to share
    page.get_by_label(f"Select memory {low.pk}").check()
    page.get_by_label(f"Select memory {high.pk}").check()
    page.locator("select[name=action]").select_option("retire")
    page.get_by_label("Reason").fill("old style guide")
    page.get_by_label(re.compile("cannot be undone")).check()
    page.get_by_role("button", name="Apply").click()
    expect(page.locator(".summary")).to_contain_text("2 done")
    expect(page.locator("table.bulk-result")).to_contain_text("retired")
    assert {m.pk: m.status for m in Memory.objects.filter(pk__in=[low.pk, high.pk, keep.pk])} == {
        low.pk: "retired",
        high.pk: "retired",
        keep.pk: "active",
    }


def test_header_scope_field_offers_governed_scopes_as_one_types(page, owner, project_scope, sibling_scope):
    sign_in(page, "olivia", "pw-olivia")
    nav(page, "Memories")
    field = page.locator("#scope-select")
    field.fill("acme/sl")
    expect(page.locator("#scope-options option")).to_have_count(1)
    assert page.locator("#scope-options option").get_attribute("value") == "acme/slides"
    field.fill("acme/slides")  # what choosing the offered option puts in the field
    field.press("Enter")
    page.wait_for_load_state("networkidle")
    assert "scope=acme%2Fslides" in page.url
    expect(page.get_by_role("heading", name="Memories in acme/slides")).to_be_visible()
