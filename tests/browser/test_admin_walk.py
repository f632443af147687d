"""End to end in Chromium, from an empty installation to a working team (issue 14): a site administrator
creates a workspace, subscribes a webhook receiver to its events, opens a project scope and a task scope
under it, adds a colleague as reviewer, turns on four-eyes, links two memories by hand, exports the
project and imports it into a second workspace, and sees the webhook delivery of the colleague's grant —
every step through the dashboard, against a live server, a real Celery worker and a real HTTP receiver on
loopback.

`AdminWalk` is a page object with one method per step, each leaving the browser on a page where the next
step starts; `test_a_site_admin_sets_up_a_workspace_from_nothing` is the walk."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from governance.models import AuditEvent, Memory, Relation, Role, Scope, WebhookDelivery, Workspace
from governance.permissions import requires_four_eyes, roles_at
from governance.services.principal import user_ensure
from tests.browser.conftest import nav, sign_in
from tests.browser.webhook_steps import add_webhook, see_webhook_delivery
from tests.memoryui.conftest import remember
from tests.webhook_receiver import WebhookReceiver

ADMIN, ADMIN_PASSWORD = "sam", "pw-sam-admin-1"


@dataclass
class AdminWalk:
    """The administration pages as a person uses them."""

    page: Page
    workspace: str = ""

    def open_admin(self) -> None:
        nav(self.page, "Admin")
        expect(self.page.get_by_role("heading", name="Administration")).to_be_visible()

    def create_workspace(self, slug: str, name: str) -> None:
        form = self.page.locator("#workspace-create")
        form.get_by_label("Short name").fill(slug)
        form.get_by_label("Name", exact=True).fill(name)
        form.get_by_role("button", name="Create workspace").click()
        self.page.wait_for_url(f"**/workspaces/{slug}/members/")
        expect(self.page.locator(".msg.success")).to_contain_text(f"Workspace {slug} created")
        self.workspace = slug

    def open_members(self) -> None:
        self.page.goto(f"/workspaces/{self.workspace}/members/")

    def open_scope(self, parent: str, name: str) -> None:
        form = self.page.locator("#scope-create")
        form.get_by_label("Under").select_option(parent)
        form.get_by_label("Name").fill(name)
        form.get_by_role("button", name="Open scope").click()
        expect(self.page.locator(".msg.success")).to_contain_text(f"Scope {parent}/{name} opened")

    def add_member(self, who: str, role: str, scope: str) -> None:
        form = self.page.locator("#add-member")
        form.get_by_label("Who").fill(who)
        form.get_by_label("Role").select_option(role)
        form.get_by_label("Scope").select_option(scope)
        form.get_by_role("button", name="Add").click()
        expect(self.page.locator(".msg.success")).to_contain_text(f"{who} is now {role} on {scope}")

    def matrix_cell(self, who: str, scope: str):
        return self.page.locator(f'#matrix tr[data-principal="{who}"] td[data-scope="{scope}"]')

    def open_scope_settings(self, scope: str) -> None:
        self.open_members()
        self.page.locator("#matrix thead").get_by_role("link", name=scope, exact=True).click()
        expect(self.page.get_by_role("heading", name=f"Settings of {scope}")).to_be_visible()

    def turn_on_four_eyes(self, scope: str) -> None:
        self.open_scope_settings(scope)
        form = self.page.locator("#settings")
        form.get_by_label(re.compile("Four-eyes")).check()
        form.get_by_role("button", name="Save settings").click()
        expect(self.page.locator(".msg.success")).to_contain_text("Settings saved")
        expect(self.page.locator("#four-eyes-state")).to_contain_text("two different reviewers")

    def link(self, source: int, target: int, kind: str, find: str, reason: str) -> None:
        """On `source`'s page: pick `target` with the memory picker, say why, link."""
        self.page.goto(f"/memories/{source}/")
        self.page.locator("#link-form summary").click()
        self.page.get_by_label("This memory", exact=True).select_option(kind)
        self.page.get_by_label(re.compile("Find the other memory")).fill(find)
        choice = self.page.locator(f'#link-choices input[value="{target}"]')
        expect(choice).to_be_visible()
        choice.check()
        self.page.locator("#link-reason").fill(reason)
        self.page.locator('button[data-action="link"]').click()
        expect(self.page.locator(".msg.success")).to_contain_text(f"memory {source} {kind} memory {target}")

    def export(self, scope: str, to) -> list[dict]:
        """Download `scope`'s export from the Export/import page into the file `to`; return its records."""
        nav(self.page, "Export/import")
        with self.page.expect_download() as caught:
            self.page.get_by_role("link", name=f"Export {scope}", exact=True).click()
        caught.value.save_as(to)
        return [json.loads(line) for line in to.read_text().splitlines()]

    def import_into(self, file, into: str, name: str) -> None:
        form = self.page.locator("#import form")
        form.get_by_label("Export file").set_input_files(str(file))
        form.get_by_label("Into").select_option(into)
        form.get_by_label(re.compile("new child named")).fill(name)
        form.get_by_role("button", name="Import", exact=True).click()
        expect(self.page.locator(".msg.success")).to_contain_text(f"Imported into {into}/{name}")


