"""Each dashboard action read through its form (memoryui/forms/): a bad value is a 4xx page that says
what is wrong, in the form's own sentence, and nothing is changed: no grant, token, link, memory,
webhook, summary, import or audit event. Over-long values are refused rather than cut, a value outside
its choices is refused rather than ignored, and Chinese text passes where text is free."""

from __future__ import annotations

import html
import io

import pytest

from governance.models import (
    ApiToken,
    AuditEvent,
    Grant,
    Memory,
    Outbox,
    Relation,
    Summary,
    WebhookDelivery,
    WebhookSubscription,
)
from governance.services.memory_bulk import BULK_CAP, BULK_TOO_MANY
from governance.services.principal import token_issue
from governance.services.relation import relation_link
from governance.tasks import propagate_outbox
from memoryui.forms import curation as curation_forms
from memoryui.forms import governance as governance_forms
from memoryui.forms import memory_actions as action_forms
from memoryui.forms import portability as portability_forms
from memoryui.forms import summary as summary_forms
from memoryui.forms import theme as theme_forms
from memoryui.forms import webhooks as webhook_forms
from memoryui.forms.graph import BAD_MEMORY
from tests.governance.webhooks.conftest import remember as remember_as
from tests.governance.webhooks.conftest import subscribe
from tests.memoryui.conftest import remember

HOOK = "https://hooks.example.net/memgov"


def _state() -> tuple:
    """Everything an action of these pages could change."""
    return (
        AuditEvent.objects.count(),
        sorted(Grant.objects.values_list("pk", "role")),
        sorted(ApiToken.objects.values_list("pk", "revoked_at")),
        sorted(Relation.objects.values_list("pk", "kind")),
        sorted(Memory.objects.values_list("pk", "status", "text")),
        sorted(WebhookSubscription.objects.values_list("pk", "active", "url")),
        sorted(WebhookDelivery.objects.values_list("pk", "state", "attempts")),
        Summary.objects.count(),
        Outbox.objects.count(),
    )


def refused(client, method: str, url: str, data: dict, message: str, status: int = 400, **extra):
    """Send a bad value; the answer is `status` with `message`, and nothing changed."""
    before = _state()
    answer = getattr(client, method)(url, data, **extra)
    assert answer.status_code == status, (url, data, answer.status_code)
    body = answer.content.decode()
    assert message in body or html.escape(message) in body, (url, data)
    assert _state() == before, (url, data)
    return answer


@pytest.fixture
def pair(project_scope):
    return (
        remember(project_scope, "The launch is on March 3"),
        remember(project_scope, "市场部计划三月十日发布"),
    )


# --- Governance ------------------------------------------------------------------------------------------


def test_adding_a_grant_refuses_over_long_and_unknown_names(owner_client, history):
    url = "/governance/grants/add/"
    ok = {"grant_scope": "acme/slides", "principal": "rami", "role": "viewer"}
    refused(owner_client, "post", url, {**ok, "principal": "n" * 151}, governance_forms.NAME_TOO_LONG)
    refused(owner_client, "post", url, {**ok, "grant_scope": "a/" * 300}, governance_forms.SCOPE_TOO_LONG)
    refused(
        owner_client, "post", url, {**ok, "principal": "不存在的人"}, "No user, team or agent has that name."
    )


def test_revoking_names_the_grant_or_token_by_a_whole_number(owner_client, owner, history):
    for method in ("get", "post"):
        refused(
            owner_client, method, "/governance/grants/revoke/", {"grant": "7a"}, governance_forms.BAD_GRANT_ID
        )
        refused(
            owner_client, method, "/governance/tokens/revoke/", {"token": "x"}, governance_forms.BAD_TOKEN_ID
        )
    refused(owner_client, "post", "/governance/grants/revoke/", {}, governance_forms.BAD_GRANT_ID)


def test_a_revoke_reason_past_500_characters_is_refused_not_cut(owner_client, owner, reviewer, history):
    grant = Grant.objects.get(principal=reviewer)
    token_issue(principal=owner, actor=None)
    token = ApiToken.objects.get(principal=owner)
    long = "因为" * 251
    refused(
        owner_client,
        "post",
        "/governance/grants/revoke/",
        {"grant": grant.pk, "reason": long},
        governance_forms.REASON_TOO_LONG,
    )
    refused(
        owner_client,
        "post",
        "/governance/tokens/revoke/",
        {"token": token.pk, "reason": long},
        governance_forms.REASON_TOO_LONG,
    )


