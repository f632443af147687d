"""memgov's webhooks resource against the running service, a real worker and a real receiver."""

from __future__ import annotations

import asyncio

import pytest

import memgov
from governance.services.principal import user_ensure
from tests.conftest import wait_for
from tests.webhook_receiver import WebhookReceiver


def test_an_owner_subscribes_sees_the_delivery_and_rotates_the_secret(service, owner, reviewer, token_for):
    client = memgov.Client(service, token_for(owner))
    user_ensure(username="wendy", password="pw-wendy", actor=None)
    with WebhookReceiver() as receiver:
        hook = client.webhooks.create(workspace="acme", url=receiver.url, event_types=["grant.changed"])
        assert isinstance(hook, memgov.Webhook) and hook.secret and hook.secret.startswith("whsec_")
        assert client.webhooks.get(hook.id).secret is None
        client.grants.add(principal="wendy", scope="acme/slides", role="viewer")
        hit = receiver.wait_for(1)[0]
        assert WebhookReceiver.verify(hit, hook.secret)
    delivered = wait_for(lambda: client.webhooks.deliveries(hook.id, state="delivered"))
    assert isinstance(delivered[0], memgov.WebhookDelivery)
    assert delivered[0].event_id == hit.json()["id"] and delivered[0].last_status_code == 200
    assert client.webhooks.update(hook.id, active=False).active is False
    rotated = client.webhooks.rotate_secret(hook.id)
    assert rotated.secret and rotated.secret != hook.secret
    assert [w.id for w in asyncio.run(_async_list(service, token_for(owner)))] == [hook.id]
    with pytest.raises(memgov.Forbidden):
        memgov.Client(service, token_for(reviewer)).webhooks.list(workspace="acme")
    client.webhooks.delete(hook.id)
    with pytest.raises(memgov.NotFound):
        client.webhooks.get(hook.id)


async def _async_list(service, token):
    async with memgov.AsyncClient(service, token) as client:
        return await client.webhooks.list(workspace="acme")