def test_a_site_admin_sets_up_a_workspace_from_nothing(page, celery_worker, tmp_path):
    assert not Workspace.objects.exists() and not Scope.objects.exists()
    get_user_model().objects.create_superuser(username=ADMIN, password=ADMIN_PASSWORD)
    colleague = user_ensure(username="carl", password="pw-carl-colleague", actor=None)

    sign_in(page, ADMIN, ADMIN_PASSWORD)
    walk = AdminWalk(page)
    walk.open_admin()
    expect(page.locator("#workspaces")).to_contain_text("No workspace yet")
    walk.create_workspace("acme", "Acme Corporation")
    with WebhookReceiver() as receiver:
        secret = add_webhook(page, receiver.url, workspace="acme")
        walk.open_members()
        walk.open_scope("acme", "slides")
        walk.open_scope("acme/slides", "export")
        walk.add_member("carl", "reviewer", "acme/slides")
        expect(walk.matrix_cell("carl", "acme/slides/export")).to_contain_text("reviewer")
        expect(walk.matrix_cell("carl", "acme/slides/export")).to_contain_text("read · propose · confirm")
        expect(walk.matrix_cell("sam", "acme/slides")).to_contain_text("administer")
        walk.turn_on_four_eyes("acme/slides")

        project = Scope.objects.get(path="acme/slides")
        assert Scope.objects.get(path="acme/slides/export").parent_id == project.pk
        assert roles_at(colleague, project) == {Role.REVIEWER}
        assert project.require_two_reviewers and requires_four_eyes(
            Scope.objects.get(path="acme/slides/export")
        )

        # What the team's agent has written meanwhile; the admin links the two by hand.
        rule = remember(project, "Export the client deck as PPTX", kind="convention", key="export_format")
        doc = remember(
            project, "The client's brand guide says decks must arrive as PPTX files", kind="external"
        )
        walk.link(doc.pk, rule.pk, "supports", "client deck", "the brand guide is why the rule exists")
        assert Relation.objects.get(source=doc, target=rule, kind="supports").by_hand

        # A second workspace, and the project copied into it through a real download and upload.
        walk.open_admin()
        walk.create_workspace("beta", "Beta Labs")
        records = walk.export("acme/slides", tmp_path / "slides.jsonl")
        assert records[0]["root"] == "acme/slides" and records[-1]["type"] == "end"
        walk.import_into(tmp_path / "slides.jsonl", "beta", "slides")
        copied = Memory.objects.filter(scope__path__startswith="beta/slides")
        assert sorted(copied.values_list("text", flat=True)) == sorted([rule.text, doc.text])
        assert Relation.objects.filter(source__scope__workspace__slug="beta", kind="supports").count() == 1

        # The colleague's grant reached the receiver signed, and the delivery log shows it.
        hits = receiver.wait_for(1)
        granted = next(h for h in hits if h.json()["type"] == "grant.changed")
        assert WebhookReceiver.verify(granted, secret)
        see_webhook_delivery(page, "grant.changed")
    assert WebhookDelivery.objects.filter(state="delivered").exists()
    actions = list(
        AuditEvent.objects.filter(actor_name=ADMIN).order_by("pk").values_list("action", flat=True)
    )
    # (the import opens beta/slides and beta/slides/export before it writes their memories)
    steps = [
        "workspace.create",
        "scope.create",
        "scope.create",
        "grant.add",
        "scope.settings",
        "relation.link",
        "workspace.create",
        "scope.export",
        "scope.create",
        "scope.create",
        "scope.import",
    ]
    assert [a for a in actions if a in set(steps)] == steps
