"""Every item a packet leaves out names the stage that left it out, so the dashboard can say "dropped
at rank: cold and not among the best matches" or "dropped at pack: did not fit the token budget"."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from governance.recall import assemble_context


def test_skipped_items_name_the_stage_that_dropped_them(workspace_scope, project_scope, agent, remember):
    wide = remember(workspace_scope, "Currency is USD", kind="convention", key="currency")
    remember(project_scope, "Currency is EUR", kind="convention", key="currency")
    trace = remember(
        project_scope,
        "For this session only, use currency GBP",
        kind="working",
        session="old",
        occurred_at=timezone.now() - timedelta(days=3),
    )
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="which currency?",
        budget_tokens=300,
        session="new",
        store=False,
    )
    skipped = {b["memory_id"]: b for b in result["packet"]["skipped"]}
    # keyed or rank may drop the wider key first, depending on which list found it: either is named.
    assert skipped[wide.pk]["stage"] in {"keyed", "rank"}
    assert skipped[trace.pk]["stage"] == "rank"


def test_items_left_out_for_the_budget_name_the_pack_stage(project_scope, agent, remember):
    for i in range(12):
        remember(
            project_scope,
            f"Fact {i}: the quarterly report covers region {i} and its sales figures",
            kind="semantic",
        )
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="quarterly report sales figures",
        budget_tokens=60,
        store=False,
    )
    budget = [b for b in result["packet"]["skipped"] if b["reason"] == "did not fit the token budget"]
    assert budget and all(b["stage"] == "pack" for b in budget)
