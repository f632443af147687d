"""End to end in Chromium, from an empty installation: a site administrator creates a workspace, a
project scope and a task scope under it, adds a colleague as reviewer, and turns on four-eyes.

Extension points: `AdminWalk` is a page object with one method per step, each leaving the browser on a
page where the next step starts; `test_a_site_admin_sets_up_a_workspace_from_nothing` is the walk. The
later steps of issue 14 (link two memories, export the project and import it elsewhere, see a webhook
delivery) are meant to be added as methods here (or page objects of their own pages) and appended to the
walk, after `turn_on_four_eyes`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from governance.models import AuditEvent, Role, Scope, Workspace
from governance.permissions import requires_four_eyes, roles_at
from governance.services.principal import user_ensure
from tests.browser.conftest import nav, sign_in

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


def test_a_site_admin_sets_up_a_workspace_from_nothing(page, transactional_db):
    assert not Workspace.objects.exists() and not Scope.objects.exists()
    get_user_model().objects.create_superuser(username=ADMIN, password=ADMIN_PASSWORD)
    colleague = user_ensure(username="carl", password="pw-carl-colleague", actor=None)

    sign_in(page, ADMIN, ADMIN_PASSWORD)
    walk = AdminWalk(page)
    walk.open_admin()
    expect(page.locator("#workspaces")).to_contain_text("No workspace yet")
    walk.create_workspace("acme", "Acme Corporation")
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
    assert project.require_two_reviewers and requires_four_eyes(Scope.objects.get(path="acme/slides/export"))
    assert list(AuditEvent.objects.filter(actor_name=ADMIN).order_by("pk").values_list("action", flat=True)) == [
        "workspace.create", "scope.create", "scope.create", "grant.add", "scope.settings"]
    # The walk continues here (issue 14): link two memories, export the project and import it elsewhere,
    # see a webhook delivery.
