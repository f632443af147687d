import pytest

from governance.errors import FourEyesRequired, PermissionDenied
from governance.models import AuditEvent, Memory, Relation, Status
from governance.selectors.review import review_queue
from governance.services.memory import (
    MemoryInput,
    memory_confirm,
    memory_forget,
    memory_record,
    memory_supersede,
)
from governance.services.memory.promotion import PromotionUnsupported, promotion_propose, promotion_scan


def long_proposal(scope, text="Release notes are written in English", **kw):
    return memory_record(
        item=MemoryInput(
            scope=scope,
            kind="convention",
            text=text,
            source_kind="assistant",
            status="proposed",
            tier="long",
            **kw,
        ),
        actor=None,
    )


def test_four_eyes_needs_two_different_reviewers_for_a_long_term_commitment(
    four_eyes_scope, reviewer, second_reviewer
):
    m = long_proposal(four_eyes_scope)
    first = memory_confirm(memory_id=m.pk, actor=reviewer, reason="looks right")
    assert first.status == Status.PROPOSED
    with pytest.raises(FourEyesRequired):
        memory_confirm(memory_id=m.pk, actor=reviewer, reason="again")
    second = memory_confirm(memory_id=m.pk, actor=second_reviewer, reason="agreed")
    assert second.status == Status.ACTIVE
    actions = list(AuditEvent.objects.filter(target_id=str(m.pk)).values_list("action", flat=True))
    assert actions.count("memory.approve") == 1 and "memory.confirm" in actions


def test_four_eyes_rule_of_a_parent_scope_covers_its_sub_scopes(workspace_scope, reviewer, second_reviewer):
    workspace_scope.require_two_reviewers = True
    workspace_scope.save(update_fields=["require_two_reviewers"])
    from governance.services.scope import scope_ensure

    task = scope_ensure(path="acme/slides/export", actor=None)
    m = long_proposal(task)
    assert memory_confirm(memory_id=m.pk, actor=reviewer).status == Status.PROPOSED
    assert memory_confirm(memory_id=m.pk, actor=second_reviewer).status == Status.ACTIVE


def test_a_reviewer_cannot_skip_four_eyes_by_writing_a_long_term_memory_active(four_eyes_scope, reviewer):
    with pytest.raises(FourEyesRequired):
        memory_record(
            item=MemoryInput(
                scope=four_eyes_scope,
                kind="convention",
                text="Always PDF",
                source_kind="reviewer",
                status="active",
                tier="long",
            ),
            actor=reviewer,
        )
    assert not Memory.objects.filter(text="Always PDF").exists()


def test_mid_term_memories_need_one_reviewer_even_in_a_four_eyes_scope(four_eyes_scope, reviewer):
    m = memory_record(
        item=MemoryInput(
            scope=four_eyes_scope,
            kind="preference",
            text="Prefers dark slides",
            source_kind="assistant",
            status="proposed",
            tier="mid",
        ),
        actor=None,
    )
    assert memory_confirm(memory_id=m.pk, actor=reviewer).status == Status.ACTIVE


def test_review_queue_shows_approvals_so_far_and_needed(four_eyes_scope, reviewer, second_reviewer, outsider):
    m = long_proposal(four_eyes_scope)
    memory_confirm(memory_id=m.pk, actor=reviewer)
    [item] = review_queue(principal=second_reviewer)
    assert (item.kind, item.memory.pk, item.approvals, item.approvals_needed, item.can_confirm) == (
        "proposal",
        m.pk,
        ["rami"],
        2,
        True,
    )
    assert review_queue(principal=outsider) == []


def episodes(scope, sessions, task_type="slides"):
    return [
        memory_record(
            item=MemoryInput(
                scope=scope,
                kind="episodic",
                text=f"User asked for PDF in {s}",
                source_kind="user",
                session=s,
                task_type=task_type,
            ),
            actor=None,
        )
        for s in sessions
    ]


def candidate(scope, session, text="Exports slides as PDF", task_type="slides"):
    return memory_record(
        item=MemoryInput(
            scope=scope,
            kind="preference",
            text=text,
            source_kind="model_inference",
            session=session,
            task_type=task_type,
        ),
        actor=None,
    )


def test_candidate_seen_in_enough_sessions_becomes_a_promotion_citing_its_episodes(project_scope, reviewer):
    eps = episodes(project_scope, ["s1", "s2", "s3"])
    for s in ("s1", "s2", "s3"):
        candidate(project_scope, s)
    [proposal] = promotion_scan(scope=project_scope, needed=3)
    assert (proposal.status, proposal.tier) == (Status.PROPOSED, "long")
    cited = set(
        Relation.objects.filter(source=proposal, kind="derived_from").values_list("target_id", flat=True)
    )
    assert cited == {e.pk for e in eps}
    assert promotion_scan(scope=project_scope, needed=3) == []  # one proposal per group, not one per scan
    [item] = [i for i in review_queue(principal=reviewer) if i.memory.pk == proposal.pk]
    assert item.kind == "promotion" and {e.pk for e in item.supporting} == cited
    assert memory_confirm(memory_id=proposal.pk, actor=reviewer).status == Status.ACTIVE


