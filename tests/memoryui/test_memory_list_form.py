"""The memories list's filters read through its form (issue 51): folded behind "Filters (n active)" that
counts what narrows the list, the text search outside the fold; a value the list cannot read is a 400 that
names the filter, lists nothing (so "every memory matching" cannot act on more than asked) and opens the
fold; the same page for each role, another workspace's user, anonymous and an empty installation."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from governance.models import AuditEvent, Memory, Role
from governance.services.principal import grant_add, user_ensure
from memoryui.forms.memories import BAD_CHOICE, FILTERS_INVALID
from tests.memoryui.conftest import remember, signed_in

URL = reverse("dashboard:memories")
SUMMARY = re.compile(r'<summary>Filters <span id="filters-active">\((\d+) active\)</span></summary>')


def active(response) -> int:
    return int(SUMMARY.search(response.content.decode()).group(1))


def folded_open(response) -> bool:
    return bool(
        re.search(r'<details class="filter-fields" id="filter-fields" open>', response.content.decode())
    )


@pytest.fixture
def words(project_scope, sibling_scope):
    return {
        "en": remember(project_scope, "Export slides as PPTX", kind="convention", key="export.format"),
        "zh": remember(
            project_scope, "日报用中文写，英文技术术语保留原文。", kind="preference", key="日报.语言"
        ),
        "secret": remember(sibling_scope, "Payments API key rotates monthly"),
    }


def test_the_summary_counts_the_filters_that_narrow_the_list_not_the_text_search(owner_client, words):
    plain = owner_client.get(URL)
    assert plain.status_code == 200 and active(plain) == 0 and not folded_open(plain)
    body = plain.content.decode()
    # The text search comes before the fold; every other filter is inside it.
    assert body.index('name="q"') < body.index("<details") < body.index('name="status"')
    asked = owner_client.get(
        URL, {"q": "PPTX", "mode": "words", "status": "active", "kind": "convention", "key": "export."}
    )
    assert active(asked) == 3  # status, kind, key; not the text, nor "exactly" for the key
    assert active(owner_client.get(URL, {"key_match": "prefix"})) == 0  # a modifier alone narrows nothing
    assert {m.pk for m in asked.context["rows"]} == set()  # the key is exact by default
    prefix = owner_client.get(URL, {"key": "export.", "key_match": "prefix", "kind": "convention"})
    assert {m.pk for m in prefix.context["rows"]} == {words["en"].pk} and active(prefix) == 2


@pytest.mark.parametrize(
    ("params", "field", "says"),
    [
        ({"from": "31/12/2026"}, "from", "Written from: Dates are written YYYY-MM-DD"),
        ({"to": "9999-12-31"}, "to", "Written to: Dates are written YYYY-MM-DD"),
        ({"kind": "dream"}, "kind", "Kind: “dream” is not one of the choices"),
        ({"status": "all"}, "status", "Status: “all” is not one of the choices"),
        ({"cold": "lukewarm"}, "cold", "Hot or cold: “lukewarm”"),
        ({"key_match": "regex"}, "key_match", "Key matching: “regex”"),
        ({"key": "k" * 201}, "key", "Key: At most 200 characters (this has 201)."),
        ({"session": "会" * 201}, "session", "Session: At most 200 characters (this has 201)."),
        ({"ref": "é" * 501}, "ref", "Source ref: At most 500 characters (this has 501)."),
        ({"q": "中" * 201}, "q", "Text: At most 200 characters (this has 201)."),
        ({"mode": "psychic"}, "mode", "Search by: “psychic”"),
        ({"sort": "text"}, "sort", "Sort by: “text”"),
    ],
)
def test_a_value_the_list_cannot_read_is_a_400_naming_it_and_nothing_is_listed(
    owner_client, words, params, field, says
):
    response = owner_client.get(URL, params)
    body = response.content.decode()
    assert response.status_code == 400 and response.context["rows"] == []
    assert FILTERS_INVALID in body and says in body
    assert 'class="memory-list' not in body  # no table, no bulk form to act on "every memory matching"
    if field != "sort":  # a hidden field (the column headers set it): named in the list's place only
        assert f'id="f-{field}-error"' in body
    if field not in ("q", "mode", "sort"):  # the folded fields: open, the field marked and described
        assert folded_open(response)
        assert re.search(rf'<[^>]*aria-invalid="true"[^>]*aria-describedby="f-{field}-error"', body)


def test_a_refused_value_is_shown_escaped_never_as_markup(owner_client, words):
    response = owner_client.get(URL, {"kind": "<script>alert(1)</script>", "q": '"><img src=x>'})
    body = response.content.decode()
    assert response.status_code == 400
    assert "<script>alert(1)" not in body and "<img src=x>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert BAD_CHOICE.split("%(value)s")[1].strip() in body


def test_an_htmx_refusal_answers_the_table_with_the_reason_and_the_new_count(owner_client, words):
    response = owner_client.get(
        URL, {"kind": "dream", "status": "active"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="memory-table"
    )
    body = response.content.decode()
    assert response.status_code == 400 and "<html" not in body
    assert FILTERS_INVALID in body and "Kind: “dream”" in body
    assert '<span id="filters-active" hx-swap-oob="true">(2 active)</span>' in body
    fine = owner_client.get(URL, {"status": "active"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="memory-table")
    assert fine.status_code == 200 and '<span id="filters-active" hx-swap-oob="true">(1 active)</span>' in (
        fine.content.decode()
    )


def test_the_text_search_finds_english_and_chinese_and_the_key_filter_reads_chinese(reviewer_client, words):
    for q, memory in (("PPTX", words["en"]), ("中文", words["zh"])):
        response = reviewer_client.get(URL, {"q": q})
        assert [m.pk for m in response.context["rows"]] == [memory.pk]
    response = reviewer_client.get(URL, {"key": "日报.语言"})
    assert [m.pk for m in response.context["rows"]] == [words["zh"].pk]
    assert 'value="日报.语言"' in response.content.decode()  # the value stays in its field


def test_bulk_on_every_matching_memory_with_a_refused_filter_is_a_400_and_changes_nothing(
    curator_client, words
):
    before = AuditEvent.objects.count()
    response = curator_client.post(
        reverse("dashboard:memory-bulk"),
        {"all": "yes", "query": "kind=dream", "action": "retire", "reason": "tidy", "irreversible": "yes"},
    )
    assert response.status_code == 400 and "Kind: “dream”" in response.content.decode()
    assert AuditEvent.objects.count() == before
    assert set(Memory.objects.values_list("status", flat=True)) == {"active"}
    # A readable filter still acts on exactly what it names.
    done = curator_client.post(
        reverse("dashboard:memory-bulk"),
        {
            "all": "yes",
            "query": "kind=convention",
            "action": "retire",
            "reason": "tidy",
            "irreversible": "yes",
        },
    )
    assert done.status_code == 200
    assert {m.pk for m in Memory.objects.filter(status="retired")} == {words["en"].pk}


def test_each_role_sees_the_folded_list_of_its_own_scopes_only(
    owner_client, curator_client, reviewer_client, outsider_client, words, project_scope
):
    viewer = user_ensure(username="vera", password="pw-vera", actor=None)
    grant_add(principal=viewer, scope=project_scope, role=Role.VIEWER, actor=None)
    seen = {}
    for name, client in (
        ("owner", owner_client),
        ("curator", curator_client),
        ("reviewer", reviewer_client),
        ("viewer", signed_in(viewer, "pw-vera")),
        ("outsider", outsider_client),
    ):
        response = client.get(URL, {"status": "active"})
        assert response.status_code == 200 and active(response) == 1, name
        seen[name] = {m.pk for m in response.context["rows"]}
    everything = {m.pk for m in words.values()}
    assert seen["owner"] == everything
    project = everything - {words["secret"].pk}
    assert seen["curator"] == seen["reviewer"] == seen["viewer"] == project
    assert seen["outsider"] == set()
    # A scope outside one's grants (another workspace's, a sibling) answers as an unknown one, filter or not.
    assert outsider_client.get(URL, {"scope": "acme/slides", "kind": "dream"}).status_code == 404
    assert reviewer_client.get(URL, {"scope": "acme/payments"}).status_code == 404


def test_anonymous_is_sent_to_sign_in_even_with_a_refused_filter(client, db):
    response = Client().get(URL, {"kind": "dream"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_an_empty_installation_shows_the_form_and_refuses_a_bad_value_in_words(db):
    nobody = user_ensure(username="nell", password="pw-nell", actor=None)
    client = signed_in(nobody, "pw-nell")
    response = client.get(URL)
    body = response.content.decode()
    assert response.status_code == 200 and active(response) == 0
    assert "You hold no grant yet" in body and "No memory matches these filters" in body
    refused = client.get(URL, {"from": "2026-02-30"})
    assert (
        refused.status_code == 400
        and "Written from: Dates are written YYYY-MM-DD" in refused.content.decode()
    )
