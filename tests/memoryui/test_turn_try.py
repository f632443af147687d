"""The "try a query" panel: a packet assembled as the viewer, with the same explanations as a turn's page,
never stored; it needs ASK_CONTEXT on the scope (governance.permissions decides)."""

from __future__ import annotations

from django.urls import reverse

from governance.models import ReinforcementEvent, Role, Turn
from governance.permissions import DENIAL_REASONS, Action
from governance.recall.packet import BAD_AS_OF, BAD_STRATEGY
from governance.services.principal import grant_add, user_ensure
from memoryui.views.turns import TRY_BAD_AS_OF, TRY_BAD_BUDGET
from tests.memoryui.conftest import signed_in


def _try(client, **fields):
    data = {
        "query": "how do we export the slides?",
        "try_scope": "acme/slides",
        "strategy": "full",
        "budget": "800",
    }
    return client.post(reverse("dashboard:turn-try"), {**data, **fields}, HTTP_HX_REQUEST="true")


def test_try_a_query_shows_the_packet_and_why_without_storing_a_turn(reviewer_client, history):
    turns, reinforcements = Turn.objects.count(), ReinforcementEvent.objects.count()
    response = _try(reviewer_client)
    assert response.status_code == 200, response.content
    cited = {b.get("memory_id") for s in response.context["slots"] for b in s["blocks"]}
    assert history["second"].pk in cited and history["secret"].pk not in cited
    assert {s["name"] for s in response.context["funnel"]} >= {"eligible", "rank", "pack"}
    assert b"came in" in response.content and b"Export slides as PPTX" in response.content
    assert Turn.objects.count() == turns and ReinforcementEvent.objects.count() == reinforcements


def test_the_panel_is_offered_only_where_the_viewer_may_ask_for_context(
    reviewer_client, project_scope, history
):
    assert [s.path for s in reviewer_client.get(reverse("dashboard:turns")).context["ask_scopes"]] == [
        "acme/slides"
    ]
    viewer = user_ensure(username="vera", password="pw-vera", actor=None)
    grant_add(principal=viewer, scope=project_scope, role=Role.VIEWER, actor=None)
    client = signed_in(viewer, "pw-vera")
    page = client.get(reverse("dashboard:turns"))
    assert page.context["ask_scopes"] == [] and b"Try a query" not in page.content
    refused = _try(client)
    assert refused.status_code == 403 and DENIAL_REASONS[Action.ASK_CONTEXT].encode() in refused.content


def test_a_scope_the_viewer_cannot_see_is_a_404(outsider_client, history):
    assert _try(outsider_client).status_code == 404


def test_bad_input_is_a_400_with_a_sentence(reviewer_client, history):
    bad_budget = _try(reviewer_client, budget="lots")
    assert bad_budget.status_code == 400 and TRY_BAD_BUDGET.encode() in bad_budget.content
    bad_strategy = _try(reviewer_client, strategy="magic")
    assert bad_strategy.status_code == 400 and BAD_STRATEGY.encode() in bad_strategy.content
    future = _try(reviewer_client, as_of="2999-01-01T00:00")
    assert future.status_code == 400 and BAD_AS_OF.encode() in future.content
    for impossible in ("2026-02-30T10:00", "yesterday"):  # well written but no such day, and not a date
        bad_as_of = _try(reviewer_client, as_of=impossible)
        assert bad_as_of.status_code == 400 and TRY_BAD_AS_OF.encode() in bad_as_of.content
