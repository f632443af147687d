"""An extracted correction ("Change the export format to PDF instead.", "导出格式改成PDF。") takes the key of
the active fact it corrects, so the reviewer sees both and confirming it supersedes (or, for a fact of an
ancestor scope, overrides) the old value in the context packet."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from governance.models import Memory, Relation, RelationKind, Status
from governance.propagation import embed_memories
from governance.recall import assemble_context
from governance.selectors.review import review_queue
from governance.services.correction import key_terms
from governance.services.events import event_ingest
from governance.services.memory import MemoryInput, memory_confirm, memory_record
from tests.conftest import token_client


def _fact(scope, text, key, kind="convention"):
    memory = memory_record(
        item=MemoryInput(
            scope=scope,
            kind=kind,
            text=text,
            source_kind="user",
            key=key,
            status="active",
            occurred_at=timezone.now() - timedelta(days=3),
        ),
        actor=None,
    )
    embed_memories([memory.pk])
    return memory


def _say(scope, agent, text, ref="u1"):
    created = event_ingest(
        scope=scope,
        session="s1",
        at=timezone.now() - timedelta(hours=1),
        actor=agent,
        turns=[
            {"role": "user", "content": text, "ref": ref},
            {"role": "assistant", "content": "Noted.", "ref": f"{ref}-a"},
        ],
    )
    embed_memories([m.pk for m in created])
    candidates = [m for m in created if m.kind != "episodic"]
    assert len(candidates) == 1, [m.text for m in created]
    return Memory.objects.get(pk=candidates[0].pk)


def _contradicts(memory):
    return set(
        Relation.objects.filter(source=memory, kind=RelationKind.CONTRADICTS).values_list(
            "target_id", flat=True
        )
    )


def _packet(agent, scope, query):
    result = assemble_context(principal=agent, scope=scope, query=query, budget_tokens=600)
    return {slot: [b["memory_id"] for b in blocks] for slot, blocks in result["packet"].items()}, result


@pytest.mark.parametrize(
    ("old_text", "said", "query"),
    [
        (
            "Export format: PPTX",
            "Change the export format to PDF instead.",
            "which file format do we export?",
        ),
        ("导出格式：PPTX", "导出格式改成PDF。", "导出用什么格式？"),
    ],
)
def test_correction_takes_the_key_and_confirming_it_supersedes_the_old_value(
    project_scope,
    agent,
    reviewer,
    old_text,
    said,
    query,
):
    old = _fact(project_scope, old_text, "export_format")
    fix = _say(project_scope, agent, said)

    assert fix.key == "export_format" and fix.revision == 2
    assert fix.kind == old.kind, "a correction keeps the kind of the fact it replaces"
    assert fix.status == Status.PROPOSED
    assert _contradicts(fix) == {old.pk}
    assert fix.meta["corrects"]["memory_id"] == old.pk and fix.meta["corrects"]["scope"] == "acme/slides"
    [item] = review_queue(principal=reviewer, scope=project_scope)
    assert item.kind == "conflict" and item.memory.pk == fix.pk and item.conflicting.pk == old.pk

    memory_confirm(memory_id=fix.pk, actor=reviewer, reason="user corrected it")
    old.refresh_from_db()
    assert old.status == Status.SUPERSEDED
    slots, result = _packet(agent, project_scope, query)
    assert slots["constraints"] == [fix.pk]
    assert old.pk in slots["negative"] and old.pk not in slots["evidence"] + slots["constraints"]
    negative = next(b for b in result["packet"]["negative"] if b["memory_id"] == old.pk)
    assert negative["replaced_by"]["memory_id"] == fix.pk


def test_correction_of_an_ancestor_fact_overrides_it_in_the_event_scope(
    workspace_scope,
    project_scope,
    agent,
    reviewer,
):
    inherited = _fact(workspace_scope, "Export format: PPTX", "export_format")
    fix = _say(project_scope, agent, "Change the export format to PDF instead.")

    assert fix.scope_id == project_scope.pk and fix.key == "export_format" and fix.revision == 1
    assert fix.status == Status.PROPOSED
    assert _contradicts(fix) == {inherited.pk}
    assert fix.meta["corrects"] == {
        "memory_id": inherited.pk,
        "key": "export_format",
        "scope": "acme",
        "score": 1.0,
    }
    [item] = review_queue(principal=reviewer, scope=project_scope)
    assert item.kind == "conflict" and item.conflicting.pk == inherited.pk

    memory_confirm(memory_id=fix.pk, actor=reviewer, reason="this project exports PDF")
    inherited.refresh_from_db()
    assert inherited.status == Status.ACTIVE, "the workspace keeps its value; the project overrides it"
    slots, result = _packet(agent, project_scope, "which file format do we export?")
    assert slots["constraints"] == [fix.pk]
    overridden = [b for b in result["packet"]["skipped"] if b["memory_id"] == inherited.pk]
    assert overridden and overridden[0]["reason"] == f"overridden by memory {fix.pk} in a narrower scope"
    # Found by search too, it still does not come back as evidence: it is not in force in this project.
    assert inherited.pk not in slots["evidence"]
    parent_slots, _ = _packet(None, workspace_scope, "which file format do we export?")
    assert parent_slots["constraints"] == [inherited.pk]


def test_the_narrowest_fact_of_a_key_is_the_one_corrected(workspace_scope, project_scope, agent):
    _fact(workspace_scope, "Export format: PNG", "export_format")
    in_force = _fact(project_scope, "Export format: PPTX", "export_format")
    fix = _say(project_scope, agent, "Change the export format to PDF instead.")
    assert fix.key == "export_format" and fix.meta["corrects"]["memory_id"] == in_force.pk
    assert _contradicts(fix) == {in_force.pk}


def test_two_equally_good_keys_leave_the_correction_unkeyed_with_both_noted(project_scope, agent):
    slides = _fact(project_scope, "Slides export format: PPTX", "slides.export_format")
    report = _fact(project_scope, "Report export format: DOCX", "report.export_format")
    fix = _say(project_scope, agent, "Change the export format to PDF instead.")

    assert fix.key is None and fix.status == Status.CANDIDATE
    assert "corrects" not in fix.meta
    assert {c["memory_id"] for c in fix.meta["corrects_candidates"]} == {slides.pk, report.pk}
    assert not _contradicts(fix)
    slides.refresh_from_db()
    assert slides.status == Status.ACTIVE


def test_the_more_specific_key_wins_over_a_generic_one(project_scope, agent):
    _fact(project_scope, "Format: A4 landscape", "format")
    export = _fact(project_scope, "Export format: PPTX", "export_format")
    fix = _say(project_scope, agent, "Change the export format to PDF instead.")
    assert fix.key == "export_format" and fix.meta["corrects"]["memory_id"] == export.pk


def test_unrelated_correction_stays_unkeyed(project_scope, agent):
    fact = _fact(project_scope, "Export format: PPTX", "export_format")
    fix = _say(project_scope, agent, "Make the charts blue instead.")
    assert fix.key is None and fix.status == Status.CANDIDATE
    assert "corrects" not in fix.meta and not fix.meta.get("corrects_candidates")
    assert not _contradicts(fix)
    fact.refresh_from_db()
    assert fact.status == Status.ACTIVE


def test_one_shared_word_is_not_enough_to_pick_a_key(project_scope, agent):
    _fact(project_scope, "Chart font: Arial", "chart_font")
    fix = _say(project_scope, agent, "Change the chart colours to blue instead.")
    assert fix.key is None and fix.status == Status.CANDIDATE
    assert [c["key"] for c in fix.meta["corrects_candidates"]] == ["chart_font"]


def test_a_standing_instruction_that_restates_a_keyed_fact_takes_its_key(project_scope, agent):
    old = _fact(project_scope, "Deadline: Friday", "deadline")
    said = _say(project_scope, agent, "From now on the deadline is Monday.")
    assert said.meta["rule"] == "standing_instruction"
    assert said.key == "deadline" and said.status == Status.PROPOSED and _contradicts(said) == {old.pk}


def test_a_fact_of_another_scope_is_never_the_target(project_scope, sibling_scope, agent):
    _fact(sibling_scope, "Export format: PPTX", "export_format")
    fix = _say(project_scope, agent, "Change the export format to PDF instead.")
    assert fix.key is None and fix.status == Status.CANDIDATE


def test_correction_through_the_events_api_comes_back_keyed(project_scope, agent):
    old = _fact(project_scope, "Export format: PPTX", "export_format")
    response = token_client(agent).post(
        "/api/v1/events",
        {
            "scope": "acme/slides",
            "session": "s1",
            "turns": [{"role": "user", "content": "Change the export format to PDF instead.", "ref": "u9"}],
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert [m["kind"] for m in response.json()["created"]] == ["episodic"]  # candidates wait for review
    listed = (
        token_client(agent)
        .get("/api/v1/memories", {"scope": "acme/slides", "key": "export_format", "status": "proposed"})
        .json()["results"]
    )
    [candidate] = [m for m in listed if m["id"] != old.pk]
    assert candidate["key"] == "export_format" and candidate["status"] == "proposed"
    assert _contradicts(Memory.objects.get(pk=candidate["id"])) == {old.pk}


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("export_format", {"export", "format"}),
        ("exportFormat", {"export", "format"}),
        ("slides.export-format/v2", {"slid", "export", "format", "v2"}),
        ("导出格式", {"导", "出", "格", "式", "导出", "出格", "格式"}),
    ],
)
def test_key_terms_split_like_text(key, expected):
    assert key_terms(key) == expected
