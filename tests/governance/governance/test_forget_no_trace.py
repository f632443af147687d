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
from tests.governance.governance.helpers import postgres_hits, redis_hits, unique_marker


def embedded(*ids):
    return Memory.objects.filter(pk__in=ids, embedding__isnull=False).count() == len(ids)


def test_hard_forget_leaves_no_trace_in_postgres_redis_packets_or_summaries(celery_worker, project_scope, owner,
                                                                           curator):
    marker = unique_marker()
    old = memory_record(item=MemoryInput(scope=project_scope, kind="semantic", key="launch_codename",
                                         text="The launch code name is Bluebird", source_kind="user",
                                         status="active"), actor=None)
    secret = memory_supersede(memory_id=old.pk, text=f"The launch code name is {marker}", reason="renamed",
                              source_kind="user", actor=curator)
    episode = memory_record(item=MemoryInput(scope=project_scope, kind="episodic", source_kind="user",
                                             text="User asked what the launch code name is"), actor=None)
    wait_for(lambda: embedded(secret.pk, episode.pk))

    # Derived copies: stored packets, a summary, the hot set, a cached packet.
    turns = [assemble_context(principal=owner, scope=project_scope, query="what is the launch code name?",
                              budget_tokens=800, session="s1") for _ in range(3)]
    assert all(marker in t["text"] for t in turns)
    assert TurnMemory.objects.filter(memory=secret).count() == 3
    summary = summary_build(scope=project_scope, actor=owner)
    assert marker in summary.text and secret.pk in summary.cited_ids
    client = propagation._redis()
    client.zadd(cache.make_key(propagation.hot_set_key(project_scope.pk)), {str(secret.pk): 1.0, str(episode.pk): 0.5})
    packet_key = propagation.workspace_cache_key(project_scope.workspace_id, "packet", "abc123")
    cache.set(packet_key, json.dumps(turns[0]["packet"]), timeout=3600)
    assert redis_hits(client, marker) and postgres_hits(marker)
    wait_for(lambda: not Outbox.objects.filter(state="pending").exists())

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(principal=owner, actor=None)}")
    response = api.post(f"/api/v1/memories/{secret.pk}/forget", {"mode": "hard", "reason": "user asked"},
                        format="json")
    assert response.status_code == 202
    # Reads do not wait for propagation: the memory is out of recall at once.
    assert secret.pk not in [r["memory_id"] for r in recall_memories(principal=owner, scope=project_scope,
                                                              query="launch code name")]
    outbox_id = response.json()["propagation"]["id"]
    wait_for(lambda: Outbox.objects.get(pk=outbox_id).state == Outbox.State.DONE)

    assert postgres_hits(marker) == []
    assert redis_hits(client, marker) == []
    memory = Memory.objects.get(pk=secret.pk)
    assert (memory.status, memory.text, memory.embedding, memory.content_hash) == (
        Status.FORGOTTEN, "", None, secret.content_hash)
    for turn in Turn.objects.filter(pk__in=[t["turn_id"] for t in turns]):
        assert propagation.REDACTED in turn.text and marker not in json.dumps(turn.packet)
    assert secret.pk not in Summary.objects.get(scope=project_scope).cited_ids
    assert not client.zscore(cache.make_key(propagation.hot_set_key(project_scope.pk)), str(secret.pk))
    assert client.zscore(cache.make_key(propagation.hot_set_key(project_scope.pk)), str(episode.pk))
    assert propagation.turns_still_holding_purged() == []
    assert audit_verify_chain().ok