def test_candidates_from_too_few_sessions_or_other_task_types_are_not_promoted(project_scope):
    episodes(project_scope, ["s1", "s2"])
    episodes(project_scope, ["s3"], task_type="email")
    candidate(project_scope, "s1")
    candidate(project_scope, "s2")
    candidate(project_scope, "s3", task_type="email")
    assert promotion_scan(scope=project_scope, needed=3) == []


def test_promotion_is_refused_without_supporting_episodes(project_scope, agent, reviewer, settings):
    settings.PROMOTION_MIN_EPISODES = 2
    c = candidate(project_scope, "s1")
    [one] = episodes(project_scope, ["s1"])
    with pytest.raises(PromotionUnsupported):
        promotion_propose(memory_id=c.pk, episode_ids=[one.pk], actor=agent)
    two = episodes(project_scope, ["s2"])[0]
    proposal = promotion_propose(memory_id=c.pk, episode_ids=[one.pk, two.pk], actor=agent)
    # An episode forgotten before the review takes its support away: the promotion can no longer pass.
    memory_forget(memory_id=two.pk, actor=None, reason="user asked", hard=True)
    with pytest.raises(PromotionUnsupported):
        memory_confirm(memory_id=proposal.pk, actor=reviewer)
    assert Memory.objects.get(pk=proposal.pk).status == Status.PROPOSED


def test_a_keyed_memory_contradicting_the_active_one_is_queued_with_both_shown(
    project_scope, agent, reviewer
):
    active = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            text="Export as PDF",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    new = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            text="Export as PPTX",
            source_kind="model_inference",
        ),
        actor=agent,
    )
    assert new.status == Status.PROPOSED
    assert Relation.objects.filter(source=new, target=active, kind="contradicts").exists()
    [item] = review_queue(principal=reviewer)
    assert (item.kind, item.memory.pk, item.conflicting.pk) == ("conflict", new.pk, active.pk)
    active.refresh_from_db()
    assert active.status == Status.ACTIVE  # not silently applied


def test_an_unkeyed_statement_of_the_opposite_polarity_is_detected_as_a_conflict(project_scope, agent):
    active = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            text="Always deploy on Fridays",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    new = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            text="Never deploy on Fridays",
            source_kind="model_inference",
        ),
        actor=agent,
    )
    unrelated = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="convention", text="Slides use 16:9", source_kind="model_inference"
        ),
        actor=agent,
    )
    assert new.status == Status.PROPOSED and unrelated.status == Status.CANDIDATE
    assert Relation.objects.filter(source=new, target=active, kind="contradicts").exists()


def test_supersede_of_a_long_term_commitment_in_a_four_eyes_scope_goes_through_review(
    four_eyes_scope, curator
):
    m = memory_record(
        item=MemoryInput(
            scope=four_eyes_scope,
            kind="convention",
            text="PDF",
            tier="long",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    with pytest.raises(FourEyesRequired):
        memory_supersede(memory_id=m.pk, text="PPTX", reason="changed", source_kind="user", actor=curator)


def test_agent_cannot_confirm(project_scope, agent):
    m = long_proposal(project_scope)
    with pytest.raises(PermissionDenied):
        memory_confirm(memory_id=m.pk, actor=agent)


def test_beat_tasks_scan_promotions_and_apply_retention(project_scope, workspace_scope, owner, settings):
    from datetime import timedelta

    from django.utils import timezone

    from governance.services.retention import retention_policy_set
    from governance.tasks import apply_retention, scan_promotions

    assert {"reconcile", "retention", "promotions", "summaries"} <= set(settings.CELERY_BEAT_SCHEDULE)
    settings.PROMOTION_MIN_EPISODES = 2
    episodes(project_scope, ["s1", "s2"])
    candidate(project_scope, "s1")
    candidate(project_scope, "s2")
    assert scan_promotions() == 1
    assert scan_promotions() == 0
    stale = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            text="Use the 2019 template",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    retention_policy_set(scope=workspace_scope, actor=owner, retire_unused_days=1)
    Memory.objects.filter(pk=stale.pk).update(created_at=timezone.now() - timedelta(days=3))
    result = apply_retention()
    assert result["policies"] == 1 and result["retired"] >= 1
    assert Memory.objects.get(pk=stale.pk).status == Status.RETIRED
