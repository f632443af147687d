"""Cold memories (activation below MEMORY_COLD_THRESHOLD) are out of the hot set: a strong match brings
one back among the best, a weaker one only fills the k asked for, after every hot memory; the scratch
(working memory) of an ended session never comes back as evidence."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from governance.models import Memory
from governance.propagation import embed_memories
from governance.recall import assemble_context, recall_memories
from governance.services.events import event_ingest
from tests.governance.recall.helpers import slot_ids


def test_cold_working_memory_of_an_ended_session_is_skipped_not_evidence(project_scope, agent, remember):
    three_days_ago = timezone.now() - timedelta(days=3)
    trace = remember(
        project_scope,
        "For this session only, skip the slow integration tests",
        kind="working",
        session="old",
        occurred_at=three_days_ago,
    )
    rule = remember(project_scope, "Integration tests run before every release", kind="semantic")
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="should we skip the integration tests?",
        budget_tokens=600,
        session="new",
    )
    assert rule.pk in slot_ids(result, "evidence")
    assert trace.pk not in slot_ids(result, "evidence")
    skipped = [b for b in result["packet"]["skipped"] if b["memory_id"] == trace.pk]
    assert skipped and "cold" in skipped[0]["reason"] and "working memory" in skipped[0]["reason"]
    assert "skip the slow integration tests" not in result["text"]


def test_without_the_activation_stage_the_cold_trace_is_still_presented(project_scope, agent, remember):
    trace = remember(
        project_scope,
        "For this session only, skip the slow integration tests",
        kind="working",
        session="old",
        occurred_at=timezone.now() - timedelta(days=3),
    )
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="should we skip the integration tests?",
        budget_tokens=600,
        session="new",
        strategy="vector",
    )
    assert trace.pk in slot_ids(result, "evidence")


def test_a_cold_memory_still_comes_back_for_a_strong_match(project_scope, agent, remember):
    old_fact = remember(
        project_scope,
        "The staging database password rotates on the first Monday of the month",
        kind="semantic",
        occurred_at=timezone.now() - timedelta(days=400),
    )
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="when does the staging database password rotate?",
        budget_tokens=600,
    )
    evidence = [b for b in result["packet"]["evidence"] if b["memory_id"] == old_fact.pk]
    assert evidence, "a cold memory that is the best match is still found"
    assert "cold, kept for a strong match" in evidence[0].get("flags", [])


TOPICS = [
    "pottery class",
    "camping trip",
    "adoption agency",
    "guitar lessons",
    "charity run",
    "book club",
    "new puppy",
    "art show",
    "job interview",
    "family dinner",
]


def _old_history(scope, days_ago=120):
    """Forty turns of two people, four months old: every one of them is cold by now."""
    turns = []
    for i in range(40):
        speaker = "Caroline" if i % 2 == 0 else "Melanie"
        topic = TOPICS[i % len(TOPICS)]
        turns.append(
            {
                "role": "user",
                "speaker": speaker,
                "ref": f"D1:{i}",
                "content": f"Talking about the {topic} again, it has been on my mind ({i}).",
            }
        )
    created = event_ingest(
        scope=scope, session="s1", at=timezone.now() - timedelta(days=days_ago), turns=turns, actor=None
    )
    embed_memories([m.pk for m in created])
    return created


def test_an_old_imported_history_answers_recall_with_the_k_asked_for(project_scope, agent):
    _old_history(project_scope)
    results = recall_memories(
        principal=agent, scope=project_scope, query="What did Caroline say about the art show?", k=10
    )
    assert len(results) == 10
    assert all(r["scores"]["activation"] < settings.MEMORY_COLD_THRESHOLD for r in results)
    top = Memory.objects.get(pk=results[0]["memory_id"])
    assert "art show" in top.text


def test_a_context_packet_over_an_old_history_is_not_starved_by_the_cold_gate(project_scope, agent):
    _old_history(project_scope)
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="What did Melanie say about the new puppy?",
        budget_tokens=3000,
        session="new",
    )
    evidence = result["packet"]["evidence"]
    assert len(evidence) >= 8
    assert "new puppy" in evidence[0]["text"] or any("new puppy" in b["text"] for b in evidence[:3])


def test_a_weak_cold_match_comes_after_a_hot_one(project_scope, agent, remember):
    old = remember(
        project_scope,
        "The team lunch is on Friday at the noodle bar",
        kind="episodic",
        occurred_at=timezone.now() - timedelta(days=200),
    )
    fresh = remember(project_scope, "Quarterly planning starts next week in the big room", kind="episodic")
    results = recall_memories(
        principal=agent, scope=project_scope, query="when does quarterly planning start?", k=5
    )
    ids = [r["memory_id"] for r in results]
    assert ids.index(fresh.pk) < ids.index(old.pk)
    assert len(ids) == 2
