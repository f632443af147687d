"""Webhook test helpers: a real loopback receiver, a subscription made through the service, a memory."""

from __future__ import annotations

import pytest

from governance.models import EventType
from governance.services.memory import MemoryInput, memory_record
from governance.services.webhook import webhook_create
from tests.webhook_receiver import WebhookReceiver

ALL_EVENTS = list(EventType.values)


@pytest.fixture
def receiver():
    with WebhookReceiver() as running:
        yield running


def subscribe(scope, url, owner, events=None):
    """Subscribe `url` to the events of `scope`'s workspace; returns (subscription, secret)."""
    created = webhook_create(
        workspace=scope.workspace, url=url, event_types=events or ALL_EVENTS, actor=owner
    )
    return created.subscription, created.secret


def remember(scope, text, *, actor=None, kind="convention", status="active", **kw):
    return memory_record(
        item=MemoryInput(scope=scope, kind=kind, text=text, source_kind="user", status=status, **kw),
        actor=actor,
    )
