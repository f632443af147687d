"""Menus and messages that fit the role: each person's menu holds only the pages that lead them to something
they may do or read, and a page with nothing for them says what they can do and whom to ask, never
"you own none". A direct visit to a page left out of the menu still answers honestly and leaks nothing."""

from __future__ import annotations

import re

from django.test import Client
from django.urls import reverse

from governance.models import Principal
from governance.permissions import NO_GRANT, menu_sections
from governance.services.principal import user_ensure
from memoryui.views.webhooks import NONE_MANAGED
from tests.memoryui.conftest import remember, signed_in


def menu(client) -> list[str]:
    html = client.get("/").content.decode()
    nav = re.search(r'<nav aria-label="Pages" id="site-nav">(.*?)</nav>', html, re.S).group(1)
    return re.findall(r">([^<>]+)</a>", nav)


READING = ["Memories", "Timeline", "Graph", "Turns", "Review", "Governance"]


def test_each_role_sees_the_menu_entries_that_lead_it_somewhere(
    owner_client, curator_client, reviewer_client, outsider_client, owner, curator, reviewer
):
    assert menu(owner_client) == ["Overview", *READING, "Evaluation", "Admin", "Webhooks", "Export/import"]
    # A curator exports; grants and webhooks belong to owners: the read-only Members page stays, by its name.
    assert menu(curator_client) == ["Overview", *READING, "Evaluation", "Members", "Export/import"]
    assert menu(reviewer_client) == ["Overview", *READING, "Evaluation", "Members"]
    # Owner of globex/slides, not of the whole workspace: no webhooks there.
    assert menu(outsider_client) == ["Overview", *READING, "Evaluation", "Admin", "Export/import"]


def test_someone_without_any_grant_sees_only_what_leads_somewhere_and_whom_to_ask(db):
    user_ensure(username="nell", password="pw-nell-no-grant", actor=None)
    client = signed_in(type("P", (), {"name": "nell"}), "pw-nell-no-grant")
    assert menu(client) == ["Overview", "Evaluation"]
    assert f'<p class="msg" id="no-grant">{NO_GRANT}</p>' in client.get("/").content.decode()
    page = client.get("/workspaces/")
    assert page.status_code == 200 and NO_GRANT in page.content.decode()
    assert client.get("/webhooks/").status_code == 200
    assert NO_GRANT in client.get("/portability/").content.decode()


def test_anonymous_gets_the_sign_in_for_every_page_of_the_menu(db):
    for url in ("/", "/workspaces/", "/webhooks/", "/portability/"):
        response = Client().get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_reviewer_visiting_webhooks_is_told_whom_to_ask_not_that_it_owns_none(
    reviewer_client, owner, outsider
):
    html = reviewer_client.get("/webhooks/").content.decode()
    assert NONE_MANAGED in html and "you own none" not in html
    assert "Ask an owner of acme (olivia) to add a webhook there." in html
    assert (
        "You are <strong>reviewer</strong> on <strong>acme/slides</strong>: you can confirm or reject proposals there."
        in html
    )
    assert "Owners of acme/slides (olivia) manage its grants." in html
    assert "otto" not in html and "globex" not in html  # another workspace's owner is never named
    assert reviewer_client.get("/webhooks/?workspace=acme").status_code == 403
    assert reviewer_client.get("/webhooks/?workspace=globex").status_code == 404


def test_export_import_says_what_a_reviewer_or_curator_can_do_instead(
    reviewer_client, curator_client, owner_client, owner
):
    reviewer = reviewer_client.get("/portability/").content.decode()
    assert 'id="no-import"' in reviewer and "confirm or reject proposals there" in reviewer
    assert "Owners of acme/slides (olivia) manage its grants." in reviewer
    curator = curator_client.get("/portability/").content.decode()
    assert "Export acme/slides" in curator and "supersede, retire or forget its memories" in curator
    assert 'id="no-import"' not in owner_client.get("/portability/").content.decode()


def test_a_memory_page_without_actions_says_what_the_reader_can_do_and_who_decides(
    reviewer_client, curator, owner, history
):
    html = reviewer_client.get(reverse("dashboard:memory", args=[history["second"].pk])).content.decode()
    assert "allow reading only" not in html
    assert (
        "You are reviewer on acme/slides: you can confirm or reject proposals there; this memory is active, "
        "not a proposal. Curators and owners of acme/slides (cora, olivia) can supersede, retire or forget it."
    ) in html


def test_a_memory_above_the_readers_grant_says_so(reviewer_client, owner, workspace_scope):
    above = remember(workspace_scope, "Workspace-wide: answer in the user's language")
    html = reviewer_client.get(reverse("dashboard:memory", args=[above.pk])).content.decode()
    assert "This memory belongs to acme, a scope above your grants: you may read it here." in html
    assert "Curators and owners of acme (olivia) can supersede, retire or forget it." in html


def test_the_grants_tab_of_a_non_owner_says_whom_to_ask(reviewer_client, owner_client, owner):
    html = reviewer_client.get("/governance/grants/").content.decode()
    assert 'id="grants-standing"' in html and "Owners of acme/slides (olivia) manage its grants." in html
    assert 'id="grants-standing"' not in owner_client.get("/governance/grants/").content.decode()
    assert 'id="no-grant"' not in reviewer_client.get("/").content.decode()


def test_the_members_page_of_a_non_owner_names_its_owners(reviewer_client, owner):
    html = reviewer_client.get("/workspaces/acme/members/").content.decode()
    assert 'id="my-standing"' in html and "Owners of acme/slides (olivia) manage its grants." in html
    assert 'id="invite"' not in html


def test_menu_sections_cost_one_query(reviewer, django_assert_num_queries):
    principal = Principal.objects.select_related("user").get(pk=reviewer.pk)
    with django_assert_num_queries(1):
        sections = menu_sections(principal)
    assert sections == {"reading", "members"}
