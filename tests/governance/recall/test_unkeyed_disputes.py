"""Contradictions without a key (issue 25): "We use MySQL." and later "The team has moved to PostgreSQL."
are proposed as a dispute after embedding (the embedding delivery's own handler, the real model), shown in
the packet as in dispute while no person has decided, and settled only by a person: confirmed (the one
that holds supersedes the other, which the packet then lists as no longer in force) or dismissed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from governance.models import (
    AuditEvent,
    Dispute,
    DisputeState,
    Memory,
    OutboxDelivery,
    Relation,
    Role,
    Status,
)
from governance.propagation import run_delivery
from governance.recall import assemble_context
from governance.services.events import event_ingest
from governance.services.principal import grant_add, user_ensure
from tests.conftest import token_client

pytestmark = pytest.mark.django_db


def _say(scope, text, days_ago, *, ref, speaker=""):
    turn = {"role": "user", "content": text, "ref": ref}
    if speaker:
        turn["speaker"] = speaker
    created = event_ingest(
        scope=scope,
        session=f"s-{ref}",
        at=timezone.now() - timedelta(days=days_ago),
        turns=[turn],
        actor=None,
    )
    return next(m for m in created if m.kind == "episodic")


def _embed_deliveries():
    """Run every pending embedding delivery through its handler, as the `embedding` queue's worker does."""
    for delivery in OutboxDelivery.objects.filter(store="embedding").exclude(state=OutboxDelivery.State.DONE):
        run_delivery(delivery)


def _where(result, memory_id):
    return {
        slot: b
        for slot, blocks in result["packet"].items()
        for b in blocks
        if b.get("memory_id") == memory_id
    }


@pytest.fixture
def pair(project_scope):
    old = _say(project_scope, "We use MySQL for the main database.", 20, ref="t1")
    new = _say(project_scope, "The team has moved to PostgreSQL for the main database.", 2, ref="t2")
    _say(project_scope, "The main database backups run every night at two.", 10, ref="t3")
    _say(project_scope, "We have moved the stand-up to 10 am.", 5, ref="t4")
    _embed_deliveries()
    return old, new


def test_a_changed_value_is_proposed_as_a_dispute_after_embedding_and_nothing_changes_status(pair):
    old, new = pair
    dispute = Dispute.objects.get()
    assert (dispute.newer_id, dispute.older_id, dispute.state) == (new.pk, old.pk, DisputeState.PROPOSED)
    assert "moved to" in dispute.cues
    assert {m.status for m in Memory.objects.filter(pk__in=[old.pk, new.pk])} == {Status.ACTIVE}
    assert not Relation.objects.filter(source=new, target=old).exists()  # no link until a person decides
    assert AuditEvent.objects.filter(action="memory.dispute_proposed", target_id=str(new.pk)).count() == 1
    _embed_deliveries()  # idempotent: a delivery run again proposes nothing new
    assert Dispute.objects.count() == 1


def test_the_packet_keeps_both_as_evidence_marked_in_dispute_and_says_which_is_newer(pair, agent):
    old, new = pair
    result = assemble_context(
        principal=agent, scope="acme/slides", query="which database do we use?", budget_tokens=1500
    )
    for memory in (old, new):
        block = next(b for slot, b in _where(result, memory.pk).items() if slot in ("evidence", "recent"))
        assert block["in_dispute"]["newer"] == new.pk
        assert block["in_dispute"]["with"]["memory_id"] == (new.pk if memory == old else old.pk)
    assert "negative" not in _where(result, old.pk)
    assert "IN DISPUTE" in result["text"] and "this one is newer" in result["text"]


def test_only_the_older_end_recalled_brings_the_newer_one_along(pair, agent):
    old, new = pair
    result = assemble_context(
        principal=agent, scope="acme/slides", query="MySQL", budget_tokens=1500, strategy="full"
    )
    assert _where(result, new.pk), "the newer side of the dispute must come with the older one"


