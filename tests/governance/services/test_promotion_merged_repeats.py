"""Promotion of a candidate whose near-duplicate repeats were merged into it (issue 25): a kept candidate
that names no `episode_ids` keeps its own session's episodes as support, beside the ones its repeats
name. Before, the repeats' named episodes replaced its own session's, so a candidate seen in three
sessions counted two and was never promoted."""

from __future__ import annotations

import pytest

from governance.models import NEAR_DUPLICATES, Memory, Relation
from governance.services.memory import MemoryInput, memory_record
from governance.services.memory.promotion import promotion_scan

pytestmark = pytest.mark.django_db

TEXT = "Exports slides as PDF"


def _episode(scope, session):
    return memory_record(
        item=MemoryInput(
            scope=scope,
            kind="episodic",
            text=f"User asked for PDF in {session}",
            source_kind="user",
            session=session,
            task_type="slides",
        ),
        actor=None,
    )


def _candidate(scope, session, meta=None):
    return memory_record(
        item=MemoryInput(
            scope=scope,
            kind="preference",
            text=TEXT,
            source_kind="model_inference",
            session=session,
            task_type="slides",
            meta=meta or {},
        ),
        actor=None,
    )


def test_a_kept_candidate_without_episode_ids_keeps_its_own_sessions_support(project_scope):
    own, second, third = (_episode(project_scope, s) for s in ("s1", "s2", "s3"))
    kept = _candidate(project_scope, "s1")  # no episode_ids: its session's latest episodes support it
    _candidate(project_scope, "s2", {"episode_ids": [second.pk]})
    _candidate(project_scope, "s3", {"episode_ids": [third.pk]})
    kept.refresh_from_db()
    assert Memory.objects.filter(text=TEXT).count() == 1  # the repeats were merged into it
    assert [r["session"] for r in kept.meta[NEAR_DUPLICATES]] == ["s2", "s3"]

    [proposal] = promotion_scan(scope=project_scope, needed=3)
    cited = set(
        Relation.objects.filter(source=proposal, kind="derived_from").values_list("target_id", flat=True)
    )
    assert cited == {own.pk, second.pk, third.pk}
