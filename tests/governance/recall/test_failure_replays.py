"""Replays of the failures this project exists to prevent, each against the real database and model."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from governance.errors import PinnedOverBudget
from governance.models import Relation
from governance.propagation import embed_memories
from governance.recall import STRATEGIES, assemble_context, recall_memories
from governance.redaction.render import UNCONFIRMED
from governance.services.events import event_ingest
from governance.services.memory import memory_forget, memory_retire, memory_supersede
from governance.services.scope import scope_ensure
from tests.governance.recall.helpers import packet_ids, slot_ids

ALL = list(STRATEGIES)


def _flood(scope, n, session="s1", start=None):
    start = start or timezone.now() - timedelta(hours=2)
    turns = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"Unrelated chatter {i} about the weather in city number {i} and lunch options",
            "ref": f"f{i}",
        }
        for i in range(n)
    ]
    created = event_ingest(scope=scope, session=session, at=start, turns=turns, actor=None)
    embed_memories([m.pk for m in created])
    return created


def test_constraint_stated_early_survives_a_flood_of_unrelated_turns(project_scope, agent, remember):
    constraint = remember(
        project_scope, "The total budget must stay under 5000 EUR", kind="convention", key="budget_cap"
    )
    _flood(project_scope, 120)
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="what's for lunch in city 7?",
        budget_tokens=250,
        session="s1",
    )
    assert slot_ids(result, "constraints") == [constraint.pk]
    assert "under 5000 EUR" in result["text"]
    assert result["budget"]["used"] <= 250
    assert result["packet"]["skipped"], "the flood cannot all fit: what was left out is listed"


@pytest.mark.parametrize("strategy", ["structured_vector", "temporal", "full"])
def test_corrected_requirement_uses_new_value_and_lists_old_in_negative(
    project_scope, agent, curator, remember, strategy
):
    old = remember(project_scope, "Export the slides as PDF", kind="convention", key="export_format")
    new = memory_supersede(
        memory_id=old.pk,
        text="Export the slides as PPTX",
        reason="user: change it to PPTX",
        source_kind="user",
        actor=curator,
    )
    embed_memories([new.pk])
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="which file format do we export?",
        budget_tokens=400,
        strategy=strategy,
    )
    assert slot_ids(result, "constraints") == [new.pk]
    negative = result["packet"]["negative"]
    assert [b["memory_id"] for b in negative] == [old.pk]
    assert negative[0]["replaced_by"]["memory_id"] == new.pk
    for slot in ("constraints", "evidence", "recent", "preferences"):
        assert old.pk not in slot_ids(result, slot)
    assert (
        "NO LONGER IN FORCE: Export the slides as PDF → replaced by: Export the slides as PPTX"
        in result["text"]
    )
    recalled = recall_memories(principal=agent, scope=project_scope, query="export as PDF", strategy=strategy)
    assert old.pk not in [r["memory_id"] for r in recalled]


@pytest.mark.parametrize("strategy", ALL)
def test_similar_memory_from_another_project_or_workspace_never_appears(
    project_scope,
    sibling_scope,
    other_workspace_scope,
    agent,
    remember,
    strategy,
):
    mine = remember(project_scope, "Slides are exported as PDF", kind="episodic")
    decoys = [
        remember(sibling_scope, "Slides are exported as PDF", kind="episodic"),
        remember(other_workspace_scope, "Slides are exported as PDF", kind="episodic"),
        remember(sibling_scope, "Export format is PDF", kind="convention", key="export_format"),
        remember(other_workspace_scope, "Export format is PDF", kind="convention", key="export_format"),
    ]
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="slides exported as PDF",
        budget_tokens=1000,
        strategy=strategy,
    )
    recalled = {
        r["memory_id"]
        for r in recall_memories(
            principal=agent, scope=project_scope, query="slides exported as PDF", strategy=strategy
        )
    }
    ids = packet_ids(result) | recalled
    assert mine.pk in ids
    assert not ids & {d.pk for d in decoys}


def test_guess_stored_as_candidate_is_never_presented_as_confirmed(project_scope, agent, remember):
    guess = remember(
        project_scope,
        "The client prefers PDF exports",
        kind="preference",
        status="candidate",
        source_kind="model_inference",
    )
    for strategy in ALL:
        result = assemble_context(
            principal=agent,
            scope=project_scope,
            query="client export preference",
            budget_tokens=500,
            strategy=strategy,
        )
        assert guess.pk not in slot_ids(result, "constraints") + slot_ids(result, "preferences")
        for block in result["packet"]["evidence"]:
            if block["memory_id"] == guess.pk:
                assert block["status"] == "candidate" and "not confirmed" in block["reason"]
        if guess.pk in slot_ids(result, "evidence"):
            assert UNCONFIRMED.format(status="candidate") in result["text"]


def test_tool_call_and_its_result_stay_together(project_scope, agent):
    start = timezone.now() - timedelta(hours=1)
    call = event_ingest(
        scope=project_scope,
        session="s1",
        at=start,
        actor=None,
        turns=[
            {"role": "tool_call", "content": "fx_rate(EUR, JPY)", "call_id": "c-77", "ref": "c"},
            {
                "role": "tool_result",
                "content": "1 EUR = 162.4 JPY on 2026-01-04",
                "call_id": "c-77",
                "ref": "r",
            },
        ],
    )
    embed_memories([m.pk for m in call])
    _flood(project_scope, 30, start=start + timedelta(minutes=5))
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="what was the yen exchange rate?",
        budget_tokens=600,
        session="s1",
    )
    ids = {m.pk for m in call}
    placed = [
        (slot, b["memory_id"])
        for slot in ("recent", "evidence")
        for b in result["packet"][slot]
        if b["memory_id"] in ids
    ]
    assert {m for _, m in placed} == ids and len({s for s, _ in placed}) == 1
    text = result["text"]
    assert text.index("fx_rate(EUR, JPY)") < text.index("162.4 JPY")
    # With a budget too small for the pair, neither half goes in alone.
    tight = assemble_context(
        principal=agent,
        scope=project_scope,
        query="what was the yen exchange rate?",
        budget_tokens=25,
        session="s1",
        strategy="vector",
    )
    inside = packet_ids(tight, slots=("recent", "evidence")) & ids
    assert inside in (set(), ids)


def test_retired_or_forgotten_memory_never_returns_from_any_strategy(project_scope, agent, owner, remember):
    retired = remember(project_scope, "Deploys happen on Tuesday", kind="episodic")
    soft = remember(project_scope, "Deploys happen on Tuesday evenings", kind="convention", key="deploy_day")
    hard = remember(project_scope, "Deploys happen on Tuesday mornings", kind="episodic")
    keep = remember(project_scope, "Deploy checklist lives in the wiki", kind="episodic")
    memory_retire(memory_id=retired.pk, actor=owner, reason="obsolete")
    memory_forget(memory_id=soft.pk, actor=owner, reason="asked to")
    memory_forget(memory_id=hard.pk, actor=owner, reason="asked to", hard=True)
    gone = {retired.pk, soft.pk, hard.pk}
    for strategy in ALL:
        result = assemble_context(
            principal=agent,
            scope=project_scope,
            query="when do deploys happen on Tuesday?",
            budget_tokens=800,
            strategy=strategy,
        )
        recalled = {
            r["memory_id"]
            for r in recall_memories(
                principal=agent, scope=project_scope, query="deploys Tuesday", strategy=strategy
            )
        }
        assert not (packet_ids(result) | recalled) & gone, strategy
        assert "evenings" not in result["text"] and "mornings" not in result["text"]
        if strategy != "recent":
            assert keep.pk in packet_ids(result), "the filter removes only what is gone"


def test_budget_too_small_for_pinned_blocks_is_an_error(project_scope, agent, remember):
    remember(
        project_scope, "All figures must be reported in EUR with two decimals", kind="convention", key="money"
    )
    with pytest.raises(PinnedOverBudget) as exc:
        assemble_context(
            principal=agent,
            scope=project_scope,
            query="report",
            budget_tokens=10,
            task={"goal": "Write the quarterly report for the board"},
        )
    assert exc.value.extra["budget"] == 10 and exc.value.extra["needed"] > 10
    assert exc.value.as_dict()["error"] == "pinned_over_budget"


def test_preference_scoped_to_one_kind_of_task_does_not_leak(project_scope, agent, remember):
    email = remember(project_scope, "Keep emails under five sentences", kind="preference", task_type="email")
    general = remember(project_scope, "Use British spelling", kind="preference")
    task_scope = scope_ensure(path="acme/slides/review", actor=None)
    scoped = remember(task_scope, "Reviews list blocking issues first", kind="preference")
    slides = assemble_context(
        principal=agent,
        scope=project_scope,
        query="write it",
        budget_tokens=500,
        task={"goal": "draft slides", "type": "slides"},
    )
    assert slot_ids(slides, "preferences") == [general.pk]
    assert not packet_ids(slides) & {email.pk, scoped.pk}
    mail = assemble_context(
        principal=agent,
        scope=project_scope,
        query="write it",
        budget_tokens=500,
        task={"goal": "reply to client", "type": "email"},
    )
    assert set(slot_ids(mail, "preferences")) == {email.pk, general.pk}
    review = assemble_context(principal=agent, scope=task_scope, query="write it", budget_tokens=500)
    assert scoped.pk in slot_ids(review, "preferences")


def test_contradiction_is_flagged_with_the_winner_and_why(project_scope, agent, owner, remember):
    a = remember(project_scope, "The launch date is March 3", kind="semantic")
    b = remember(project_scope, "The launch date is March 10", kind="semantic", status="candidate")
    # Another date for the same subject: conflict detection links the two itself (conflict.opposes).
    assert Relation.objects.filter(kind="contradicts", source=b, target=a).exists()
    result = assemble_context(
        principal=agent, scope=project_scope, query="when is the launch date?", budget_tokens=800
    )
    rel = result["packet"]["relations"]
    assert rel and rel[0]["memory_id"] == a.pk and "confirmed and in force" in rel[0]["reason"]
    flagged = {b_["memory_id"]: b_.get("flags", []) for b_ in result["packet"]["evidence"]}
    assert any("loses to" in f for f in flagged.get(b.pk, []))


def test_as_of_hides_what_happened_later_and_ranks_at_that_time(project_scope, agent, remember):
    past = timezone.now() - timedelta(days=30)
    early = remember(
        project_scope,
        "Kick-off meeting notes: scope agreed",
        kind="episodic",
        occurred_at=past - timedelta(days=1),
    )
    late = remember(project_scope, "Kick-off meeting notes: scope changed", kind="episodic")
    result = assemble_context(
        principal=agent, scope=project_scope, query="kick-off meeting notes", budget_tokens=500, as_of=past
    )
    ids = packet_ids(result)
    assert early.pk in ids and late.pk not in ids


def test_key_set_at_two_levels_uses_the_narrowest_scope_and_lists_the_other_as_skipped(
    workspace_scope,
    project_scope,
    agent,
    remember,
):
    wide = remember(workspace_scope, "Currency is USD", kind="convention", key="currency")
    narrow = remember(project_scope, "Currency is EUR", kind="convention", key="currency")
    result = assemble_context(principal=agent, scope=project_scope, query="currency", budget_tokens=300)
    assert slot_ids(result, "constraints") == [narrow.pk]
    skipped = {b["memory_id"]: b for b in result["packet"]["skipped"]}
    assert "narrower scope" in skipped[wide.pk]["reason"] and skipped[wide.pk]["text"] == "Currency is USD"
