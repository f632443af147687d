"""Browser steps for outbound events, for any walk that has a signed-in owner of the whole workspace,
a live server and a real Celery worker (`celery_worker`):

    with WebhookReceiver() as receiver:               # tests/webhook_receiver.py, on loopback
        secret = add_webhook(page, receiver.url)      # on /webhooks/, all event types
        ...                                           # any change: confirm, retire, forget, a grant
        hit = receiver.wait_for(1)[0]
        assert WebhookReceiver.verify(hit, secret)
        see_webhook_delivery(page, hit.json()["type"])
"""

from __future__ import annotations

import time

from playwright.sync_api import expect


def add_webhook(page, url: str, workspace: str | None = None) -> str:
    """Open the Webhooks page, add a subscription to `url` (every event type), return the secret it shows once."""
    page.goto(f"/webhooks/?workspace={workspace}" if workspace else "/webhooks/")
    form = page.locator("#webhook-form")
    form.get_by_label("URL").fill(url)
    form.get_by_role("button", name="Add webhook").click()
    page.wait_for_load_state("networkidle")
    secret = page.locator("#secret-value")
    expect(secret).to_be_visible()
    return secret.inner_text().strip()


def see_webhook_delivery(page, event_type: str, timeout: float = 30.0):
    """Reload the Webhooks page until its delivery log shows a delivered `event_type` with status 200;
    return that row."""
    deadline = time.monotonic() + timeout
    while True:
        page.goto("/webhooks/")
        row = page.locator("#deliveries tr.delivery-delivered", has_text=event_type).first
        if row.count():
            expect(row).to_contain_text("200")
            return row
        if time.monotonic() > deadline:
            raise AssertionError(f"no delivered {event_type} in the delivery log within {timeout}s")
        time.sleep(0.5)
