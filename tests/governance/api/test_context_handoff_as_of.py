"""The hand-off slot honours `as_of` (issue 25): `POST /context` with `include: ["handoff"]` and an `as_of`
replay reads the hand-off as it stood then, as the packet's other slots read only what had been said by
then. A rule superseded after `as_of` is in force in the as-of hand-off (and not listed as corrected); a
rule, a replacement or a dispute made after `as_of` is absent; a tool call answered after `as_of` was
still pending. Today's hand-off of the same scope shows today's state."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from governance.services.dispute import dispute_propose
from governance.services.events import event_ingest
from governance.services.memory import MemoryInput, memory_record, memory_supersede
from tests.conftest import token_client

pytestmark = pytest.mark.django_db


def _remember(scope, text, **kw):
    kw.setdefault("kind", "convention")
    kw.setdefault("status", "active")
    kw.setdefault("source_kind", "user")
    return memory_record(item=MemoryInput(scope=scope, text=text, **kw), actor=None)


def _call(scope, role, content, ref, at):
    turn = {"role": role, "content": content, "call_id": "call-7", "ref": ref}
    return event_ingest(scope=scope, session="s1", at=at, actor=None, turns=[turn])[0]


def _handoff(client, **extra):
    body = {
        "scope": "acme/slides",
        "query": "can we export now?",
        "budget_tokens": 4000,
        "include": ["handoff"],
    }
    response = client.post("/api/v1/context", {**body, **extra}, format="json")
    assert response.status_code == 200, response.content
    lines = response.json()["packet"]["handoff"]
    opened = {tuple(ln["memory_ids"]): ln for ln in lines if ln["section"] == "open_questions"}
    # By the ids each line cites; a call still pending is cited by the next step's "Before it" line too.
    return {**{tuple(ln["memory_ids"]): ln for ln in lines}, "open": opened}


def test_an_as_of_hand_off_shows_the_state_of_then(project_scope, curator, agent):
    pdf = _remember(project_scope, "Export the deck as PDF", key="export_format")
    said_old = _remember(project_scope, "We host the decks on Dropbox.", kind="semantic")
    call = _call(
        project_scope, "tool_call", "export_deck(format='pdf')", "c7", timezone.now() - timedelta(hours=1)
    )
    as_of = timezone.now()

    pptx = memory_supersede(
        memory_id=pdf.pk,
        text="Export the deck as PPTX",
        reason="the client edits it",
        source_kind="user",
        actor=curator,
    )
    later_rule = _remember(project_scope, "Never publish the deck on a Friday", key="publish_day")
    said_new = _remember(project_scope, "We have moved the decks to SharePoint.", kind="semantic")
    dispute_propose(
        newer=said_new, older=said_old, similarity=0.9, reason="another value", cues=["moved … to"]
    )
    result = _call(project_scope, "tool_result", "export_deck: wrote deck.pdf", "r7", timezone.now())

    client = token_client(agent)
    today = _handoff(client)
    assert today[(pptx.pk,)]["section"] == "constraints"
    assert today[(later_rule.pk,)]["section"] == "constraints"
    assert today[(pdf.pk, pptx.pk)]["section"] == "superseded"
    assert (said_new.pk,) in today["open"]  # the dispute
    assert today[(result.pk,)]["section"] == "done" and (call.pk,) not in today

    then = _handoff(client, as_of=as_of.isoformat())
    cited = {i for ids in then if ids != "open" for i in ids}
    # In force then, with no word of its replacement; what was written after as_of is nowhere.
    assert then[(pdf.pk,)]["section"] == "constraints" and then[(pdf.pk,)]["nature"] == "authorisation"
    assert "replaced_by" not in then[(pdf.pk,)]
    assert not cited & {pptx.pk, later_rule.pk, said_new.pk, result.pk}
    assert not [ln for ids, ln in then.items() if ids != "open" and ln["section"] == "superseded"]
    # The call had no result yet.
    assert then["open"][(call.pk,)]["nature"] == "pending"
    assert then[(call.pk,)]["text"].startswith("Before it: 1 pending tool call")
