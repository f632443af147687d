"""A hard forget leaves no trace of the text anywhere: every text/json column of every table, every Redis
key and value, the stored packets and the summaries — after the real worker has propagated it."""

import json

from django.core.cache import cache
from rest_framework.test import APIClient

from governance import propagation
from governance.models import Memory, Outbox, Status, Summary, Turn, TurnMemory
from governance.recall.packet import assemble_context, recall_memories
from governance.services.audit import audit_verify_chain
from governance.services.memory import MemoryInput, memory_record, memory_supersede
from governance.services.principal import token_issue
from governance.services.summary import summary_build
from tests.conftest import wait_for
from tests.governance.propagation.helpers import postgres_hits, redis_hits, unique_marker


def embedded(*ids):
    return Memory.objects.filter(pk__in=ids, embedding__isnull=False).count() == len(ids)


def test_hard_forget_leaves_no_trace_in_postgres_redis_packets_or_summaries(
    celery_worker, project_scope, owner, curator
):
    marker = unique_marker()
    old = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="semantic",
            key="launch_codename",
            text="The launch code name is Bluebird",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    secret = memory_supersede(
        memory_id=old.pk,
        text=f"The launch code name is {marker}",
        reason="renamed",
        source_kind="user",
        actor=curator,
    )
    episode = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="episodic",
            source_kind="user",
            text="User asked what the launch code name is",
        ),
        actor=None,
    )
    wait_for(lambda: embedded(secret.pk, episode.pk))

    # Derived copies: stored packets, a summary, the hot set, a cached packet.
    turns = [
        assemble_context(
            principal=owner,
            scope=project_scope,
            query="what is the launch code name?",
            budget_tokens=800,
            session="s1",
        )
        for _ in range(3)
    ]
    assert all(marker in t["text"] for t in turns)
    assert TurnMemory.objects.filter(memory=secret).count() == 3
    summary = summary_build(scope=project_scope, actor=owner)
    assert marker in summary.text and secret.pk in summary.cited_ids
    client = propagation.redis_client()
    client.zadd(
        cache.make_key(propagation.hot_set_key(project_scope.pk)), {str(secret.pk): 1.0, str(episode.pk): 0.5}
    )
    packet_key = propagation.workspace_cache_key(project_scope.workspace_id, "packet", "abc123")
    cache.set(packet_key, json.dumps(turns[0]["packet"]), timeout=3600)
    assert redis_hits(client, marker) and postgres_hits(marker)
    wait_for(lambda: not Outbox.objects.filter(state="pending").exists())

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(principal=owner, actor=None)}")
    response = api.post(
        f"/api/v1/memories/{secret.pk}/forget", {"mode": "hard", "reason": "user asked"}, format="json"
    )
    assert response.status_code == 202
    # Reads do not wait for propagation: the memory is out of recall at once.
    assert secret.pk not in [
        r["memory_id"]
        for r in recall_memories(principal=owner, scope=project_scope, query="launch code name")
    ]
    outbox_id = response.json()["propagation"]["id"]
    wait_for(lambda: Outbox.objects.get(pk=outbox_id).state == Outbox.State.DONE)

    assert postgres_hits(marker) == []
    assert redis_hits(client, marker) == []
    memory = Memory.objects.get(pk=secret.pk)
    assert (memory.status, memory.text, memory.embedding, memory.content_hash) == (
        Status.FORGOTTEN,
        "",
        None,
        secret.content_hash,
    )
    for turn in Turn.objects.filter(pk__in=[t["turn_id"] for t in turns]):
        assert propagation.REDACTED in turn.text and marker not in json.dumps(turn.packet)
    assert secret.pk not in Summary.objects.get(scope=project_scope).cited_ids
    assert not client.zscore(cache.make_key(propagation.hot_set_key(project_scope.pk)), str(secret.pk))
    assert client.zscore(cache.make_key(propagation.hot_set_key(project_scope.pk)), str(episode.pk))
    assert propagation.turns_still_holding_purged() == []
    assert audit_verify_chain().ok


def test_hard_forget_of_a_contradiction_loser_and_a_promotion_leaves_no_trace(
    celery_worker, project_scope, owner
):
    """The composite block of a contradiction and a promotion's copies: after the forgets and the worker,
    neither text is anywhere, and the promotion scan does not write the forgotten proposal's text again."""
    from governance.services.memory.promotion import promotion_scan
    from governance.services.relation import relation_add

    loser_marker, promo_marker = unique_marker(), unique_marker()
    winner = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="semantic",
            text="The launch date is March 3",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    loser = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="semantic",
            source_kind="user",
            text=f"The launch date is March 10 {loser_marker}",
            status="candidate",
        ),
        actor=None,
    )
    relation_add(source_id=loser.pk, target_id=winner.pk, kind="contradicts", reason="two dates", actor=owner)
    candidates = []
    for i in range(3):
        episode = memory_record(
            item=MemoryInput(
                scope=project_scope,
                kind="episodic",
                source_kind="user",
                session=f"p{i}",
                text=f"User talked about templates ({i})",
            ),
            actor=None,
        )
        candidates.append(
            memory_record(
                item=MemoryInput(
                    scope=project_scope,
                    kind="preference",
                    source_kind="user",
                    session=f"p{i}",
                    status="candidate",
                    text=f"I prefer the {promo_marker} template",
                    meta={"episode_ids": [episode.pk]},
                ),
                actor=None,
            )
        )
    [proposal] = promotion_scan(scope=project_scope)
    wait_for(lambda: embedded(winner.pk, loser.pk, proposal.pk))

    turn = assemble_context(
        principal=owner,
        scope=project_scope,
        query="when is the launch date?",
        budget_tokens=800,
        session="s1",
    )
    assert f"(contradicts: The launch date is March 10 {loser_marker})" in turn["text"]
    summary = summary_build(scope=project_scope, actor=owner)
    assert promo_marker in summary.text
    wait_for(lambda: not Outbox.objects.filter(state="pending").exists())

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(principal=owner, actor=None)}")

    def forget(memory_id):
        response = api.post(
            f"/api/v1/memories/{memory_id}/forget", {"mode": "hard", "reason": "user asked"}, format="json"
        )
        assert response.status_code == 202
        outbox_id = response.json()["propagation"]["id"]
        wait_for(lambda: Outbox.objects.get(pk=outbox_id).state == Outbox.State.DONE)

    forget(loser.pk)
    forget(proposal.pk)
    assert (
        promotion_scan(scope=project_scope) == []
    )  # the candidates remain; their text is not proposed again
    for candidate in candidates:
        forget(candidate.pk)

    client = propagation.redis_client()
    for marker in (loser_marker, promo_marker):
        assert postgres_hits(marker) == []
        assert redis_hits(client, marker) == []
    stored = Turn.objects.get(pk=turn["turn_id"])
    assert stored.packet["relations"][0]["text"] == "The launch date is March 3"
    assert f"(contradicts: {propagation.REDACTED})" in stored.text
    assert propagation.turns_still_holding_purged() == []
    assert audit_verify_chain().ok
