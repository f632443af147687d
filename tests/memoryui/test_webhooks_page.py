"""The Webhooks page: an owner of the whole workspace sees its subscriptions and delivery log, adds a
webhook (the secret shown once), filters failed deliveries and redelivers; nobody else does."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from governance.models import Outbox, WebhookDelivery, WebhookSubscription
from governance.selectors import webhooks as sel
from governance.tasks import propagate_outbox
from memoryui.views.webhooks import NONE_MANAGED
from tests.governance.webhooks.conftest import remember, subscribe

URL = "https://hooks.example.net/memgov"


def _deliveries(project_scope, owner, n: int, start: int = 0):
    for i in range(start, start + n):
        memory = remember(project_scope, f"Page rule {i}", key=f"page_rule_{i}", actor=owner)
        propagate_outbox(Outbox.objects.get(memory=memory, topic="memory.created").pk)


def test_an_owner_adds_a_webhook_and_sees_its_secret_once(owner_client, workspace_scope):
    answer = owner_client.post(
        "/webhooks/add/",
        {"workspace": "acme", "url": URL, "event_types": ["memory.forgotten", "grant.changed"]},
    )
    assert answer.status_code == 200
    sub = WebhookSubscription.objects.get()
    secret = sub.secret()
    assert secret.encode() in answer.content and b'id="new-secret"' in answer.content
    assert sub.event_types == ["grant.changed", "memory.forgotten"]
    again = owner_client.get("/webhooks/")
    assert again.status_code == 200 and URL.encode() in again.content
    assert secret.encode() not in again.content  # once only


def test_a_bad_url_is_shown_back_with_the_reason_and_nothing_is_added(owner_client, workspace_scope):
    answer = owner_client.post(
        "/webhooks/add/",
        {"workspace": "acme", "url": "file:///etc/passwd", "event_types": ["memory.forgotten"]},
    )
    assert answer.status_code == 400 and b"http:// or https://" in answer.content
    assert not WebhookSubscription.objects.exists()


def test_the_delivery_log_shows_state_code_and_attempts_and_filters_failed(
    owner, owner_client, project_scope
):
    subscribe(project_scope, URL, owner, ["memory.confirmed"])
    _deliveries(project_scope, owner, 2)
    failed, delivered = WebhookDelivery.objects.order_by("pk")
    WebhookDelivery.objects.filter(pk=failed.pk).update(
        state="failed", attempts=3, last_status_code=503, last_error="The receiver answered HTTP 503."
    )
    WebhookDelivery.objects.filter(pk=delivered.pk).update(
        state="delivered", attempts=1, last_status_code=200
    )
    everything = owner_client.get("/webhooks/?workspace=acme").content.decode()
    assert f'data-delivery="{failed.pk}"' in everything and f'data-delivery="{delivered.pk}"' in everything
    assert "HTTP 503" in everything and "Page rule" not in everything
    only_failed = owner_client.get("/webhooks/?workspace=acme&state=failed").content.decode()
    assert (
        f'data-delivery="{failed.pk}"' in only_failed and f'data-delivery="{delivered.pk}"' not in only_failed
    )
    redo = owner_client.post(f"/webhooks/deliveries/{failed.pk}/redeliver/", {"state": "failed"})
    assert redo.status_code == 302 and redo["Location"] == "/webhooks/?workspace=acme&state=failed"
    failed.refresh_from_db()
    assert (failed.state, failed.attempts) == ("pending", 0)


def test_an_owner_pauses_rotates_and_deletes_from_the_page(owner, owner_client, workspace_scope):
    sub, old = subscribe(workspace_scope, URL, owner)
    assert owner_client.post(f"/webhooks/{sub.pk}/act/", {"action": "pause"}).status_code == 302
    sub.refresh_from_db()
    assert not sub.active
    rotated = owner_client.post(f"/webhooks/{sub.pk}/act/", {"action": "rotate"})
    sub.refresh_from_db()
    assert sub.secret() != old and sub.secret().encode() in rotated.content
    assert owner_client.post(f"/webhooks/{sub.pk}/act/", {"action": "explode"}).status_code == 400
    assert owner_client.post(f"/webhooks/{sub.pk}/act/", {"action": "delete"}).status_code == 302
    assert not WebhookSubscription.objects.exists()


@pytest.mark.parametrize("who", ["reviewer_client", "curator_client"])
def test_other_roles_of_the_workspace_see_no_webhooks_and_are_refused(request, owner, workspace_scope, who):
    client = request.getfixturevalue(who)
    sub, _ = subscribe(workspace_scope, URL, owner)
    _deliveries(workspace_scope, owner, 1)
    delivery = WebhookDelivery.objects.get()
    page = client.get("/webhooks/")
    assert (
        page.status_code == 200 and NONE_MANAGED.encode() in page.content and URL.encode() not in page.content
    )
    assert client.get("/webhooks/?workspace=acme").status_code == 403
    assert (
        client.post(
            "/webhooks/add/", {"workspace": "acme", "url": URL, "event_types": ["grant.changed"]}
        ).status_code
        == 403
    )
    assert client.post(f"/webhooks/{sub.pk}/act/", {"action": "delete"}).status_code == 403
    assert client.post(f"/webhooks/deliveries/{delivery.pk}/redeliver/").status_code == 403
    assert WebhookSubscription.objects.count() == 1 and WebhookSubscription.objects.get().active


def test_another_workspaces_owner_gets_the_same_404_as_for_nothing(owner, outsider_client, workspace_scope):
    sub, _ = subscribe(workspace_scope, URL, owner)
    assert outsider_client.get("/webhooks/?workspace=acme").status_code == 404
    assert outsider_client.get("/webhooks/?workspace=nothing-here").status_code == 404
    assert outsider_client.post(f"/webhooks/{sub.pk}/act/", {"action": "delete"}).status_code == 404
    assert outsider_client.post("/webhooks/987654/act/", {"action": "delete"}).status_code == 404
    assert WebhookSubscription.objects.filter(pk=sub.pk).exists()


def test_signed_out_visitors_are_sent_to_sign_in(owner, workspace_scope):
    sub, _ = subscribe(workspace_scope, URL, owner)
    anonymous = Client()
    assert anonymous.get("/webhooks/").status_code == 302
    assert anonymous.post(f"/webhooks/{sub.pk}/act/", {"action": "delete"}).status_code == 302
    assert WebhookSubscription.objects.filter(pk=sub.pk).exists()


def test_the_subscription_and_delivery_lists_are_constant_query(
    owner, project_scope, django_assert_max_num_queries
):
    for n in range(3):
        subscribe(project_scope, f"{URL}/{n}", owner, ["memory.confirmed"])
    _deliveries(project_scope, owner, 5)
    assert WebhookDelivery.objects.count() == 15
    with django_assert_max_num_queries(2):
        subs = list(sel.subscriptions_in([project_scope.workspace]))
        rows = [(d.subscription.url, d.state) for d in sel.deliveries_of(subs)]
    assert len(rows) == 15 and {s.pending_count for s in subs} == {5}


def test_the_page_costs_the_same_queries_for_one_delivery_or_many(owner, owner_client, project_scope):
    subscribe(project_scope, URL, owner, ["memory.confirmed"])
    _deliveries(project_scope, owner, 1)
    with CaptureQueriesContext(connection) as few:
        assert owner_client.get("/webhooks/").status_code == 200
    _deliveries(project_scope, owner, 6, start=1)
    with CaptureQueriesContext(connection) as many:
        assert owner_client.get("/webhooks/").status_code == 200
    assert len(many.captured_queries) == len(few.captured_queries)
