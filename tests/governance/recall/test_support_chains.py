"""What a person said supports a fact in force comes into the packet with it (issue 13: relations must
earn their place in `full`), even when it shares no words with the question; a link an agent made, or a
supporter the caller may not read, never carries anything in."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from governance.models import RelationKind
from governance.propagation import embed_memories
from governance.recall import assemble_context
from governance.services.relation import relation_add
from tests.governance.recall.helpers import packet_ids

pytestmark = pytest.mark.django_db

QUERY = "When are we allowed to deploy the release to production?"
REVIEW = "Post-mortem PM-311: the client escalated after a hand-over went wrong; the sponsor signed off on the practice."


@pytest.fixture
def deploy_rule(project_scope, remember):
    rule = remember(
        project_scope,
        "Deploy the release to production only on Tuesday evening.",
        kind="convention",
        key="deploy_window",
        tier="long",
    )
    # Closer matches than the review for every search path, more than a path brings back.
    notes = [
        remember(
            project_scope,
            f"Deploy note {i}: the release of service {i} went to staging without trouble.",
            kind="episodic",
            occurred_at=timezone.now() - timedelta(hours=i + 1),
            embed=False,
        )
        for i in range(40)
    ]
    embed_memories([m.pk for m in notes])  # one batch
    return rule


def _block(result: dict, memory_id: int) -> dict | None:
    return next(
        (
            b
            for slot, blocks in result["packet"].items()
            if slot not in ("negative", "skipped")
            for b in blocks
            if b.get("memory_id") == memory_id
        ),
        None,
    )


def test_a_review_a_curator_linked_as_support_comes_with_the_rule_and_says_so(
    project_scope, agent, curator, deploy_rule, remember
):
    review = remember(project_scope, REVIEW, kind="external", source_kind="external_document")
    relation_add(
        source_id=review.pk,
        target_id=deploy_rule.pk,
        kind=RelationKind.SUPPORTS,
        reason="the review behind the rule",
        actor=curator,
    )

    full = assemble_context(
        principal=agent, scope=project_scope, query=QUERY, budget_tokens=1500, strategy="full"
    )
    block = _block(full, review.pk)
    assert block is not None, "the supporting review is missing from the packet"
    assert block["supports"] == deploy_rule.pk
    assert f"(supports memory {deploy_rule.pk})" in full["text"]

    # Without the relations stage nothing follows the link, and search alone does not find the review.
    temporal = assemble_context(
        principal=agent, scope=project_scope, query=QUERY, budget_tokens=1500, strategy="temporal"
    )
    assert review.pk not in packet_ids(temporal, slots=("evidence", "external"))


def test_a_support_link_an_agent_made_does_not_carry_its_proposal_into_the_packet(
    project_scope, agent, deploy_rule, remember
):
    pushed = remember(
        project_scope,
        "The catering order for the summer party is two hundred sandwiches.",
        kind="semantic",
        status="proposed",
        source_kind="model_inference",
    )
    relation_add(
        source_id=pushed.pk,
        target_id=deploy_rule.pk,
        kind=RelationKind.SUPPORTS,
        reason="see rule",
        actor=agent,
    )

    result = assemble_context(principal=agent, scope=project_scope, query=QUERY, budget_tokens=1500)
    assert _block(result, pushed.pk) is None


def test_a_supporter_outside_the_callers_scopes_never_comes_in(
    project_scope, sibling_scope, agent, owner, deploy_rule, remember
):
    hidden = remember(sibling_scope, REVIEW, kind="external", source_kind="external_document")
    relation_add(
        source_id=hidden.pk,
        target_id=deploy_rule.pk,
        kind=RelationKind.SUPPORTS,
        reason="from the sibling project",
        actor=owner,
    )

    result = assemble_context(principal=agent, scope=project_scope, query=QUERY, budget_tokens=1500)
    assert hidden.pk not in packet_ids(result)
    assert REVIEW not in result["text"]
