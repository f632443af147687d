"""Dashboard fixtures: signed-in clients for the principal trio and a small memory history to look at."""

from __future__ import annotations

import pytest
from django.test import Client

from governance.models import Turn
from governance.services.memory import MemoryInput, memory_propose, memory_record, memory_supersede


def signed_in(principal, password: str) -> Client:
    client = Client()
    assert client.login(username=principal.name, password=password)
    return client


@pytest.fixture
def owner_client(owner):
    return signed_in(owner, "pw-olivia")


@pytest.fixture
def reviewer_client(reviewer):
    return signed_in(reviewer, "pw-rami")


@pytest.fixture
def curator_client(curator):
    return signed_in(curator, "pw-cora")


@pytest.fixture
def outsider_client(outsider):
    return signed_in(outsider, "pw-otto")


def remember(scope, text, *, kind="semantic", key=None, status="active", **kw):
    return memory_record(
        item=MemoryInput(scope=scope, kind=kind, key=key, text=text, source_kind="user", status=status, **kw),
        actor=None,
    )


@pytest.fixture
def history(project_scope, sibling_scope):
    """An export-format fact superseded once, a proposal, an episode, and a secret in a sibling scope."""
    first = remember(project_scope, "Export slides as PDF", kind="convention", key="export_format")
    second = memory_supersede(
        memory_id=first.pk,
        text="Export slides as PPTX",
        reason="user changed it",
        source_kind="user",
        actor=None,
    )
    proposal = remember(project_scope, "The user prefers dark themes", kind="preference", status="candidate")
    memory_propose(memory_id=proposal.pk, actor=None)
    episode = remember(project_scope, "User: make the deck shorter", kind="episodic")
    secret = remember(sibling_scope, "Payments API key rotates monthly", kind="semantic")
    return {"first": first, "second": second, "proposal": proposal, "episode": episode, "secret": secret}


@pytest.fixture
def turn(project_scope, history, agent):
    """A stored turn that cited the current export format and the episode (written as the recall would)."""
    packet = {
        "constraints": [
            {
                "memory_id": history["second"].pk,
                "kind": "convention",
                "key": "export_format",
                "revision": 2,
                "status": "active",
                "text": "Export slides as PPTX",
                "source": "user",
                "score": 0.91,
                "reason": "keyed fact in force",
            }
        ],
        "recent": [
            {
                "memory_id": history["episode"].pk,
                "kind": "episodic",
                "key": None,
                "revision": 1,
                "status": "active",
                "text": "User: make the deck shorter",
                "source": "user",
                "score": 0.5,
                "reason": "recent turn",
            }
        ],
        "negative": [
            {
                "memory_id": history["first"].pk,
                "kind": "convention",
                "key": "export_format",
                "revision": 1,
                "status": "superseded",
                "text": "no longer in force: Export slides as PDF",
                "source": "user",
                "score": None,
                "reason": "superseded by r2",
            }
        ],
        "skipped": [
            {
                "memory_id": history["proposal"].pk,
                "text": "The user prefers dark themes",
                "score": 0.2,
                "reason": "over budget",
            }
        ],
    }
    return Turn.objects.create(
        scope=project_scope,
        principal=agent,
        session="s1",
        query="export the deck",
        packet=packet,
        request={"budget_tokens": 500},
        budget_limit=500,
        budget_used=120,
        token_counter="cl100k_base",
        trace={
            "stages": [
                {"name": "eligible", "ms": 1.2, "in": 5, "out": 4},
                {"name": "pack", "ms": 0.4, "in": 4, "out": 3},
            ]
        },
    )
