"""Cold memories (activation below MEMORY_COLD_THRESHOLD) leave the evidence slot unless the match is
strong; the scratch (working memory) of an ended session never comes back as evidence."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from governance.recall import assemble_context
from tests.governance.recall.helpers import slot_ids


def test_cold_working_memory_of_an_ended_session_is_skipped_not_evidence(project_scope, agent, remember):
    three_days_ago = timezone.now() - timedelta(days=3)
    trace = remember(project_scope, "For this session only, skip the slow integration tests", kind="working",
                     session="old", occurred_at=three_days_ago)
    rule = remember(project_scope, "Integration tests run before every release", kind="semantic")
    result = assemble_context(principal=agent, scope=project_scope, query="should we skip the integration tests?",
                              budget_tokens=600, session="new")
    assert rule.pk in slot_ids(result, "evidence")
    assert trace.pk not in slot_ids(result, "evidence")
    skipped = [b for b in result["packet"]["skipped"] if b["memory_id"] == trace.pk]
    assert skipped and "cold" in skipped[0]["reason"] and "working memory" in skipped[0]["reason"]
    assert "skip the slow integration tests" not in result["text"]


def test_without_the_activation_stage_the_cold_trace_is_still_presented(project_scope, agent, remember):
    trace = remember(project_scope, "For this session only, skip the slow integration tests", kind="working",
                     session="old", occurred_at=timezone.now() - timedelta(days=3))
    result = assemble_context(principal=agent, scope=project_scope, query="should we skip the integration tests?",
                              budget_tokens=600, session="new", strategy="vector")
    assert trace.pk in slot_ids(result, "evidence")


def test_a_cold_memory_still_comes_back_for_a_strong_match(project_scope, agent, remember):
    old_fact = remember(project_scope, "The staging database password rotates on the first Monday of the month",
                        kind="semantic", occurred_at=timezone.now() - timedelta(days=400))
    result = assemble_context(principal=agent, scope=project_scope,
                              query="when does the staging database password rotate?", budget_tokens=600)
    evidence = [b for b in result["packet"]["evidence"] if b["memory_id"] == old_fact.pk]
    assert evidence, "a cold memory that is the best match is still found"
    assert "cold, kept for a strong match" in evidence[0].get("flags", [])
