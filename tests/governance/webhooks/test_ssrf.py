"""A webhook URL is chosen by a subscriber, so it is an attacker's way to make this server call what only
it can reach. Refused at subscribe time and again before every request (a name may resolve elsewhere
later); redirects are never followed."""

from __future__ import annotations

import pytest

from governance import propagation
from governance.errors import InvalidInput
from governance.models import Outbox, WebhookDelivery
from governance.propagation.webhook_transport import (
    REDIRECT_REFUSED,
    URL_CHARACTERS,
    URL_CREDENTIALS,
    URL_PRIVATE,
    URL_SCHEME,
    address_allowed,
)
from governance.services.webhook import webhook_create
from governance.tasks import propagate_outbox
from tests.governance.webhooks.conftest import remember, subscribe
from tests.webhook_receiver import WebhookReceiver


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook",
        "http://localhost/hook",
        "http://10.1.2.3/hook",
        "http://192.168.0.10/",
        "http://172.16.5.4/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://0.0.0.0/",
        "http://100.64.0.1/",
        "http://[fd00::1]/",
        "http://2130706433/",  # 127.0.0.1 written as one number
    ],
)
def test_private_and_loopback_targets_are_refused_when_not_allowed(owner, workspace_scope, settings, url):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(InvalidInput) as refused:
        webhook_create(
            workspace=workspace_scope.workspace, url=url, event_types=["memory.confirmed"], actor=owner
        )
    assert refused.value.message == URL_PRIVATE and refused.value.extra["field"] == "url"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", URL_SCHEME),
        ("gopher://example.com/", URL_SCHEME),
        ("ftp://example.com/", URL_SCHEME),
        ("//example.com/hook", URL_SCHEME),
        ("https://user:pw@example.com/hook", URL_CREDENTIALS),
        ("https://example.com/a\r\nX-Injected: 1", URL_CHARACTERS),
        ("https://example.com/a b", URL_CHARACTERS),
    ],
)
def test_only_plain_http_and_https_urls_are_accepted(owner, workspace_scope, url, message):
    with pytest.raises(InvalidInput) as refused:
        webhook_create(
            workspace=workspace_scope.workspace, url=url, event_types=["memory.confirmed"], actor=owner
        )
    assert refused.value.message == message


def test_public_addresses_are_allowed_and_private_ones_only_with_the_setting(settings):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    assert address_allowed("93.184.215.14") and address_allowed("2606:4700::1111")
    assert not any(
        address_allowed(a) for a in ("127.0.0.1", "::1", "10.0.0.1", "::ffff:10.0.0.1", "224.0.0.1")
    )
    settings.WEBHOOK_ALLOW_PRIVATE = True
    assert address_allowed("127.0.0.1") and address_allowed("10.0.0.1")
    assert not address_allowed("0.0.0.0") and not address_allowed("224.0.0.1")


def _fan_out(memory) -> WebhookDelivery:
    propagate_outbox(Outbox.objects.get(memory=memory, topic="memory.created").pk)
    return WebhookDelivery.objects.get()


def test_a_target_that_became_private_is_refused_before_the_request_and_not_retried(
    owner,
    project_scope,
    settings,
):
    with WebhookReceiver() as receiver:
        subscribe(
            project_scope, receiver.url, owner, ["memory.confirmed"]
        )  # allowed while subscribing (tests)
        delivery = _fan_out(remember(project_scope, "Use the blue template", key="template", actor=owner))
        settings.WEBHOOK_ALLOW_PRIVATE = False
        assert propagation.webhook_attempt(delivery.pk) == WebhookDelivery.State.FAILED
        assert receiver.received == []
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts, delivery.last_error) == ("failed", 1, URL_PRIVATE)


def test_a_redirect_is_never_followed(owner, project_scope):
    with WebhookReceiver(statuses=[302], redirect_to="http://169.254.169.254/latest/meta-data/") as receiver:
        subscribe(project_scope, receiver.url, owner, ["memory.confirmed"])
        delivery = _fan_out(remember(project_scope, "Use the red template", key="template", actor=owner))
        assert propagation.webhook_attempt(delivery.pk) == WebhookDelivery.State.FAILED
        assert len(receiver.received) == 1
    delivery.refresh_from_db()
    assert (delivery.last_status_code, delivery.last_error) == (302, REDIRECT_REFUSED)


def test_a_delivery_is_sent_once_even_when_two_workers_are_told_to_send_it(owner, project_scope):
    with WebhookReceiver() as receiver:
        subscribe(project_scope, receiver.url, owner, ["memory.confirmed"])
        delivery = _fan_out(remember(project_scope, "Use the green template", key="template", actor=owner))
        assert propagation.webhook_attempt(delivery.pk) == WebhookDelivery.State.DELIVERED
        assert propagation.webhook_attempt(delivery.pk) is None
        assert len(receiver.received) == 1


def test_no_subscription_means_no_webhook_store_on_the_outbox_row(owner, project_scope):
    memory = remember(project_scope, "Use the plain template", key="template", actor=owner)
    row = Outbox.objects.get(memory=memory, topic="memory.created")
    assert "webhooks" not in set(row.deliveries.values_list("store", flat=True))
    assert "webhook_events" not in row.payload


def test_a_secret_encrypted_under_a_lost_key_fails_the_delivery_with_advice_instead_of_looping(
    owner,
    project_scope,
    settings,
):
    from governance.propagation.webhooks import SECRET_UNREADABLE

    with WebhookReceiver() as receiver:
        subscribe(project_scope, receiver.url, owner, ["memory.confirmed"])
        delivery = _fan_out(remember(project_scope, "Use the grey template", key="template", actor=owner))
        settings.WEBHOOK_SECRET_KEY = "a-different-key"
        assert propagation.webhook_attempt(delivery.pk) == WebhookDelivery.State.FAILED
        assert receiver.received == []
    delivery.refresh_from_db()
    assert delivery.last_error == SECRET_UNREADABLE


@pytest.mark.parametrize(
    "address",
    [
        "fec0::1",  # site-local (deprecated, RFC 3879): Python's is_global says True
        "feff::1",  # the top of fec0::/10
        "fec0::ffff:7f00:1",
        "::ffff:fec0:1",  # an IPv4-mapped form whose IPv4 is 254.192.0.1 (reserved)
        "3fff::1",  # documentation (RFC 9637): Python's is_global says True
        "5f00::1",  # SRv6 SIDs (RFC 9602), reserved
        "100::1",  # discard-only
        "2001:db8::1",  # documentation
        "fe80::1%eth0",  # link-local with a zone
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "::ffff:0:a00:1",  # IPv4-translated 10.0.0.1
    ],
)
def test_every_non_global_ipv6_range_is_refused(settings, address):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    assert not address_allowed(address)


def test_a_site_local_url_is_refused_at_creation(owner, workspace_scope, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(InvalidInput) as refused:
        webhook_create(
            workspace=workspace_scope.workspace,
            url="http://[fec0::1]/hook",
            event_types=["memory.confirmed"],
            actor=owner,
        )
    assert refused.value.message == URL_PRIVATE
