"""End to end in Chromium: an owner exports a project from the Export/import page (a real download), previews
the file as an import into another scope (counts, nothing changed), imports it, and lands on its memories."""

import json
import re

from playwright.sync_api import expect

from governance.models import Memory
from tests.browser.conftest import nav, sign_in
from tests.memoryui.conftest import remember


def test_an_owner_exports_a_project_and_imports_it_elsewhere(
    page, owner, project_scope, sibling_scope, tmp_path
):
    remember(project_scope, "Export slides as PPTX", kind="convention", key="export_format")
    remember(project_scope, "The client asked for PPTX in the kickoff call", kind="episodic")
    sign_in(page, "olivia", "pw-olivia")
    nav(page, "Export/import")
    with page.expect_download() as caught:
        page.get_by_role("link", name="Export acme/slides").click()
    saved = tmp_path / "slides.jsonl"
    caught.value.save_as(saved)
    records = [json.loads(line) for line in saved.read_text().splitlines()]
    assert records[0]["root"] == "acme/slides" and records[-1]["type"] == "end"
    assert caught.value.suggested_filename == "acme_slides.jsonl"

    form = page.locator("#import form")
    form.get_by_label("Export file").set_input_files(str(saved))
    form.get_by_label("Into").select_option("acme/payments")
    form.get_by_label(re.compile("new child named")).fill("slides-copy")
    form.get_by_role("button", name="Preview").click()
    preview = page.locator("#import-preview")
    expect(preview).to_contain_text("acme/payments/slides-copy")
    expect(preview.locator('[data-count="memories"]')).to_have_text("2")
    assert not Memory.objects.filter(scope__path="acme/payments/slides-copy").exists()

    form = page.locator("#import form")
    form.get_by_label("Export file").set_input_files(str(saved))
    form.get_by_role("button", name="Import", exact=True).click()
    expect(page.locator(".msg.success")).to_contain_text(
        "Imported into acme/payments/slides-copy: 2 memories"
    )
    expect(page.get_by_text("Export slides as PPTX").first).to_be_visible()
    assert Memory.objects.filter(scope__path="acme/payments/slides-copy").count() == 2