@pytest.mark.parametrize(
    "query, message",
    [
        ({"from": "2026-13-01"}, governance_forms.BAD_DATE),
        ({"from": "2026-05-02", "to": "2026-05-01"}, governance_forms.BAD_RANGE),
        ({"before": "not-a-cursor"}, governance_forms.BAD_CURSOR),
        ({"actor": "x" * 151}, governance_forms.FILTER_TOO_LONG.format(field="actor", n=150)),
        ({"action": "a" * 51}, governance_forms.FILTER_TOO_LONG.format(field="action", n=50)),
    ],
)
def test_the_audit_tab_says_which_filter_is_wrong(reviewer_client, history, query, message):
    refused(reviewer_client, "get", "/governance/audit/", query, message)


def test_the_audit_tab_keeps_its_filters_on_its_page_links(owner_client, history):
    answer = owner_client.get(
        "/governance/audit/", {"actor": "olivia", "from": "2020-01-01", "scope": "acme"}
    )
    assert answer.status_code == 200
    for link in answer.context["links"].values():
        assert "actor=olivia" in link and "from=2020-01-01" in link and "scope=acme" in link


# --- Curation --------------------------------------------------------------------------------------------


def test_a_link_needs_a_memory_by_number(curator_client, pair):
    a, b = pair
    url = f"/memories/{a.pk}/link/"
    for bad in ({"target": "abc"}, {"target_id": "-4"}, {"target": "", "target_id": ""}, {}):
        refused(
            curator_client,
            "post",
            url,
            {"kind": "supports", "reason": "同一件事", **bad},
            curation_forms.TARGET_REQUIRED,
        )
    refused(
        curator_client,
        "post",
        url,
        {"kind": "supports", "target": b.pk, "reason": "r" * 501},
        curation_forms.REASON_TOO_LONG,
    )
    done = curator_client.post(url, {"kind": "supports", "target_id": f"#{b.pk}", "reason": "同一件事"})
    assert done.status_code == 302 and Relation.objects.get(source=a, target=b).reason == "同一件事"


def test_unlinking_names_the_link_by_number(curator_client, curator, pair):
    a, b = pair
    relation_link(source_id=a.pk, target_id=b.pk, kind="supports", reason="same", actor=curator)
    for bad in ("x", "", "0"):
        refused(
            curator_client,
            "post",
            f"/memories/{a.pk}/unlink/",
            {"relation": bad, "reason": "gone"},
            curation_forms.UNKNOWN_LINK,
        )


def test_the_picker_refuses_a_search_past_200_characters(curator_client, pair):
    refused(
        curator_client,
        "get",
        f"/memories/{pair[0].pk}/link/choices/",
        {"q": "q" * 201},
        curation_forms.QUERY_TOO_LONG,
    )
    found = curator_client.get(f"/memories/{pair[0].pk}/link/choices/", {"q": "市场部"})
    assert found.status_code == 200 and "市场部".encode() in found.content


def test_a_promotion_cites_episodes_by_number(reviewer_client, project_scope):
    candidate = remember(project_scope, "Exports slides as PDF", kind="preference", status="candidate")
    url = f"/memories/{candidate.pk}/promote/"
    refused(reviewer_client, "post", url, {"episodes": ["one"]}, curation_forms.EPISODES_REQUIRED)
    refused(reviewer_client, "post", url, {}, curation_forms.EPISODES_REQUIRED)


# --- Webhooks --------------------------------------------------------------------------------------------


@pytest.fixture
def hook(project_scope, owner):
    sub, _ = subscribe(project_scope, HOOK, owner, ["memory.confirmed"])
    memory = remember_as(project_scope, "A rule for the log", key="log_rule", actor=owner)
    propagate_outbox(Outbox.objects.get(memory=memory, topic="memory.created").pk)
    WebhookDelivery.objects.update(state="failed", attempts=3)
    return sub


def test_the_webhooks_page_refuses_an_unknown_delivery_state(owner_client, hook):
    refused(owner_client, "get", "/webhooks/", {"state": "exploded"}, webhook_forms.BAD_STATE)
    assert owner_client.get("/webhooks/", {"state": "failed"}).status_code == 200


def test_a_webhook_action_is_one_of_four(owner_client, hook):
    for bad in ("explode", ""):
        refused(owner_client, "post", f"/webhooks/{hook.pk}/act/", {"action": bad}, webhook_forms.BAD_ACTION)


def test_a_new_webhook_with_an_over_long_url_is_refused(owner_client, hook):
    refused(
        owner_client,
        "post",
        "/webhooks/add/",
        {"workspace": "acme", "url": HOOK + "/" + "x" * 2000, "event_types": ["memory.confirmed"]},
        webhook_forms.URL_TOO_LONG,
    )


def test_a_redelivery_keeps_only_a_known_state_on_its_way_back(owner_client, hook):
    delivery = WebhookDelivery.objects.get()
    refused(
        owner_client,
        "post",
        f"/webhooks/deliveries/{delivery.pk}/redeliver/",
        {"state": "failed&workspace=other"},
        webhook_forms.BAD_STATE,
    )
    back = owner_client.post(f"/webhooks/deliveries/{delivery.pk}/redeliver/", {"state": "failed"})
    assert back.status_code == 302 and back["Location"] == "/webhooks/?workspace=acme&state=failed"


