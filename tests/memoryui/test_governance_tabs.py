"""The governance page's three tabs (grants, audit, propagation): each role, another workspace, no sign-in;
the audit tab's date range, filters and keyset pages; bounded queries."""

from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from governance.models import AuditEvent, OutboxDelivery
from governance.selectors import dashboard as sel
from memoryui.views.governance import BAD_CURSOR, BAD_DATE, BAD_RANGE
from tests.conftest import token_client
from tests.memoryui.conftest import remember

TABS = ["governance", "governance-audit", "governance-propagation"]


def _backdate(event_ids, days):
    """Audit rows refuse UPDATE (a trigger keeps the log append-only); a test that needs old events moves
    them with triggers off for this statement only (replica role: the test database's user is a superuser)."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(
            "UPDATE governance_auditevent SET at = at - %s * interval '1 day' WHERE id = ANY(%s)",
            [days, list(event_ids)],
        )
        cursor.execute("SET LOCAL session_replication_role = origin")


def test_the_old_governance_url_opens_the_grants_tab_keeping_the_scope(reviewer_client, history):
    response = reviewer_client.get("/governance/", {"scope": "acme/slides"})
    assert response.status_code == 302 and response["Location"] == "/governance/grants/?scope=acme%2Fslides"
    assert reviewer_client.get("/governance/")["Location"] == "/governance/grants/"


@pytest.mark.parametrize("name", TABS)
def test_each_tab_sends_an_anonymous_visitor_and_an_agent_token_to_sign_in(client, agent, history, name):
    assert client.get(reverse(f"dashboard:{name}"))["Location"].startswith("/accounts/login/")
    assert token_client(agent).get(reverse(f"dashboard:{name}")).status_code == 302


@pytest.mark.parametrize("name", TABS)
def test_each_tab_renders_for_every_role_and_marks_itself_current(
    owner_client, reviewer_client, curator_client, outsider_client, history, name
):
    for client in (owner_client, reviewer_client, curator_client, outsider_client):
        response = client.get(reverse(f"dashboard:{name}"))
        assert response.status_code == 200
        assert response.context["tab"] in response.content.decode().split('aria-current="page">')[2].lower()


@pytest.mark.parametrize("name", TABS)
def test_a_scope_of_another_workspace_is_not_found_on_each_tab(
    reviewer_client, outsider_client, history, name
):
    assert reviewer_client.get(reverse(f"dashboard:{name}"), {"scope": "globex/slides"}).status_code == 404
    assert outsider_client.get(reverse(f"dashboard:{name}"), {"scope": "acme/slides"}).status_code == 404


def test_the_grants_tab_lists_grants_and_tokens_but_not_the_audit_log(owner_client, reviewer, history):
    response = owner_client.get(reverse("dashboard:governance"))
    assert {r["grant"].principal.name for r in response.context["grants"]} >= {"olivia", "rami"}
    assert b"Add grant" in response.content and b'id="audit-log"' not in response.content


def test_the_audit_tab_of_another_workspace_shows_none_of_acmes_events(
    outsider_client, owner_client, history
):
    events = outsider_client.get(reverse("dashboard:governance-audit")).context["audit"].object_list
    assert all(e.scope_path.startswith("globex") for e in events)
    assert (
        history["secret"].text.encode()
        not in outsider_client.get(reverse("dashboard:governance-audit")).content
    )
    owners = owner_client.get(reverse("dashboard:governance-audit")).context["audit"].object_list
    assert any(e.scope_path.startswith("acme") for e in owners)
    assert not any(e.scope_path.startswith("globex") for e in owners)


def test_the_audit_tab_filters_by_actor_and_action(owner_client, owner, project_scope, history):
    from governance.services.memory import memory_retire

    memory_retire(memory_id=history["episode"].pk, reason="done", actor=owner)
    by_actor = owner_client.get(reverse("dashboard:governance-audit"), {"actor": "olivia"}).context["audit"]
    assert by_actor.object_list and {e.actor_name for e in by_actor.object_list} == {"olivia"}
    both = (
        owner_client.get(
            reverse("dashboard:governance-audit"), {"actor": "olivia", "action": "memory.retire"}
        )
        .context["audit"]
        .object_list
    )
    assert [e.target_id for e in both] == [str(history["episode"].pk)]
    none = owner_client.get(
        reverse("dashboard:governance-audit"), {"actor": "olivia", "action": "memory.supersede"}
    )
    assert list(none.context["audit"].object_list) == []


def test_the_audit_tab_keeps_to_a_date_range_in_the_viewers_time_zone(owner_client, project_scope, history):
    old = remember(project_scope, "An old decision")
    old_events = list(
        AuditEvent.objects.filter(target_type="memory", target_id=str(old.pk)).values_list("pk", flat=True)
    )
    _backdate(old_events, 10)
    today = timezone.localdate()
    ten_days_ago = (today - timedelta(days=10)).isoformat()
    then = owner_client.get(reverse("dashboard:governance-audit"), {"from": ten_days_ago, "to": ten_days_ago})
    assert {e.pk for e in then.context["audit"].object_list} == set(old_events)
    recent = (
        owner_client.get(
            reverse("dashboard:governance-audit"), {"from": (today - timedelta(days=1)).isoformat()}
        )
        .context["audit"]
        .object_list
    )
    assert recent and not {e.pk for e in recent} & set(old_events)
    until = (
        owner_client.get(
            reverse("dashboard:governance-audit"), {"to": (today - timedelta(days=2)).isoformat()}
        )
        .context["audit"]
        .object_list
    )
    assert {e.pk for e in until} == set(old_events)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"from": "yesterday"}, BAD_DATE),
        ({"to": "2026-13-01"}, BAD_DATE),
        ({"to": "9999-12-31"}, BAD_DATE),
        ({"from": "0001-01-01"}, BAD_DATE),  # the day after must be a date
        ({"from": "2026-05-02", "to": "2026-05-01"}, BAD_RANGE),
        ({"before": "x"}, BAD_CURSOR),
        ({"after": "-3"}, BAD_CURSOR),
    ],
)
def test_bad_audit_parameters_are_a_400_with_a_sentence(owner_client, history, params, message):
    response = owner_client.get(reverse("dashboard:governance-audit"), params)
    assert response.status_code == 400 and message.encode() in response.content


def test_audit_pages_walk_back_and_forth_by_keyset_without_gaps_or_repeats(owner, project_scope, history):
    for i in range(7):
        remember(project_scope, f"fact {i}")
    everything = [e.pk for e in sel.audit_queryset(owner, None).order_by("-pk")]
    first = sel.audit_page(owner, None, sel.AuditFilters(), per_page=3)
    assert [e.pk for e in first.object_list] == everything[:3] and first.newer is None and first.older
    second = sel.audit_page(owner, None, sel.AuditFilters(), before=first.older, per_page=3)
    assert [e.pk for e in second.object_list] == everything[3:6] and second.newer == everything[3]
    back = sel.audit_page(owner, None, sel.AuditFilters(), after=second.newer, per_page=3)
    assert [e.pk for e in back.object_list] == everything[:3] and back.newer is None
    walked, cursor = [], None
    while True:
        page = sel.audit_page(owner, None, sel.AuditFilters(), before=cursor, per_page=3)
        walked += [e.pk for e in page.object_list]
        if page.older is None:
            break
        cursor = page.older
    assert walked == everything


def test_the_audit_tab_links_keep_filters_and_swap_the_cursor(owner_client, project_scope, history):
    for i in range(60):
        remember(project_scope, f"fact {i}")
    first = owner_client.get(
        reverse("dashboard:governance-audit"), {"action": "memory.record", "scope": "acme"}
    )
    older = first.context["links"]["older"]
    assert "action=memory.record" in older and "scope=acme" in older and "before=" in older
    assert "newer" not in first.context["links"]
    second = owner_client.get(reverse("dashboard:governance-audit") + older)
    assert second.status_code == 200 and "after=" in second.context["links"]["newer"]
    assert {e.action for e in second.context["audit"].object_list} == {"memory.record"}
    partial = owner_client.get(
        reverse("dashboard:governance-audit") + older, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="audit-log"
    )
    assert b"<html" not in partial.content and b"<table>" in partial.content


def test_the_propagation_tab_shows_lag_per_store_states_and_failed_deliveries_with_their_errors(
    reviewer_client, outsider_client, history
):
    mine = OutboxDelivery.objects.filter(outbox__memory=history["second"]).order_by("store").first()
    secret = OutboxDelivery.objects.filter(outbox__memory=history["secret"]).order_by("store").first()
    OutboxDelivery.objects.filter(pk__in=[mine.pk, secret.pk]).update(
        state="failed", error="connection refused by the keyword index", attempts=3
    )
    response = reviewer_client.get(reverse("dashboard:governance-propagation"))
    assert response.status_code == 200
    assert response.context["lag"]["pending"] >= 1 and response.context["lag"]["lag"] is not None
    stores = {s["store"]: s for s in response.context["stores"]}
    assert stores[mine.store]["failed"] == 2  # counts are system-wide; they hold no memory content
    assert [d.pk for d in response.context["failed"]] == [mine.pk]  # the list only what the reader may read
    assert b"connection refused by the keyword index" in response.content
    assert outsider_client.get(reverse("dashboard:governance-propagation")).context["failed"] == []


def test_governance_tab_selectors_are_constant_query(
    owner, project_scope, history, django_assert_max_num_queries
):
    for i in range(40):
        remember(project_scope, f"fact {i}")
    OutboxDelivery.objects.filter(store="cache").update(state="failed", error="boom")
    with django_assert_max_num_queries(3):  # the reader's grants, the first id of the date range, the page
        page = sel.audit_page(
            owner, None, sel.AuditFilters(actor="system", since=timezone.now() - timedelta(days=1))
        )
    assert (
        len(page.object_list) == 50 and {e.actor_name for e in page.object_list} == {"system"} and page.older
    )
    with django_assert_max_num_queries(4):
        failed = sel.failed_deliveries(owner, None)
        [(d.outbox.topic, d.error) for d in failed]
    assert len(failed) >= 40 and {d.store for d in failed} == {"cache"}
    with django_assert_max_num_queries(3):
        states = sel.store_states()
        sel.outbox_lag()
    assert {s["store"]: s["failed"] for s in states}["cache"] >= 40


@pytest.mark.parametrize("name", TABS)
def test_each_tab_view_runs_a_bounded_number_of_queries(
    owner_client, project_scope, history, name, django_assert_max_num_queries
):
    for i in range(30):
        remember(project_scope, f"fact {i}")
    with django_assert_max_num_queries(25):
        assert owner_client.get(reverse(f"dashboard:{name}")).status_code == 200
