"""After a context request: the Turn and its cited memories are stored, and the memories it used are
reinforced in the background by a real Celery worker (queued only when the request commits)."""

from __future__ import annotations

from governance.models import Memory, ReinforcementEvent, Turn, TurnMemory
from governance.recall import assemble_context
from tests.conftest import wait_for
from tests.governance.recall.helpers import packet_ids


def test_used_memories_are_reinforced_in_the_background_after_the_turn(
    celery_worker, project_scope, agent, remember
):
    used = remember(
        project_scope, "Invoices are numbered INV-YYYY-NNNN", kind="convention", key="invoice_format"
    )
    before = Memory.objects.get(pk=used.pk).activation_log_k
    result = assemble_context(
        principal=agent, scope=project_scope, query="invoice numbering", budget_tokens=300
    )
    assert used.pk in packet_ids(result)
    event = wait_for(
        lambda: ReinforcementEvent.objects.filter(memory=used, turn_id=result["turn_id"]).first()
    )
    assert event.reason == "recall"
    assert Memory.objects.get(pk=used.pk).activation_log_k > before


def test_turn_stores_inputs_packet_trace_and_every_cited_memory_with_its_slot(project_scope, agent, remember):
    memories = [
        remember(project_scope, f"Meeting note {i}: the vendor shortlist has {i} names", kind="episodic")
        for i in range(12)
    ]
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="vendor shortlist",
        budget_tokens=60,
        session="",
        task={"goal": "pick a vendor"},
    )
    turn = Turn.objects.get(pk=result["turn_id"])
    assert turn.request["query"] == "vendor shortlist" and turn.budget_limit == 60
    assert turn.budget_used == result["budget"]["used"] <= 60
    assert [s["name"] for s in turn.trace["stages"]][-1] == "pack"
    included = set(TurnMemory.objects.filter(turn=turn, included=True).values_list("memory_id", flat=True))
    skipped = set(TurnMemory.objects.filter(turn=turn, included=False).values_list("memory_id", flat=True))
    assert included == packet_ids(result, slots=("recent", "evidence"))
    assert skipped == {b["memory_id"] for b in result["packet"]["skipped"]}
    assert skipped and included and (included | skipped) <= {m.pk for m in memories}


def test_store_false_leaves_no_turn(project_scope, agent, remember):
    remember(project_scope, "Something to recall", kind="episodic")
    result = assemble_context(
        principal=agent, scope=project_scope, query="recall", budget_tokens=100, store=False
    )
    assert result["turn_id"] is None and not Turn.objects.exists()
