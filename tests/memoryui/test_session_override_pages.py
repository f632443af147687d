"""The dashboard shows session overrides (issue 24): the review queue says a proposal is in force in its
session meanwhile ("in force in session s1 since turn t5"), and the turn page shows the pinned correction
and the rule it set aside, so a reviewer sees what the agent is acting on while the proposal waits."""

from __future__ import annotations

import re

from django.urls import reverse

from governance.models import Memory
from governance.propagation import embed_memories
from governance.recall import assemble_context
from governance.services.events import event_ingest
from governance.services.memory import MemoryInput, memory_record

CORRECTION = "Actually, change it: export the Q3 deck as PPTX instead of PDF from now on."


def _scenario(project_scope, agent):
    rule = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            text="Export the Q3 deck as PDF.",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    created = event_ingest(
        scope=project_scope,
        session="s1",
        at=None,
        actor=agent,
        turns=[{"role": "user", "content": CORRECTION, "ref": "t5"}],
    )
    embed_memories(list(Memory.objects.values_list("pk", flat=True)))
    proposal = next(m for m in created if m.kind != "episodic")
    return rule, proposal


def test_the_review_queue_says_the_proposal_is_in_force_in_its_session(
    reviewer_client, outsider_client, project_scope, agent
):
    _rule, proposal = _scenario(project_scope, agent)
    response = reviewer_client.get(reverse("dashboard:review"))
    item = next(i for i in response.context["items"] if i.memory.pk == proposal.pk)
    assert item.session_override["state"] == "in_force"
    assert b"In force in session s1 since turn t5" in response.content
    assert b"In force in session" not in outsider_client.get(reverse("dashboard:review")).content


def test_a_binding_rule_shows_as_waiting_for_the_reviewer(reviewer_client, project_scope, agent):
    project_scope.binding_keys = ["export_format"]
    project_scope.save(update_fields=["binding_keys"])
    _rule, proposal = _scenario(project_scope, agent)
    response = reviewer_client.get(reverse("dashboard:review"))
    item = next(i for i in response.context["items"] if i.memory.pk == proposal.pk)
    assert item.session_override["state"] == "binding"
    assert b"export_format is binding in this scope: not in force until you decide" in response.content


def test_the_turn_page_shows_the_override_and_the_rule_it_set_aside(
    reviewer_client, outsider_client, project_scope, agent
):
    rule, proposal = _scenario(project_scope, agent)
    turn_id = assemble_context(
        principal=agent, scope=project_scope, query="export the Q3 deck now", budget_tokens=1500, session="s1"
    )["turn_id"]
    page = reviewer_client.get(reverse("dashboard:turn", args=[turn_id]))
    assert page.status_code == 200
    assert (
        "In force in session s1 since turn t5, awaiting confirmation; sets aside export_format r1"
        in re.sub(r"<[^>]+>", "", page.content.decode())
    )
    assert f"Set aside in session s1 by #{proposal.pk}".encode() in page.content
    assert outsider_client.get(reverse("dashboard:turn", args=[turn_id])).status_code == 404
