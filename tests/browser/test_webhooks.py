"""An owner adds a webhook in the browser, a change happens, the real worker delivers it signed to a real
receiver on loopback, and the owner sees it in the delivery log; a failed one is redelivered from there."""

from __future__ import annotations

from playwright.sync_api import expect

from governance.models import Role, WebhookDelivery
from governance.services.principal import grant_add, user_ensure
from tests.browser.conftest import nav, sign_in
from tests.browser.webhook_steps import add_webhook, see_webhook_delivery
from tests.conftest import wait_for
from tests.webhook_receiver import WebhookReceiver


def test_owner_adds_a_webhook_and_sees_a_signed_delivery(page, celery_worker, owner, project_scope):
    sign_in(page, "olivia", "pw-olivia")
    nav(page, "Webhooks")
    with WebhookReceiver() as receiver:
        secret = add_webhook(page, receiver.url)
        colleague = user_ensure(username="wendy", password="pw-wendy", actor=None)
        grant_add(principal=colleague, scope=project_scope, role=Role.REVIEWER, actor=owner)
        hit = receiver.wait_for(1)[0]
        assert hit.json()["type"] == "grant.changed" and WebhookReceiver.verify(hit, secret)
        row = see_webhook_delivery(page, "grant.changed")
    expect(row).to_contain_text(hit.json()["id"])


def test_owner_filters_failed_deliveries_and_redelivers_one(page, celery_worker, owner, project_scope):
    sign_in(page, "olivia", "pw-olivia")
    with WebhookReceiver(statuses=[500, 500, 500]) as receiver:
        add_webhook(page, receiver.url)
        grant_add(
            principal=user_ensure(username="wendy", password="pw-wendy", actor=None),
            scope=project_scope,
            role=Role.VIEWER,
            actor=owner,
        )
        wait_for(lambda: WebhookDelivery.objects.filter(state="failed").exists())
        page.goto("/webhooks/")
        page.locator("#only-failed").click()
        failed = page.locator("#deliveries tr.delivery-failed")
        expect(failed).to_have_count(1)
        expect(failed).to_contain_text("500")
        failed.get_by_role("button", name="Redeliver").first.click()
        page.wait_for_load_state("networkidle")
        receiver.wait_for(4)
    see_webhook_delivery(page, "grant.changed")
