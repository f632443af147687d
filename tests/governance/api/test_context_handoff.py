"""The hand-off slot of POST /context (issue 25): `include: ["handoff"]` returns the task scope's six
sections, each line citing its memory ids and saying what it is (a fact a tool observed, a guess, a
proposal, an authorisation, a request, a call still pending), counted in the token budget and listed in
`skipped` when it does not fit; tried with each role's token, another workspace's and none."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from governance.models import Role, Turn, TurnMemory
from governance.services.events import event_ingest
from governance.services.memory import MemoryInput, memory_record, memory_supersede
from governance.services.principal import grant_add, user_ensure
from tests.conftest import token_client

pytestmark = pytest.mark.django_db


def _remember(scope, text, **kw):
    kw.setdefault("kind", "stage_fact")
    kw.setdefault("status", "active")
    kw.setdefault("source_kind", "user")
    return memory_record(item=MemoryInput(scope=scope, text=text, **kw), actor=None)


@pytest.fixture
def task_history(project_scope, sibling_scope, curator):
    goal = _remember(project_scope, "Fix the export fonts of the client deck", key="goal")
    rule = _remember(project_scope, "Export the deck as PDF", kind="convention", key="export_format")
    pptx = memory_supersede(
        memory_id=rule.pk,
        text="Export the deck as PPTX",
        reason="user corrected it",
        source_kind="user",
        actor=curator,
    )
    never = _remember(
        project_scope, "Never overwrite the original file", kind="convention", key="no_overwrite"
    )
    nxt = _remember(project_scope, "Check the font mapping, then review page 7", key="next_step")
    pre = _remember(project_scope, "Only the confirmed v3 is edited", key="precondition.version")
    guess = _remember(
        project_scope,
        "Page 7 probably falls back to a default font",
        status="candidate",
        source_kind="model_inference",
    )
    proposal = _remember(project_scope, "Publish the deck on Friday", kind="convention", status="proposed")
    _remember(sibling_scope, "Payments use idempotency keys", kind="convention", key="payments_rule")
    at = timezone.now() - timedelta(hours=3)
    turns = event_ingest(
        scope=project_scope,
        session="s1",
        at=at,
        actor=None,
        turns=[
            {"role": "user", "content": "Please check why the fonts look wrong.", "ref": "u1"},
            {"role": "tool_call", "content": "inspect_fonts(page=7)", "call_id": "call-17", "ref": "c17"},
            {
                "role": "tool_result",
                "content": "Page 7 uses fallback font Arial",
                "call_id": "call-17",
                "ref": "r17",
            },
            {
                "role": "tool_call",
                "content": "export_preview(format='pptx')",
                "call_id": "call-18",
                "ref": "c18",
            },
            {
                "role": "tool_result",
                "content": "export_preview failed: timed out",
                "call_id": "call-18",
                "ref": "r18",
            },
            {"role": "tool_call", "content": "render_page(page=7)", "call_id": "call-19", "ref": "c19"},
        ],
    )
    by_ref = {m.source_ref: m for m in turns if m.kind == "episodic"}
    return {
        "goal": goal,
        "old_rule": rule,
        "rule": pptx,
        "never": never,
        "next": nxt,
        "pre": pre,
        "guess": guess,
        "proposal": proposal,
        **by_ref,
    }


def _ask(client, budget=4000, **extra):
    body = {
        "scope": "acme/slides",
        "query": "can we export now?",
        "budget_tokens": budget,
        "include": ["handoff"],
    }
    return client.post("/api/v1/context", {**body, **extra}, format="json")


def test_the_hand_off_has_six_sections_each_line_cited_and_kept_apart_by_what_it_is(task_history, agent):
    response = _ask(token_client(agent))
    assert response.status_code == 200, response.content
    lines = response.json()["packet"]["handoff"]
    by_id = {}
    for line in lines:
        for i in line["memory_ids"]:
            by_id.setdefault(i, []).append(line)
    h = task_history
    assert [ln["section"] for ln in lines if ln["memory_ids"] == [h["goal"].pk]] == ["goal"]
    assert "acme/slides" in next(ln for ln in lines if ln["section"] == "goal")["text"]
    rule_line = next(
        ln for ln in lines if ln["section"] == "constraints" and ln["memory_ids"] == [h["rule"].pk]
    )
    assert "export_format r2" in rule_line["text"] and rule_line["nature"] == "authorisation"
    # Done: the tool's observed result, with its call; never the user's request nor the assistant's guess.
    done = [ln for ln in lines if ln["section"] == "done"]
    assert [ln["memory_ids"] for ln in done] == [[h["r17"].pk]] and done[0]["nature"] == "fact"
    assert "call-17" in done[0]["text"]
    assert h["u1"].pk not in by_id and h["guess"].pk not in {i for ln in done for i in ln["memory_ids"]}
    void = next(ln for ln in lines if ln["section"] == "superseded")
    assert void["memory_id"] == h["old_rule"].pk and void["replaced_by"]["memory_id"] == h["rule"].pk
    opened = {ln["memory_ids"][0]: ln for ln in lines if ln["section"] == "open_questions"}
    assert opened[h["c19"].pk]["nature"] == "pending"  # call-19 has no result yet
    assert h["c17"].pk not in opened and h["c18"].pk not in opened  # answered calls are not pending
    assert opened[h["r18"].pk]["nature"] == "fact" and opened[h["r18"].pk]["text"].startswith("Failed:")
    assert opened[h["guess"].pk]["nature"] == "guess"
    assert opened[h["proposal"].pk]["nature"] == "proposal"
    nxt = [ln for ln in lines if ln["section"] == "next_step"]
    assert nxt[0]["memory_ids"] == [h["next"].pk]
    assert any(ln["memory_ids"] == [h["pre"].pk] and ln["text"].startswith("Precondition:") for ln in nxt)
    before = next(ln for ln in nxt if ln["text"].startswith("Before it:"))
    assert set(before["memory_ids"]) == {h["c19"].pk, h["proposal"].pk} and before["memory_id"] is None
    text = response.json()["text"]
    assert "## Hand-off" in text and f"[m{h['rule'].pk}]" in text
    assert "idempotency" not in text  # a sibling scope's memory never comes in
    turn = Turn.objects.get(pk=response.json()["turn_id"])
    assert turn.request["include"] == ["handoff"]
    assert TurnMemory.objects.filter(turn=turn, slot="handoff", memory_id=h["r17"].pk).exists()


def test_the_hand_off_counts_in_the_budget_and_what_does_not_fit_is_listed(task_history, agent):
    client = token_client(agent)
    without = client.post(
        "/api/v1/context",
        {"scope": "acme/slides", "query": "can we export now?", "budget_tokens": 4000},
        format="json",
    ).json()
    full = _ask(client).json()
    assert "handoff" not in without["packet"]
    assert full["budget"]["used"] > without["budget"]["used"]
    tight = _ask(client, budget=160).json()
    assert tight["budget"]["used"] <= 160
    skipped = [b for b in tight["packet"]["skipped"] if b["slot"] == "handoff"]
    assert skipped and all(b["reason"] == "did not fit the token budget" for b in skipped)
    assert len(tight["packet"]["handoff"]) + len(skipped) == len(full["packet"]["handoff"])


def test_the_context_endpoint_with_the_hand_off_answers_each_role_another_workspace_and_none(
    task_history, owner, curator, reviewer, agent, outsider, project_scope
):
    viewer = user_ensure(username="vera", password="pw-vera", actor=None)
    grant_add(principal=viewer, scope=project_scope, role=Role.VIEWER, actor=None)
    for principal in (owner, curator, reviewer, agent):
        response = _ask(token_client(principal))
        assert response.status_code == 200, (principal, response.content)
        assert response.json()["packet"]["handoff"]
    assert _ask(token_client(viewer)).status_code == 403  # a viewer does not ask for context
    foreign = _ask(token_client(outsider))
    unknown = _ask(token_client(outsider), scope="acme/nowhere")
    assert foreign.status_code == unknown.status_code == 404 and foreign.json() == unknown.json()
    assert _ask(APIClient()).status_code == 401
    bad = _ask(token_client(agent), include=["everything"])
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_input"
    assert Turn.objects.filter(request__include=["everything"]).count() == 0


def test_a_hard_forget_redacts_every_hand_off_line_of_a_stored_turn(task_history, agent, owner):
    import json

    from governance.propagation.turns import redact_turns, turns_still_holding_purged
    from governance.services.memory import memory_forget

    response = _ask(token_client(agent))
    rule = task_history["rule"]  # a constraint line, and the replacement of the corrected requirement
    assert json.dumps(response.json()["packet"]["handoff"]).count(rule.text) == 2
    memory_forget(memory_id=rule.pk, actor=owner, reason="user asked", hard=True)
    redact_turns([rule.pk])
    turn = Turn.objects.get(pk=response.json()["turn_id"])
    assert rule.text not in json.dumps(turn.packet) and rule.text not in turn.text
    assert task_history["old_rule"].text in turn.text  # the corrected requirement's own text stays
    assert turns_still_holding_purged() == []
