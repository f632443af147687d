from django.urls import reverse

from governance.models import AuditEvent, Memory, Status
from governance.selectors.dashboard.memory_list import BAD_CURSOR, BAD_DATE
from memoryui.views.memories import CONFIRM_IRREVERSIBLE, REASON_REQUIRED
from tests.memoryui.conftest import remember


def ids_on(response):
    return {m.pk for m in response.context["rows"]}


def test_list_shows_the_readers_scope_and_never_a_sibling(reviewer_client, history):
    response = reviewer_client.get(reverse("dashboard:memories"))
    assert history["secret"].pk not in ids_on(response)
    assert {history["second"].pk, history["proposal"].pk, history["episode"].pk} <= ids_on(response)


def test_filters_by_status_kind_and_text(reviewer_client, history):
    url = reverse("dashboard:memories")
    assert ids_on(reviewer_client.get(url, {"status": "proposed"})) == {history["proposal"].pk}
    assert ids_on(reviewer_client.get(url, {"kind": "episodic"})) == {history["episode"].pk}
    assert ids_on(reviewer_client.get(url, {"q": "PPTX"})) == {history["second"].pk}
    assert ids_on(reviewer_client.get(url, {"q": "payments"})) == set()


def test_unknown_filter_values_a_bad_cursor_or_a_bad_date_are_a_400_that_lists_nothing(
    reviewer_client, history
):
    url = reverse("dashboard:memories")
    # Not ignored: a list without the filter would claim to show what was asked for (issue 51).
    response = reviewer_client.get(url, {"status": "bogus", "sort": "bogus", "dir": "up"})
    assert response.status_code == 400 and ids_on(response) == set()
    for label in ("Status", "Sort by", "Direction"):
        assert f"{label}: “".encode() in response.content
    response = reviewer_client.get(url, {"after": "not-a-cursor"})
    assert response.status_code == 400 and BAD_CURSOR.encode() in response.content
    for bad in ({"from": "31/12/2026"}, {"to": "9999-12-31"}, {"from": "0001-01-01"}):
        response = reviewer_client.get(url, bad)
        assert response.status_code == 400 and BAD_DATE.encode() in response.content


def test_pagination_is_server_side_and_keeps_filters(reviewer_client, project_scope):
    for i in range(60):
        remember(project_scope, f"episode {i}", kind="episodic")
    first = reviewer_client.get(reverse("dashboard:memories"), {"kind": "episodic"})
    assert len(first.context["rows"]) == 50
    assert "kind=episodic" in first.context["links"]["next"] and "after=" in first.context["links"]["next"]
    second = reviewer_client.get(reverse("dashboard:memories") + first.context["links"]["next"])
    assert len(second.context["rows"]) == 10


