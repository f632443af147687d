"""Promotion requested for chosen episodes (POST /api/v1/promotions): the proposal the periodic scan would
make, in review whoever asks; agents may ask (agents propose, people decide), nothing goes in force."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from governance.models import AuditEvent, Memory, Relation, Status
from governance.selectors.review import review_queue
from governance.services.memory import MemoryInput, memory_record
from governance.services.memory.promotion import PromotionExists, PromotionUnsupported, promotion_scan
from tests.conftest import token_client

SESSIONS = ("s1", "s2", "s3")


def _episode(scope, session, task_type="slides"):
    return memory_record(
        item=MemoryInput(
            scope=scope,
            kind="episodic",
            text=f"User asked for PDF in {session}",
            source_kind="user",
            session=session,
            task_type=task_type,
        ),
        actor=None,
    )


def _candidate(scope, session, task_type="slides"):
    return memory_record(
        item=MemoryInput(
            scope=scope,
            kind="preference",
            text="Exports slides as PDF",
            source_kind="model_inference",
            session=session,
            task_type=task_type,
        ),
        actor=None,
    )


@pytest.fixture
def seen(project_scope, settings):
    settings.PROMOTION_MIN_EPISODES = 3
    episodes = [_episode(project_scope, s) for s in SESSIONS]
    candidates = [_candidate(project_scope, s) for s in SESSIONS]
    return candidates, episodes


def request_promotion(client, candidate, episodes, reason="seen in three sessions"):
    return client.post(
        "/api/v1/promotions",
        {"memory": candidate.pk, "episodes": [e.pk for e in episodes], "reason": reason},
        format="json",
    )


@pytest.mark.parametrize("who", ["agent", "reviewer", "curator", "owner"])
def test_a_requested_promotion_is_a_proposal_in_review_whoever_asks(request, seen, project_scope, who):
    candidates, episodes = seen
    principal = request.getfixturevalue(who)
    response = request_promotion(token_client(principal), candidates[0], episodes)
    assert response.status_code == 201, response.content
    proposal = Memory.objects.get(pk=response.json()["id"])
    assert (proposal.status, proposal.tier, proposal.confirmed_at) == (Status.PROPOSED, "long", None)
    promo = proposal.meta["promotion"]
    assert (promo["requested_by"], promo["reason"]) == (principal.name, "seen in three sessions")
    # The proposal the scan would make: every candidate of the group folded in, the chosen episodes cited.
    # (The same text written in three sessions is one candidate row: its repeats are merged into it.)
    assert sorted(promo["candidates"]) == sorted({c.pk for c in candidates})
    cited = set(
        Relation.objects.filter(source=proposal, kind="derived_from").values_list("target_id", flat=True)
    )
    assert cited == {e.pk for e in episodes}
    assert AuditEvent.objects.filter(
        action="memory.promotion_request", target_id=str(proposal.pk), actor=principal
    ).exists()
    # The scan files it under the same group and does not propose it again.
    assert promotion_scan(scope=project_scope) == []


def test_the_request_shows_in_the_review_queue_as_a_promotion(seen, agent, reviewer):
    candidates, episodes = seen
    proposal_id = request_promotion(token_client(agent), candidates[1], episodes).json()["id"]
    [item] = [i for i in review_queue(principal=reviewer) if i.memory.pk == proposal_id]
    assert item.kind == "promotion" and {e.pk for e in item.supporting} == {e.pk for e in episodes}


def test_a_second_request_for_the_same_group_is_refused(seen, agent):
    candidates, episodes = seen
    client = token_client(agent)
    assert request_promotion(client, candidates[0], episodes).status_code == 201
    again = request_promotion(client, candidates[2], episodes)
    assert (again.status_code, again.json()["error"], again.json()["message"]) == (
        409,
        "promotion_exists",
        PromotionExists.message,
    )
    assert Memory.objects.filter(status=Status.PROPOSED).count() == 1


def test_too_few_sessions_are_refused_and_change_nothing(seen, agent):
    candidates, episodes = seen
    response = request_promotion(token_client(agent), candidates[0], episodes[:2])
    assert (response.status_code, response.json()["error"], response.json()["message"]) == (
        409,
        "promotion_unsupported",
        PromotionUnsupported.message,
    )
    assert not Memory.objects.filter(status=Status.PROPOSED).exists()


def test_only_a_candidate_preference_or_convention_can_be_requested(seen, agent):
    _, episodes = seen
    response = request_promotion(token_client(agent), episodes[0], episodes)
    assert response.status_code == 400 and response.json()["error"] == "invalid_input"


def test_another_workspace_or_no_token_cannot_request(seen, outsider):
    candidates, episodes = seen
    assert request_promotion(token_client(outsider), candidates[0], episodes).status_code == 404
    assert request_promotion(APIClient(), candidates[0], episodes).status_code == 401
    assert not Memory.objects.filter(status=Status.PROPOSED).exists()
