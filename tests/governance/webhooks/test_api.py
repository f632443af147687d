"""The webhooks API: owners of the whole workspace manage subscriptions and read the delivery log; every
other role of the workspace gets a 403 with the reason, another workspace's owner the same 404 as for
something that does not exist, and no token a 401. A refused request changes nothing."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from governance.models import AuditEvent, Outbox, Role, WebhookDelivery, WebhookSubscription
from governance.permissions import DENIAL_REASONS, Action
from governance.propagation.webhook_transport import URL_SCHEME
from governance.services.principal import token_issue
from governance.tasks import propagate_outbox
from tests.conftest import token_client
from tests.governance.webhooks.conftest import remember, subscribe

URL = "https://hooks.example.net/memgov"  # not resolvable here: accepted, checked again before each request
NEW = {"workspace": "acme", "url": URL, "event_types": ["memory.confirmed", "memory.forgotten"]}


def test_an_owner_subscribes_and_gets_the_secret_once(owner):
    client = token_client(owner)
    created = client.post("/api/v1/webhooks", NEW, format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["secret"].startswith("whsec_") and len(body["secret"]) > 40
    assert body["event_types"] == ["memory.confirmed", "memory.forgotten"] and body["workspace"] == "acme"
    stored = WebhookSubscription.objects.get(pk=body["id"])
    assert body["secret"] not in stored.secret_encrypted and stored.secret() == body["secret"]
    listed = client.get("/api/v1/webhooks", {"workspace": "acme"}).json()
    assert [s["id"] for s in listed] == [body["id"]] and "secret" not in listed[0]
    assert "secret" not in client.get(f"/api/v1/webhooks/{body['id']}").json()
    assert AuditEvent.objects.filter(action="webhook.create", target_id=str(body["id"]), actor=owner).exists()


@pytest.mark.parametrize("role", ["reviewer", "curator", "agent"])
def test_other_roles_of_the_workspace_are_refused_with_the_reason(request, owner, workspace_scope, role):
    member = request.getfixturevalue(role)
    sub, _ = subscribe(workspace_scope, URL, owner)
    client = token_client(member)
    answers = [
        client.post("/api/v1/webhooks", NEW, format="json"),
        client.get("/api/v1/webhooks", {"workspace": "acme"}),
        client.get(f"/api/v1/webhooks/{sub.pk}"),
        client.patch(f"/api/v1/webhooks/{sub.pk}", {"active": False}, format="json"),
        client.delete(f"/api/v1/webhooks/{sub.pk}"),
        client.post(f"/api/v1/webhooks/{sub.pk}/rotate-secret"),
        client.get(f"/api/v1/webhooks/{sub.pk}/deliveries"),
    ]
    assert [a.status_code for a in answers] == [403] * len(answers)
    assert answers[0].json()["message"] == DENIAL_REASONS[Action.MANAGE_WEBHOOKS]
    assert client.get("/api/v1/webhooks").json() == []  # the unfiltered list holds only what one manages
    sub.refresh_from_db()
    assert sub.active and WebhookSubscription.objects.count() == 1


def test_another_workspaces_owner_cannot_tell_a_subscription_from_a_missing_one(
    owner, outsider, workspace_scope
):
    sub, _ = subscribe(workspace_scope, URL, owner)
    client = token_client(outsider)
    for path in (f"/api/v1/webhooks/{sub.pk}", f"/api/v1/webhooks/{sub.pk}/deliveries"):
        foreign, missing = client.get(path), client.get(path.replace(str(sub.pk), "987654"))
        assert foreign.status_code == missing.status_code == 404 and foreign.json() == missing.json()
    assert (
        client.get("/api/v1/webhooks", {"workspace": "acme"}).json()
        == client.get("/api/v1/webhooks", {"workspace": "nope"}).json()
    )
    assert client.post("/api/v1/webhooks", NEW, format="json").status_code == 404
    assert client.delete(f"/api/v1/webhooks/{sub.pk}").status_code == 404
    assert client.get("/api/v1/webhooks").json() == []
    assert WebhookSubscription.objects.filter(pk=sub.pk).exists()


def test_no_token_no_webhooks(owner, workspace_scope):
    sub, _ = subscribe(workspace_scope, URL, owner)
    anonymous = APIClient()
    assert anonymous.get("/api/v1/webhooks").status_code == 401
    assert anonymous.post("/api/v1/webhooks", NEW, format="json").status_code == 401
    assert anonymous.delete(f"/api/v1/webhooks/{sub.pk}").status_code == 401
    assert WebhookSubscription.objects.filter(pk=sub.pk).exists()


def test_an_owner_token_bound_below_the_workspace_root_does_not_manage_its_webhooks(owner, project_scope):
    raw = token_issue(principal=owner, scope=project_scope, max_role=Role.OWNER, actor=owner)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    assert client.post("/api/v1/webhooks", NEW, format="json").status_code == 403
    assert not WebhookSubscription.objects.exists()


def test_bad_input_is_a_400_with_the_field_and_changes_nothing(owner, workspace_scope):
    client = token_client(owner)
    bad_type = client.post("/api/v1/webhooks", {**NEW, "event_types": ["memory.created"]}, format="json")
    assert bad_type.status_code == 400 and "event_types" in bad_type.json()["fields"]
    no_types = client.post("/api/v1/webhooks", {**NEW, "event_types": []}, format="json")
    assert no_types.status_code == 400
    bad_url = client.post("/api/v1/webhooks", {**NEW, "url": "file:///etc/passwd"}, format="json")
    assert bad_url.status_code == 400 and bad_url.json()["message"] == URL_SCHEME
    assert not WebhookSubscription.objects.exists()
    sub, _ = subscribe(workspace_scope, URL, owner)
    patched = client.patch(f"/api/v1/webhooks/{sub.pk}", {"url": "ftp://x", "active": False}, format="json")
    assert patched.status_code == 400
    sub.refresh_from_db()
    assert sub.url == URL and sub.active


def test_an_owner_pauses_rotates_and_deletes_a_subscription(owner, workspace_scope):
    sub, old = subscribe(workspace_scope, URL, owner)
    client = token_client(owner)
    paused = client.patch(
        f"/api/v1/webhooks/{sub.pk}", {"active": False, "description": "CRM"}, format="json"
    )
    assert (
        paused.status_code == 200
        and paused.json()["active"] is False
        and paused.json()["description"] == "CRM"
    )
    rotated = client.post(f"/api/v1/webhooks/{sub.pk}/rotate-secret").json()["secret"]
    sub.refresh_from_db()
    assert rotated != old and sub.secret() == rotated
    assert client.delete(f"/api/v1/webhooks/{sub.pk}").status_code == 204
    assert client.get(f"/api/v1/webhooks/{sub.pk}").status_code == 404
    actions = set(
        AuditEvent.objects.filter(target_type="webhook", target_id=str(sub.pk)).values_list(
            "action", flat=True
        )
    )
    assert actions == {"webhook.create", "webhook.update", "webhook.rotate_secret", "webhook.delete"}


def test_the_delivery_log_filters_by_state_and_an_owner_redelivers(owner, outsider, project_scope):
    sub, _ = subscribe(project_scope, URL, owner, ["memory.confirmed"])
    for n in range(2):
        memory = remember(project_scope, f"Rule number {n}", key=f"rule_{n}", actor=owner)
        propagate_outbox(Outbox.objects.get(memory=memory, topic="memory.created").pk)
    first, second = WebhookDelivery.objects.order_by("pk")
    WebhookDelivery.objects.filter(pk=first.pk).update(state="failed", attempts=3, last_status_code=500)
    client = token_client(owner)
    everything = client.get(f"/api/v1/webhooks/{sub.pk}/deliveries").json()
    failed = client.get(f"/api/v1/webhooks/{sub.pk}/deliveries", {"state": "failed"}).json()
    assert {d["id"] for d in everything} == {first.pk, second.pk}
    assert [(d["id"], d["last_status_code"], d["attempts"]) for d in failed] == [(first.pk, 500, 3)]
    assert all("Rule number" not in str(d["body"]) for d in everything)
    assert client.get(f"/api/v1/webhooks/{sub.pk}/deliveries", {"state": "lost"}).status_code == 400
    assert token_client(outsider).post(f"/api/v1/webhooks/deliveries/{first.pk}/redeliver").status_code == 404
    again = client.post(f"/api/v1/webhooks/deliveries/{first.pk}/redeliver")
    assert again.status_code == 202 and again.json()["state"] == "pending" and again.json()["attempts"] == 0
    assert AuditEvent.objects.filter(action="webhook.redeliver", target_id=str(first.pk)).exists()