def test_htmx_filter_request_returns_only_the_table(reviewer_client, history):
    response = reviewer_client.get(
        reverse("dashboard:memories"),
        {"kind": "episodic"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_TARGET="memory-table",
    )
    body = response.content.decode()
    assert "<html" not in body and "User: make the deck shorter" in body


def test_memory_page_shows_revision_chain_relations_and_audit(reviewer_client, history):
    response = reviewer_client.get(reverse("dashboard:memory", args=[history["second"].pk]))
    ctx = response.context
    assert [m.revision for m in ctx["chain"]] == [1, 2]
    assert any(r["other"] and r["other"].pk == history["first"].pk for r in ctx["relations"])
    assert {e.action for e in ctx["audit"]} >= {"memory.supersede"}
    assert b"Export slides as PPTX" in response.content


def test_memory_in_a_scope_the_reader_cannot_see_is_not_found(reviewer_client, outsider_client, history):
    assert reviewer_client.get(reverse("dashboard:memory", args=[history["secret"].pk])).status_code == 404
    assert outsider_client.get(reverse("dashboard:memory", args=[history["second"].pk])).status_code == 404
    assert (
        outsider_client.get(reverse("dashboard:memory-activation", args=[history["second"].pk])).status_code
        == 404
    )
    assert reviewer_client.get(reverse("dashboard:memory", args=[999999])).status_code == 404


def test_actions_offered_follow_the_grants(reviewer_client, curator_client, owner_client, history):
    def offered(client, memory):
        return {
            a["name"] for a in client.get(reverse("dashboard:memory", args=[memory.pk])).context["actions"]
        }

    assert offered(reviewer_client, history["proposal"]) == {"confirm", "reject"}
    assert offered(reviewer_client, history["second"]) == set()
    assert offered(curator_client, history["second"]) == {"supersede", "retire", "forget"}
    assert offered(owner_client, history["second"]) == {"supersede", "retire", "forget", "forget_hard"}


def test_reviewer_cannot_supersede_even_by_posting_the_form(reviewer_client, history):
    response = reviewer_client.post(
        reverse("dashboard:memory-act", args=[history["second"].pk]),
        {"action": "supersede", "text": "Export as Keynote", "reason": "x", "irreversible": "yes"},
    )
    assert response.status_code == 403
    assert b"curator or owner" in response.content
    assert Memory.objects.get(pk=history["second"].pk).status == Status.ACTIVE


def test_irreversible_action_needs_the_confirmation_box_and_a_reason(curator_client, history):
    url = reverse("dashboard:memory-act", args=[history["second"].pk])
    unconfirmed = curator_client.post(url, {"action": "retire", "reason": "obsolete"})
    assert unconfirmed.status_code == 400 and CONFIRM_IRREVERSIBLE.encode() in unconfirmed.content
    no_reason = curator_client.post(url, {"action": "retire", "irreversible": "yes"})
    assert no_reason.status_code == 400 and REASON_REQUIRED.encode() in no_reason.content
    assert Memory.objects.get(pk=history["second"].pk).status == Status.ACTIVE


def test_curator_supersedes_from_the_memory_page(curator_client, history):
    response = curator_client.post(
        reverse("dashboard:memory-act", args=[history["second"].pk]),
        {
            "action": "supersede",
            "text": "Export slides as Keynote",
            "reason": "new client",  # no "cannot be undone" box: a supersede can be superseded again
        },
    )
    assert response.status_code == 302
    newest = Memory.objects.get(key="export_format", status=Status.ACTIVE)
    assert newest.revision == 3 and newest.text == "Export slides as Keynote"
    assert response["Location"] == reverse("dashboard:memory", args=[newest.pk])
    assert AuditEvent.objects.filter(
        action="memory.supersede", target_id=str(newest.pk), actor_name="cora"
    ).exists()


def test_reviewer_confirms_a_proposal(reviewer_client, history):
    response = reviewer_client.post(
        reverse("dashboard:memory-act", args=[history["proposal"].pk]), {"action": "confirm"}
    )
    assert response.status_code == 302
    assert Memory.objects.get(pk=history["proposal"].pk).status == Status.ACTIVE


def test_invalid_transition_is_a_409_with_the_reason(curator_client, history):
    response = curator_client.post(
        reverse("dashboard:memory-act", args=[history["first"].pk]),
        {"action": "supersede", "text": "x", "reason": "y", "irreversible": "yes"},
    )
    assert response.status_code == 409 and b"Only an active memory can be superseded" in response.content


def test_forgotten_text_is_shown_to_owners_only(curator_client, owner_client, history):
    curator_client.post(
        reverse("dashboard:memory-act", args=[history["episode"].pk]),
        {"action": "forget", "reason": "asked to", "irreversible": "yes"},
    )
    url = reverse("dashboard:memory", args=[history["episode"].pk])
    assert b"make the deck shorter" not in curator_client.get(url).content
    # The owner's look is explicit (docs/governance.md, "Forgetting"): the tombstone first, the text on asking.
    assert b"make the deck shorter" not in owner_client.get(url).content
    assert b"make the deck shorter" in owner_client.get(url, {"look": "text"}).content
    assert b"make the deck shorter" not in curator_client.get(url, {"look": "text"}).content
    listing = curator_client.get(reverse("dashboard:memories")).content
    assert b"make the deck shorter" not in listing


def test_activation_json_has_curve_reinforcements_and_state_changes(reviewer_client, history):
    data = reviewer_client.get(reverse("dashboard:memory-activation", args=[history["first"].pk])).json()
    assert len(data["x"]) == len(data["y"]) > 10
    assert all(later <= earlier + 1e-9 for earlier, later in zip(data["y"], data["y"][1:], strict=False))
    assert [c["to"] for c in data["changes"]] == ["superseded"]


def test_hot_and_cold_filters_split_by_the_threshold(reviewer_client, project_scope, history, settings):
    from datetime import timedelta

    from django.utils import timezone

    old = remember(
        project_scope,
        "User: that was last year",
        kind="working",
        occurred_at=timezone.now() - timedelta(days=30),
    )  # working memory fades within days
    url = reverse("dashboard:memories")
    cold = ids_on(reviewer_client.get(url, {"cold": "cold"}))
    hot = ids_on(reviewer_client.get(url, {"cold": "hot"}))
    assert old.pk in cold and old.pk not in hot
    assert history["second"].pk in hot and not cold & hot


def test_who_decides_is_said_where_a_person_acts(curator_client, workspace_scope, project_scope, history):
    """One person, or a second curator or owner: said on the memory's page, with the scope whose setting
    says so, for a memory of a four-eyes scope above it and for one of a plain scope."""
    page = curator_client.get(reverse("dashboard:memory", args=[history["second"].pk])).content.decode()
    assert "Who decides here:</strong>\n    one person" in page

    workspace_scope.require_two_reviewers = True
    workspace_scope.save(update_fields=["require_two_reviewers"])
    commitment = remember(project_scope, "Client files are kept for 7 years.", kind="convention", tier="long")
    page = curator_client.get(reverse("dashboard:memory", args=[commitment.pk])).content.decode()
    assert (
        "two people. acme asks for two reviewers" in page and "a second, different curator or owner" in page
    )
    assert reverse("dashboard:scope-settings", args=[workspace_scope.pk]) in page