# --- Export and import, summary, theme, graph -------------------------------------------------------------


def test_an_import_needs_a_file_and_a_short_name(owner_client, workspace_scope):
    refused(owner_client, "post", "/portability/import/", {"target": "acme"}, portability_forms.NO_FILE)
    upload = io.BytesIO(b"{}\n")
    upload.name = "export.jsonl"
    refused(
        owner_client,
        "post",
        "/portability/import/",
        {"target": "acme", "name": "n" * 64, "file": upload},
        portability_forms.NAME_TOO_LONG,
    )


def test_a_summary_rebuild_needs_a_scope_and_a_short_reason(reviewer_client, project_scope):
    refused(reviewer_client, "post", "/summary/rebuild/", {"scope": " "}, summary_forms.SCOPE_REQUIRED)
    refused(
        reviewer_client,
        "post",
        "/summary/rebuild/",
        {"scope": "acme/slides", "reason": "为" * 201},
        summary_forms.REASON_TOO_LONG,
    )


def test_the_theme_is_one_of_three_and_sets_no_cookie_otherwise(client, db):
    answer = refused(client, "post", "/theme/", {"theme": "neon", "next": "/"}, theme_forms.BAD_THEME)
    assert "theme" not in answer.cookies
    refused(client, "post", "/theme/", {"theme": "dark", "next": "/" + "x" * 2000}, theme_forms.NEXT_TOO_LONG)
    assert client.post("/theme/", {"theme": "dark", "next": "/"}).cookies["theme"].value == "dark"


def test_the_graph_centres_only_on_a_memory_number(reviewer_client, pair):
    for bad in ("0", "-1", "x"):
        answer = reviewer_client.get("/graph/data.json", {"memory": bad})
        assert answer.status_code == 400 and answer.json()["message"] == BAD_MEMORY
    assert reviewer_client.get("/graph/", {"memory": "0"}).status_code == 400


# --- Actions on memories ---------------------------------------------------------------------------------


def test_an_action_on_a_memory_is_one_the_page_offers_and_ticked_when_final(curator_client, pair):
    url = f"/memories/{pair[0].pk}/act/"
    refused(curator_client, "post", url, {"action": "explode", "reason": "x"}, action_forms.UNKNOWN_ACTION)
    refused(curator_client, "post", url, {"reason": "x"}, action_forms.UNKNOWN_ACTION)
    for tick in ("", "no", "on"):
        refused(
            curator_client,
            "post",
            url,
            {"action": "retire", "reason": "过时了", "irreversible": tick},
            action_forms.CONFIRM_IRREVERSIBLE,
        )
    refused(
        curator_client,
        "post",
        url,
        {"action": "retire", "reason": "r" * 2001, "irreversible": "yes"},
        action_forms.REASON_TOO_LONG,
    )
    done = curator_client.post(url, {"action": "retire", "reason": "过时了", "irreversible": "yes"})
    assert done.status_code == 302 and Memory.objects.get(pk=pair[0].pk).status == "retired"


def test_a_bulk_action_refuses_bad_ids_too_many_and_an_unticked_ending(curator_client, pair):
    url = "/memories/bulk/"
    ids = [m.pk for m in pair]
    refused(
        curator_client,
        "post",
        url,
        {"action": "confirm", "reason": "x", "ids": ["1", "x"]},
        action_forms.BULK_BAD_IDS,
    )
    refused(
        curator_client,
        "post",
        url,
        {"action": "confirm", "reason": "x", "ids": [str(i) for i in range(1, BULK_CAP + 2)]},
        BULK_TOO_MANY.format(cap=BULK_CAP),
    )
    refused(
        curator_client,
        "post",
        url,
        {"action": "forget", "reason": "x", "ids": ids},
        action_forms.BULK_IRREVERSIBLE,
    )
    refused(
        curator_client,
        "post",
        url,
        {"action": "confirm", "reason": "x", "all": "maybe"},
        "all is yes or empty.",
    )


def test_a_bad_value_from_another_workspace_or_no_session_changes_nothing(outsider_client, pair, client):
    a, b = pair
    before = _state()
    assert outsider_client.post(f"/memories/{a.pk}/link/", {"target": "x"}).status_code == 404
    assert (
        outsider_client.post(f"/memories/{a.pk}/act/", {"action": "retire", "reason": "x"}).status_code == 400
    )
    assert client.post(f"/memories/{a.pk}/act/", {"action": "explode"}).status_code == 302  # sign in first
    assert _state() == before