def test_a_person_confirms_which_holds_and_the_other_is_no_longer_in_force(pair, curator, agent):
    old, new = pair
    dispute = Dispute.objects.get()
    response = token_client(curator).post(
        f"/api/v1/disputes/{dispute.pk}/confirm", {"holds": new.pk, "reason": "we migrated"}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["state"] == "confirmed" and response.json()["holds"] == new.pk
    assert Memory.objects.get(pk=old.pk).status == Status.SUPERSEDED
    assert Relation.objects.filter(source=new, target=old, kind="supersedes").exists()
    result = assemble_context(
        principal=agent, scope="acme/slides", query="which database do we use?", budget_tokens=1500
    )
    where = _where(result, old.pk)
    assert set(where) == {"negative"} and where["negative"]["replaced_by"]["memory_id"] == new.pk
    assert "in_dispute" not in next(iter(_where(result, new.pk).values()))
    again = token_client(curator).post(
        f"/api/v1/disputes/{dispute.pk}/dismiss", {"reason": "changed my mind"}, format="json"
    )
    assert again.status_code == 409 and again.json()["error"] == "invalid_transition"


def test_a_dismissed_pair_is_not_marked_and_never_proposed_again(pair, reviewer, agent):
    old, new = pair
    dispute = Dispute.objects.get()
    response = token_client(reviewer).post(f"/api/v1/disputes/{dispute.pk}/dismiss", {}, format="json")
    assert response.status_code == 200, response.content
    OutboxDelivery.objects.filter(store="embedding").update(state=OutboxDelivery.State.PENDING)
    _embed_deliveries()
    assert list(Dispute.objects.values_list("state", flat=True)) == [DisputeState.DISMISSED]
    result = assemble_context(
        principal=agent, scope="acme/slides", query="which database do we use?", budget_tokens=1500
    )
    assert all("in_dispute" not in b for b in _where(result, old.pk).values())
    assert {m.status for m in Memory.objects.filter(pk__in=[old.pk, new.pk])} == {Status.ACTIVE}


def test_chinese_change_wording_is_proposed_too(project_scope):
    old = _say(project_scope, "我们的主数据库用的是MySQL。", 9, ref="z1")
    new = _say(project_scope, "团队已经把主数据库迁移到PostgreSQL了。", 1, ref="z2")
    _say(project_scope, "主数据库每晚备份一次。", 4, ref="z3")
    _embed_deliveries()
    assert list(Dispute.objects.values_list("newer_id", "older_id")) == [(new.pk, old.pk)]


def test_two_speakers_never_contradict_each_other(project_scope):
    _say(project_scope, "I use MySQL for my side project.", 9, ref="p1", speaker="Ana")
    _say(project_scope, "I have moved to PostgreSQL for my side project.", 1, ref="p2", speaker="Ben")
    _embed_deliveries()
    assert not Dispute.objects.exists()


@pytest.fixture
def viewer(project_scope):
    principal = user_ensure(username="vera", password="pw-vera", actor=None)
    grant_add(principal=principal, scope=project_scope, role=Role.VIEWER, actor=None)
    return principal


def test_dispute_endpoints_answer_each_role_another_workspace_and_no_token(
    pair, owner, curator, reviewer, viewer, agent, outsider
):
    from rest_framework.test import APIClient

    dispute = Dispute.objects.get()
    listed = {
        who: token_client(p).get("/api/v1/disputes", {"scope": "acme/slides"})
        for who, p in (
            ("owner", owner),
            ("curator", curator),
            ("reviewer", reviewer),
            ("viewer", viewer),
            ("agent", agent),
        )
    }
    for who, response in listed.items():
        assert response.status_code == 200, (who, response.content)
        assert [d["id"] for d in response.json()] == [dispute.pk], who
    foreign = token_client(outsider).get("/api/v1/disputes", {"scope": "acme/slides"})
    unknown = token_client(outsider).get("/api/v1/disputes", {"scope": "acme/nowhere"})
    assert foreign.status_code == unknown.status_code == 404 and foreign.json() == unknown.json()
    assert APIClient().get("/api/v1/disputes", {"scope": "acme/slides"}).status_code == 401
    bad = token_client(curator).get("/api/v1/disputes", {"scope": "acme/slides", "limit": 0})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_input"

    body = {"holds": pair[1].pk, "reason": "we migrated"}
    for p in (agent, viewer, reviewer):  # confirming ends a memory: the supersede right
        assert (
            token_client(p).post(f"/api/v1/disputes/{dispute.pk}/confirm", body, format="json").status_code
            == 403
        )
    for p in (agent, viewer):
        assert (
            token_client(p).post(f"/api/v1/disputes/{dispute.pk}/dismiss", {}, format="json").status_code
            == 403
        )
    for path in (f"/api/v1/disputes/{dispute.pk}/confirm", f"/api/v1/disputes/{dispute.pk + 999}/confirm"):
        response = token_client(outsider).post(path, body, format="json")
        assert response.status_code == 404, response.content
    assert APIClient().post(f"/api/v1/disputes/{dispute.pk}/confirm", body, format="json").status_code == 401
    wrong = token_client(curator).post(
        f"/api/v1/disputes/{dispute.pk}/confirm", {"holds": 123456, "reason": "x"}, format="json"
    )
    assert wrong.status_code == 400 and wrong.json()["field"] == "holds"
    no_reason = token_client(curator).post(
        f"/api/v1/disputes/{dispute.pk}/confirm", {"holds": pair[1].pk}, format="json"
    )
    assert no_reason.status_code == 400
    assert Dispute.objects.get().state == DisputeState.PROPOSED  # nothing refused changed anything
    assert {m.status for m in Memory.objects.filter(pk__in=[pair[0].pk, pair[1].pk])} == {Status.ACTIVE}
    assert (
        token_client(owner).post(f"/api/v1/disputes/{dispute.pk}/confirm", body, format="json").status_code
        == 200
    )


def test_a_hard_forget_of_one_side_redacts_it_from_the_other_sides_block(pair, agent, owner):
    import json

    from governance.models import Turn
    from governance.propagation.turns import redact_turns
    from governance.services.memory import memory_forget

    old, new = pair
    result = assemble_context(
        principal=agent, scope="acme/slides", query="which database do we use?", budget_tokens=1500
    )
    assert old.text in json.dumps(result["packet"])
    memory_forget(memory_id=old.pk, actor=owner, reason="user asked", hard=True)
    redact_turns([old.pk])
    turn = Turn.objects.get(pk=result["turn_id"])
    assert old.text not in json.dumps(turn.packet) and old.text not in turn.text
    assert new.text in turn.text
