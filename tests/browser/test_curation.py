"""End to end in Chromium: a curator links two memories by hand with the picker, sees the link, and
removes it with a reason."""

import re

from playwright.sync_api import expect

from governance.models import Relation
from tests.browser.conftest import sign_in
from tests.memoryui.conftest import remember


def test_a_curator_links_two_memories_with_the_picker_and_removes_the_link(page, curator, project_scope):
    a = remember(project_scope, "The launch is on March 3")
    b = remember(project_scope, "Marketing moved the launch to March 10")
    sign_in(page, "cora", "pw-cora")
    page.goto(f"/memories/{a.pk}/")
    page.locator("#link-form summary").click()
    page.get_by_label("This memory", exact=True).select_option("contradicts")
    page.get_by_label(re.compile("Find the other memory")).fill("marketing launch")
    choice = page.locator(f'#link-choices input[value="{b.pk}"]')
    expect(choice).to_be_visible()
    choice.check()
    page.locator("#link-reason").fill("the press release says the tenth")
    page.locator('button[data-action="link"]').click()
    expect(page.locator(".msg.success")).to_contain_text(f"memory {a.pk} contradicts memory {b.pk}")
    relation = Relation.objects.get(source=a, target=b)
    assert relation.by_hand and relation.reason == "the press release says the tenth"
    row = page.locator("ul.relations li", has_text="the press release says the tenth")
    expect(row).to_contain_text("by hand")
    row.locator("summary", has_text="Remove").click()
    row.get_by_label("Reason").fill("reconciled: both say the tenth now")
    row.locator('button[data-action="unlink"]').click()
    expect(page.locator(".msg.success")).to_contain_text(f"Link {relation.pk} removed")
    assert not Relation.objects.filter(pk=relation.pk).exists()
