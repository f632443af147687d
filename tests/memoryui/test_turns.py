import pytest
from django.urls import reverse

from governance.models import Turn
from governance.services.memory import memory_forget
from memoryui.views.turns import FORGOTTEN_TEXT


def test_turn_list_shows_turns_of_readable_scopes_only(reviewer_client, outsider_client, turn):
    assert [t.pk for t in reviewer_client.get(reverse("dashboard:turns")).context["page_obj"]] == [turn.pk]
    assert list(outsider_client.get(reverse("dashboard:turns")).context["page_obj"]) == []
    assert outsider_client.get(reverse("dashboard:turn", args=[turn.pk])).status_code == 404


def test_turn_page_shows_slots_skipped_budget_and_stages(reviewer_client, turn):
    response = reviewer_client.get(reverse("dashboard:turn", args=[turn.pk]))
    body = response.content.decode()
    slots = {s["slot"]: s["blocks"] for s in response.context["slots"]}
    assert [b["key"] for b in slots["constraints"]] == ["export_format"]
    assert "keyed fact in force" in body and "over budget" in body
    assert "no longer in force: Export slides as PDF" in body
    assert response.context["budget"]["pct"] == 24.0
    assert [s["name"] for s in response.context["stages"]] == ["eligible", "pack"]


def test_turn_page_withholds_text_of_memories_forgotten_since(reviewer_client, turn, history):
    memory_forget(memory_id=history["episode"].pk, actor=None, reason="asked to")
    body = reviewer_client.get(reverse("dashboard:turn", args=[turn.pk])).content.decode()
    assert "make the deck shorter" not in body
    assert FORGOTTEN_TEXT in body


def test_diff_with_the_previous_turn_of_the_session(reviewer_client, turn, history, project_scope):
    later = Turn.objects.create(
        scope=project_scope,
        session="s1",
        query="again",
        budget_limit=500,
        budget_used=50,
        packet={
            "constraints": turn.packet["constraints"],
            "evidence": [{"memory_id": history["proposal"].pk, "text": "dark", "status": "proposed"}],
        },
    )
    response = reviewer_client.get(reverse("dashboard:turn", args=[later.pk]))
    assert response.context["previous"].pk == turn.pk
    rows = {d["slot"]: d for d in response.context["diff"]}
    assert rows["constraints"]["kept"] == 1 and not rows["constraints"]["added"]
    assert [b["memory_id"] for b in rows["evidence"]["added"]] == [history["proposal"].pk]
    assert [b["memory_id"] for b in rows["recent"]["removed"]] == [history["episode"].pk]


def test_replay_needs_a_post_and_read_rights(reviewer_client, outsider_client, turn):
    url = reverse("dashboard:turn-replay", args=[turn.pk])
    assert reviewer_client.get(url).status_code == 405
    assert outsider_client.post(url).status_code == 404


def test_replay_assembles_against_todays_memory(reviewer_client, turn, history):
    pytest.importorskip("governance.recall", reason="the recall pipeline (issue 3) is not installed")
    from governance import recall

    if not hasattr(recall, "assemble_context"):
        pytest.skip("governance.recall.assemble_context is not there yet")
    memory_forget(memory_id=history["second"].pk, actor=None, reason="asked to")
    response = reviewer_client.post(reverse("dashboard:turn-replay", args=[turn.pk]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200, response.content
    rows = {d["slot"]: d for d in response.context["diff"]}
    removed = [b["memory_id"] for d in rows.values() for b in d["removed"]]
    assert history["second"].pk in removed
    today = [b.get("memory_id") for s in response.context["slots"] for b in s["blocks"]]
    assert history["second"].pk not in today


def test_replay_says_so_when_the_recall_pipeline_is_missing(reviewer_client, turn, monkeypatch):
    import sys

    from memoryui.views.turns import REPLAY_UNAVAILABLE

    monkeypatch.setitem(
        sys.modules, "governance.recall", None
    )  # makes `from governance.recall import …` fail
    response = reviewer_client.post(reverse("dashboard:turn-replay", args=[turn.pk]), HTTP_HX_REQUEST="true")
    assert response.status_code == 503 and REPLAY_UNAVAILABLE.encode() in response.content


def test_turn_page_shows_an_outdated_episode_under_negative_with_its_reason(
    reviewer_client, agent, curator, project_scope
):
    from datetime import timedelta

    from django.utils import timezone

    from governance.propagation import embed_memories
    from governance.recall import assemble_context
    from governance.services.memory import MemoryInput, memory_record, memory_supersede

    turn_memory = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="episodic",
            text="Please export the deck as PDF.",
            source_kind="user",
            source_ref="s1#t1",
            occurred_at=timezone.now() - timedelta(days=3),
        ),
        actor=None,
    )
    rule = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            text="Export the deck as PDF.",
            source_kind="user",
            source_ref="s1#t1",
            status="active",
        ),
        actor=None,
    )
    new = memory_supersede(
        memory_id=rule.pk,
        text="Export the deck as PPTX.",
        reason="changed",
        source_kind="user",
        actor=curator,
    )
    embed_memories([turn_memory.pk, rule.pk, new.pk])
    result = assemble_context(
        principal=agent, scope=project_scope, query="export the deck as PDF", budget_tokens=800
    )
    response = reviewer_client.get(reverse("dashboard:turn", args=[result["turn_id"]]))
    slots = {s["slot"]: s["blocks"] for s in response.context["slots"]}
    assert turn_memory.pk in [b["memory_id"] for b in slots["negative"]]
    assert (
        "outdated: what it asked for (export_format r1) was superseded; replaced by export_format r2"
        in response.content.decode()
    )
