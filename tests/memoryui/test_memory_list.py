"""The memories list at scale: sorts paged by keyset both ways (ties, NULLs), the filters in the URL, the
search by meaning restricted to the caller's scopes, bulk actions with each role and four-eyes, the
type-ahead scope endpoint and the scope tree's subtree counts."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from governance.models import AuditEvent, Memory, Status
from governance.propagation import embed_memories
from governance.selectors import dashboard as sel
from governance.services.memory_bulk import BULK_REASON_REQUIRED, memory_bulk_act
from governance.services.scope import scope_ensure
from memoryui.views.memories import BULK_BAD_IDS, BULK_IRREVERSIBLE, BULK_MATCHING_TOO_MANY
from tests.memoryui.conftest import remember, signed_in

# --- Sorting and keyset paging ---------------------------------------------------------------------------


@pytest.fixture
def sortable(project_scope):
    """Twelve memories whose values tie in pairs, half of them never used and half unkeyed."""
    now = timezone.now()
    rows = []
    for i in range(12):
        # A pair shares its key: one active, one candidate (one active row per key and scope).
        m = remember(
            project_scope,
            f"sortable memory number {i}",
            key=f"k{i // 2}" if (i // 2) % 3 else None,
            confidence=round(0.1 * (i // 2), 1),
            status="active" if i % 2 == 0 else "candidate",
        )
        Memory.objects.filter(pk=m.pk).update(
            created_at=now - timedelta(hours=i // 2),  # ties in pairs
            last_reinforced_at=None if i % 2 else now - timedelta(minutes=i // 4),
        )
        rows.append(m.pk)
    return rows


def expected(sort: str, direction: str) -> list[int]:
    column, nullable = sel.SORTS[sort]
    rows = list(Memory.objects.all())
    if sort == "activation":
        at = timezone.now()
        from governance.models.activation import days

        values = {m.pk: m.activation_log_k - m.decay_rate * days(at) for m in rows}
    else:
        values = {m.pk: getattr(m, column) for m in rows}
    with_value = sorted(
        (m.pk for m in rows if values[m.pk] is not None),
        key=lambda pk: (values[pk], pk),
        reverse=direction == "desc",
    )
    without = sorted((m.pk for m in rows if values[m.pk] is None), reverse=direction == "desc")
    return with_value + without


def walk(principal, sort, direction, per_page=5, filters=None):
    """Every page forward (by next cursors), then every page back (by previous cursors) from the last."""
    f = filters or sel.MemoryFilters()
    f.sort, f.dir = sort, direction
    pages = [sel.memory_list_page(principal, None, f, per_page=per_page)]
    while pages[-1].next_cursor:
        pages.append(sel.memory_list_page(principal, None, f, after=pages[-1].next_cursor, per_page=per_page))
    back = [pages[-1]]
    while back[-1].prev_cursor:
        back.append(sel.memory_list_page(principal, None, f, before=back[-1].prev_cursor, per_page=per_page))
    return pages, back


@pytest.mark.parametrize("sort", sorted(sel.SORTS))
@pytest.mark.parametrize("direction", ["asc", "desc"])
def test_each_sort_pages_forward_and_back_through_ties_and_nulls_in_one_stable_order(
    owner, sortable, sort, direction
):
    pages, back = walk(owner, sort, direction)
    forward = [m.pk for p in pages for m in p.object_list]
    assert forward == expected(sort, direction)
    assert len(forward) == len(set(forward)) == 12
    assert pages[0].prev_cursor is None and pages[-1].next_cursor is None
    backward = [m.pk for p in reversed(back) for m in p.object_list]
    assert backward == forward


def test_rows_without_a_value_come_last_in_both_directions(owner, sortable):
    for direction in ("asc", "desc"):
        pages, _ = walk(owner, "last_used", direction, per_page=4)
        values = [m.last_reinforced_at for p in pages for m in p.object_list]
        first_null = values.index(None)
        assert all(v is None for v in values[first_null:]) and all(v is not None for v in values[:first_null])


def test_a_page_spanning_the_end_of_the_values_continues_into_the_rows_without_one(owner, sortable):
    # 6 of the 12 were used: a page of 4 after the first takes 2 with a value and 2 without.
    f = sel.MemoryFilters(sort="last_used", dir="desc")
    first = sel.memory_list_page(owner, None, f, per_page=4)
    second = sel.memory_list_page(owner, None, f, after=first.next_cursor, per_page=4)
    assert [m.last_reinforced_at is None for m in second.object_list] == [False, False, True, True]


def test_a_cursor_of_another_sort_starts_the_new_sort_from_its_top(owner, sortable):
    by_key = sel.memory_list_page(owner, None, sel.MemoryFilters(sort="key", dir="asc"), per_page=3)
    f = sel.MemoryFilters(sort="confidence", dir="desc")
    assert [
        m.pk for m in sel.memory_list_page(owner, None, f, after=by_key.next_cursor, per_page=3).object_list
    ] == expected("confidence", "desc")[:3]


def test_sort_links_and_next_previous_links_keep_the_filters(owner_client, sortable):
    url = reverse("dashboard:memories")
    first = owner_client.get(url, {"sort": "confidence", "dir": "asc", "status": "active"})
    links = {s["name"]: s["url"] for s in first.context["sort_links"]}
    assert "sort=key" in links["key"] and "status=active" in links["key"] and "dir=asc" in links["key"]
    assert "dir=desc" in links["confidence"]  # clicking the active column reverses it
    rows = [m.pk for m in first.context["rows"]]
    assert all(Memory.objects.get(pk=pk).status == "active" for pk in rows)
    active = [pk for pk in expected("confidence", "asc") if Memory.objects.get(pk=pk).status == "active"]
    assert rows == active  # fewer than a page: no next link
    assert "next" not in first.context["links"] and "prev" not in first.context["links"]


def test_the_view_pages_by_after_and_before_links(owner_client, project_scope):
    for i in range(55):
        remember(project_scope, f"paged memory {i}", kind="episodic")
    url = reverse("dashboard:memories")
    first = owner_client.get(url, {"sort": "written", "dir": "desc"})
    second = owner_client.get(url + first.context["links"]["next"])
    assert len(second.context["rows"]) == 5 and "next" not in second.context["links"]
    again = owner_client.get(url + second.context["links"]["prev"])
    assert [m.pk for m in again.context["rows"]] == [m.pk for m in first.context["rows"]]
    assert b"Next" in first.content and b"before=" in second.content


# --- Filters ----------------------------------------------------------------------------------------------


@pytest.fixture
def varied(project_scope):
    now = timezone.now()
    a = remember(
        project_scope,
        "Export slides as PPTX",
        kind="convention",
        key="export.format",
        source_ref="event:1",
        session="s1",
    )
    b = remember(
        project_scope,
        "Export charts as SVG",
        kind="convention",
        key="export.charts",
        source_ref="event:2",
        session="s2",
    )
    c = remember(
        project_scope,
        "The user likes short decks",
        kind="preference",
        key="deck.length",
        source_ref="conv-7:3",
        session="s1",
    )
    Memory.objects.filter(pk=a.pk).update(created_at=now - timedelta(days=10))
    Memory.objects.filter(pk=b.pk).update(created_at=now - timedelta(days=3))
    return {"a": a.pk, "b": b.pk, "c": c.pk}


def listed(client, **params):
    response = client.get(reverse("dashboard:memories"), params)
    assert response.status_code == 200
    return {m.pk for m in response.context["rows"]}


def test_filters_by_written_dates_key_session_and_source_ref_combine(owner_client, varied):
    today = timezone.localdate()
    assert listed(owner_client, **{"from": str(today - timedelta(days=5))}) == {varied["b"], varied["c"]}
    assert listed(owner_client, to=str(today - timedelta(days=5))) == {varied["a"]}
    assert listed(owner_client, key="export.format") == {varied["a"]}
    assert listed(owner_client, key="export.", key_match="prefix") == {varied["a"], varied["b"]}
    assert listed(owner_client, key="export.") == set()  # exact by default
    assert listed(owner_client, session="s1") == {varied["a"], varied["c"]}
    assert listed(owner_client, ref="event:2") == {varied["b"]}
    assert listed(owner_client, ref="event:*") == {varied["a"], varied["b"]}
    assert listed(owner_client, ref="event:*", session="s1", kind="convention") == {varied["a"]}
    assert listed(
        owner_client, key="export.", key_match="prefix", **{"from": str(today - timedelta(days=5))}
    ) == {varied["b"]}


def test_filters_travel_in_the_links_of_the_page(owner_client, varied):
    response = owner_client.get(
        reverse("dashboard:memories"), {"session": "s1", "key": "deck", "key_match": "prefix"}
    )
    body = response.content.decode()
    assert 'name="session" value="s1"' in body and 'value="prefix" selected' in body
    assert all("session=s1" in s["url"] for s in response.context["sort_links"])


# --- Search by meaning ------------------------------------------------------------------------------------


@pytest.fixture
def embedded(project_scope, sibling_scope, other_workspace_scope):
    rows = {
        "deck": remember(project_scope, "Export the slide deck as a PowerPoint file"),
        "forgotten": remember(project_scope, "Export the slide deck as a PowerPoint file, forgotten"),
        "sibling": remember(sibling_scope, "Export the slide deck as a PowerPoint file for payments"),
        "globex": remember(other_workspace_scope, "Export the slide deck as a PowerPoint file at globex"),
    }
    embed_memories([m.pk for m in rows.values()])
    Memory.objects.filter(pk=rows["forgotten"].pk).update(status=Status.FORGOTTEN)
    return {k: m.pk for k, m in rows.items()}


def meaning(client, q="powerpoint slides export", **extra):
    response = client.get(reverse("dashboard:memories"), {"mode": "meaning", "q": q, **extra})
    assert response.status_code == 200 and response.context["meaning"]
    return [m.pk for m in response.context["rows"]], response


def test_search_by_meaning_ranks_by_the_vector_search_within_the_readers_scopes(
    reviewer_client, owner_client, embedded
):
    ids, response = meaning(reviewer_client)
    assert ids == [embedded["deck"]]  # not the sibling scope, another workspace or the forgotten one
    assert 0 < response.context["rows"][0].similarity <= 1
    ids, _ = meaning(owner_client)
    assert set(ids) == {embedded["deck"], embedded["sibling"]}


def test_search_by_meaning_finds_nothing_for_an_outsider_or_another_workspace(outsider_client, embedded):
    ids, _ = meaning(outsider_client)
    assert ids == [embedded["globex"]]  # the outsider's own workspace only
    assert embedded["deck"] not in ids


def test_search_by_meaning_never_finds_a_forgotten_memory_even_when_asked_for_forgotten_rows(
    owner_client, embedded
):
    ids, response = meaning(owner_client, status="forgotten")
    assert ids == [] and b"forgotten, " not in response.content


def test_search_by_meaning_applies_the_other_filters(owner_client, embedded):
    ids, _ = meaning(owner_client, scope="acme/payments")
    assert ids == [embedded["sibling"]]
    ids, _ = meaning(owner_client, kind="episodic")
    assert ids == []


# --- Bulk actions -----------------------------------------------------------------------------------------


@pytest.fixture
def batch(project_scope, sibling_scope):
    return {
        "active": [remember(project_scope, f"bulk active {i}").pk for i in range(3)],
        "proposed": [remember(project_scope, f"bulk proposal {i}", status="candidate").pk for i in range(2)],
        "sibling": remember(sibling_scope, "bulk in the payments scope").pk,
    }


def bulk(client, **data):
    return client.post(reverse("dashboard:memory-bulk"), data)


def outcomes(response) -> dict[int, str]:
    return {r["id"]: r["outcome"] for r in response.context["rows"]}


def test_curator_retires_a_selection_with_one_reason_each_audited(curator_client, batch):
    response = bulk(
        curator_client, ids=batch["active"], action="retire", reason="old project", irreversible="yes"
    )
    assert response.status_code == 200
    assert outcomes(response) == dict.fromkeys(batch["active"], "done")
    assert set(Memory.objects.filter(pk__in=batch["active"]).values_list("status", flat=True)) == {"retired"}
    events = AuditEvent.objects.filter(
        action="memory.retire", target_id__in=[str(i) for i in batch["active"]]
    )
    assert events.count() == 3 and set(events.values_list("reason", flat=True)) == {"old project"}


def test_reviewer_may_confirm_in_bulk_but_every_retire_is_refused_and_nothing_changes(reviewer_client, batch):
    refused = bulk(reviewer_client, ids=batch["active"], action="retire", reason="x", irreversible="yes")
    assert set(outcomes(refused).values()) == {"refused"}
    assert "curator or owner" in refused.context["rows"][0]["message"]
    assert set(Memory.objects.filter(pk__in=batch["active"]).values_list("status", flat=True)) == {"active"}
    confirmed = bulk(
        reviewer_client, ids=batch["proposed"] + batch["active"][:1], action="confirm", reason="ok"
    )
    result = outcomes(confirmed)
    assert [result[i] for i in batch["proposed"]] == ["done", "done"]
    assert result[batch["active"][0]] == "refused"  # already active: not a transition confirm makes
    assert set(Memory.objects.filter(pk__in=batch["proposed"]).values_list("status", flat=True)) == {"active"}


def test_a_memory_outside_the_callers_scopes_is_refused_as_not_found_and_untouched(
    curator_client, outsider_client, batch
):
    response = bulk(
        curator_client,
        ids=[batch["active"][0], batch["sibling"]],
        action="forget",
        reason="gdpr",
        irreversible="yes",
    )
    assert outcomes(response) == {batch["active"][0]: "done", batch["sibling"]: "refused"}
    assert response.context["rows"][1]["message"] == "No such object in the scopes you can see."
    assert Memory.objects.get(pk=batch["sibling"]).status == "active"
    other = bulk(outsider_client, ids=batch["active"][1:], action="forget", reason="x", irreversible="yes")
    assert set(outcomes(other).values()) == {"refused"}
    assert set(Memory.objects.filter(pk__in=batch["active"][1:]).values_list("status", flat=True)) == {
        "active"
    }


def test_bulk_needs_a_reason_the_irreversible_tick_and_a_sign_in(curator_client, client, batch):
    no_tick = bulk(curator_client, ids=batch["active"], action="retire", reason="x")
    assert no_tick.status_code == 400 and BULK_IRREVERSIBLE.encode() in no_tick.content
    no_reason = bulk(curator_client, ids=batch["active"], action="retire", reason=" ", irreversible="yes")
    assert no_reason.status_code == 400 and BULK_REASON_REQUIRED.encode() in no_reason.content
    anonymous = bulk(client, ids=batch["active"], action="retire", reason="x", irreversible="yes")
    assert anonymous.status_code == 302
    assert set(Memory.objects.filter(pk__in=batch["active"]).values_list("status", flat=True)) == {"active"}


def test_four_eyes_bulk_retire_records_requests_then_a_second_person_completes_them(
    four_eyes_scope, curator_client, owner_client, batch
):
    Memory.objects.filter(pk__in=batch["active"]).update(tier="long")
    first = bulk(curator_client, ids=batch["active"], action="retire", reason="end it", irreversible="yes")
    assert set(outcomes(first).values()) == {"requested"}
    assert set(Memory.objects.filter(pk__in=batch["active"]).values_list("status", flat=True)) == {"active"}
    again = bulk(curator_client, ids=batch["active"], action="retire", reason="end it", irreversible="yes")
    assert set(outcomes(again).values()) == {"refused"}  # the same person twice
    second = bulk(owner_client, ids=batch["active"], action="retire", reason="agreed", irreversible="yes")
    assert set(outcomes(second).values()) == {"done"}
    assert set(Memory.objects.filter(pk__in=batch["active"]).values_list("status", flat=True)) == {"retired"}


def test_four_eyes_bulk_confirm_takes_two_different_reviewers(
    four_eyes_scope, reviewer_client, second_reviewer, batch
):
    Memory.objects.filter(pk__in=batch["proposed"]).update(
        tier="long"
    )  # four-eyes holds long-term commitments
    first = bulk(reviewer_client, ids=batch["proposed"], action="confirm", reason="looks right")
    assert set(outcomes(first).values()) == {"requested"}
    second = bulk(
        signed_in(second_reviewer, "pw-sana"), ids=batch["proposed"], action="confirm", reason="yes"
    )
    assert set(outcomes(second).values()) == {"done"}


def test_all_matching_the_filter_acts_on_every_match_and_refuses_past_the_cap(
    curator_client, project_scope, batch, monkeypatch
):
    response = bulk(
        curator_client,
        all="yes",
        query="status=candidate&scope=acme/slides",
        action="confirm",
        reason="batch review",
    )
    assert set(outcomes(response)) == set(batch["proposed"]) and set(outcomes(response).values()) == {"done"}
    monkeypatch.setattr("memoryui.views.memories.BULK_CAP", 4)  # 5 active memories now match
    too_many = bulk(
        curator_client, all="yes", query="status=active", action="retire", reason="x", irreversible="yes"
    )
    assert too_many.status_code == 400
    assert BULK_MATCHING_TOO_MANY.format(n=5, cap=4).encode() in too_many.content
    assert not Memory.objects.filter(status="retired").exists()


def test_bulk_service_rolls_back_nothing_of_the_others_when_one_is_refused(curator, batch):
    result = memory_bulk_act(
        memory_ids=[batch["active"][0], batch["proposed"][0], batch["active"][0]],
        action="confirm",
        reason="tidy",
        actor=curator,
    )
    # Confirming an active memory is not a transition: refused alone; the candidate is confirmed.
    assert [(o.memory_id, o.outcome) for o in result] == [
        (batch["active"][0], "refused"),
        (batch["proposed"][0], "done"),
    ]
    assert Memory.objects.get(pk=batch["proposed"][0]).status == "active"


# --- Scope picker and scope tree ---------------------------------------------------------------------------


def test_scope_picker_offers_only_governed_scopes_matching_the_prefix(
    owner_client,
    reviewer_client,
    outsider_client,
    client,
    project_scope,
    sibling_scope,
    other_workspace_scope,
):
    url = reverse("dashboard:scope-options")
    assert owner_client.get(url, {"q": "acme/"}).json()["scopes"] == ["acme/payments", "acme/slides"]
    assert owner_client.get(url, {"q": "slid"}).json()["scopes"] == ["acme/slides"]  # by name too
    assert reviewer_client.get(url, {"q": "acme"}).json()["scopes"] == ["acme/slides"]
    assert outsider_client.get(url, {"q": "acme"}).json()["scopes"] == []
    assert outsider_client.get(url, {"q": ""}).json()["scopes"] == ["globex/slides"]
    assert client.get(url, {"q": "acme"}).status_code == 302  # signed out: to the sign-in page


def test_scope_picker_answers_at_most_its_limit(owner_client, workspace_scope):
    for i in range(sel.SCOPE_OPTIONS_LIMIT + 5):
        scope_ensure(path=f"acme/p{i:02d}", actor=None)
    assert (
        len(owner_client.get(reverse("dashboard:scope-options"), {"q": "acme/p"}).json()["scopes"])
        == sel.SCOPE_OPTIONS_LIMIT
    )


def test_scope_tree_counts_a_parents_whole_subtree(
    owner, project_scope, sibling_scope, django_assert_max_num_queries
):
    deep = scope_ensure(path="acme/slides/q3", actor=None)
    for scope, n in ((project_scope, 2), (sibling_scope, 3), (deep, 4)):
        for i in range(n):
            remember(scope, f"counted {scope.path} {i}")
    with django_assert_max_num_queries(3):  # the governed scopes, the grouped count
        tree = {s["path"]: (s["memories"], s["own_memories"]) for s in sel.scope_tree(owner)}
    assert tree["acme"] == (9, 0)
    assert tree["acme/slides"] == (6, 2)
    assert tree["acme/slides/q3"] == (4, 4)
    assert tree["acme/payments"] == (3, 3)


# --- Who may reach the new endpoints at all ---------------------------------------------------------------


def test_an_agents_api_token_opens_neither_the_bulk_action_nor_the_scope_endpoint(
    agent, batch, project_scope
):
    from tests.conftest import token_client

    api = token_client(agent)
    assert (
        api.get(reverse("dashboard:scope-options"), {"q": "acme"}).status_code == 302
    )  # to the sign-in page
    response = api.post(
        reverse("dashboard:memory-bulk"),
        {"ids": batch["proposed"], "action": "confirm", "reason": "agent says so"},
    )
    assert response.status_code in (302, 403)
    assert set(Memory.objects.filter(pk__in=batch["proposed"]).values_list("status", flat=True)) == {
        "candidate"
    }


def test_bulk_action_is_post_only_and_needs_the_csrf_token(curator, batch):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(curator.user)
    assert strict.get(reverse("dashboard:memory-bulk")).status_code == 405
    refused = strict.post(
        reverse("dashboard:memory-bulk"),
        {"ids": batch["active"], "action": "retire", "reason": "x", "irreversible": "yes"},
    )
    assert refused.status_code == 403
    assert set(Memory.objects.filter(pk__in=batch["active"]).values_list("status", flat=True)) == {"active"}


def test_bad_ids_and_unknown_actions_are_400s_that_change_nothing(curator_client, batch):
    bad = bulk(curator_client, ids=["1; drop table"], action="retire", reason="x", irreversible="yes")
    assert bad.status_code == 400
    huge = bulk(curator_client, ids=[str(2**70), "-3"], action="retire", reason="x", irreversible="yes")
    assert huge.status_code == 400 and BULK_BAD_IDS.encode() in huge.content
    unknown = bulk(curator_client, ids=batch["active"], action="purge", reason="x")
    assert unknown.status_code == 400
    nothing = bulk(curator_client, action="confirm", reason="x")
    assert nothing.status_code == 400
    assert set(Memory.objects.filter(pk__in=batch["active"]).values_list("status", flat=True)) == {"active"}


def test_a_cursor_past_the_last_row_offers_the_first_page_with_the_filters(owner_client, sortable):
    last = max(Memory.objects.values_list("pk", flat=True))
    from governance.selectors.dashboard.memory_list import Cursor

    beyond = Cursor("confidence", "desc", False, -1.0, last).encode()
    response = owner_client.get(
        reverse("dashboard:memories"),
        {"sort": "confidence", "dir": "desc", "status": "active", "after": beyond},
    )
    assert response.status_code == 200 and response.context["rows"] == []
    assert response.context["first_page"] == "?sort=confidence&dir=desc&status=active"
    assert b"go back to its first page" in response.content


def test_a_forged_cursor_is_a_400_not_an_error(owner_client, sortable):
    from governance.selectors.dashboard.memory_list import BAD_CURSOR, Cursor

    url = reverse("dashboard:memories")
    for forged in (
        Cursor("written", "desc", False, "x", 2**70).encode(),
        Cursor("confidence", "desc", False, "not a number", 1).encode(),
        Cursor("written", "desc", True, None, 1).encode(),
    ):  # written has no NULL segment
        response = owner_client.get(url, {"sort": "written", "after": forged})
        assert response.status_code == 400 and BAD_CURSOR.encode() in response.content


def test_a_nul_character_in_a_text_filter_is_not_an_error(owner_client, varied):
    for name in ("key", "session", "ref", "q"):
        response = owner_client.get(reverse("dashboard:memories"), {name: "export\x00"})
        assert response.status_code == 200, name
    assert owner_client.get(reverse("dashboard:scope-options"), {"q": "ac\x00"}).json()["scopes"] == [
        "acme",
        "acme/slides",
    ]


@pytest.mark.parametrize("name", ["memories", "overview", "turns", "scope-options"])
def test_a_nul_character_in_the_scope_is_not_found_on_any_page(owner_client, project_scope, name):
    response = owner_client.get(reverse(f"dashboard:{name}"), {"scope": "acme\x00"})
    assert response.status_code == 404
