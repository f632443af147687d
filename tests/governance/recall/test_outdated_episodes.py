"""An episode whose lesson is no longer in force is never presented as a live instruction (issue 13,
seeds 000/001: the old requirement came back through the episode it was learned from)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from governance.models import Memory, Relation, RelationKind, Status
from governance.propagation import embed_memories
from governance.recall import assemble_context
from governance.services.events import event_ingest
from governance.services.memory import memory_confirm, memory_forget, memory_retire, memory_supersede
from governance.services.relation import relation_add

pytestmark = pytest.mark.django_db


def _ingest(scope, session, text, ref, days_ago):
    created = event_ingest(
        scope=scope,
        session=session,
        at=timezone.now() - timedelta(days=days_ago),
        turns=[{"role": "user", "content": text, "ref": ref}],
        actor=None,
    )
    embed_memories([m.pk for m in created])
    episode = next(m for m in created if m.kind == "episodic")
    extracted = [m for m in created if m.kind != "episodic"]
    return episode, extracted


def _where(result: dict, memory_id: int) -> dict[str, dict]:
    return {
        slot: b
        for slot, blocks in result["packet"].items()
        for b in blocks
        if b.get("memory_id") == memory_id
    }


def test_episode_corrected_by_a_later_message_is_outdated_once_the_correction_is_confirmed(
    project_scope,
    agent,
    reviewer,
    remember,
):
    first, _ = _ingest(project_scope, "s1", "Please export the slides as PDF for the client.", "t1", 6)
    # A person recorded the rule that message taught, citing it.
    rule = remember(
        project_scope, "Export format: PDF", kind="convention", key="export_format", source_ref="t1"
    )
    later, (correction,) = _ingest(project_scope, "s2", "Change the export format to PPTX instead.", "t2", 2)
    assert correction.key == "export_format"  # keyed like the fact it corrects
    assert Relation.objects.filter(source=correction, target=later, kind=RelationKind.DERIVED_FROM).exists()

    # While the correction is unconfirmed, the first message's rule is still in force: not outdated.
    before = assemble_context(
        principal=agent,
        scope=project_scope,
        query="export the slides as PDF",
        budget_tokens=800,
        session="s3",
    )
    assert "outdated" not in _where(before, first.pk).get("evidence", {})

    memory_confirm(memory_id=correction.pk, actor=reviewer)
    assert Memory.objects.get(pk=rule.pk).status == Status.SUPERSEDED
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="export the slides as PDF",
        budget_tokens=800,
        session="s3",
    )
    where = _where(result, first.pk)
    assert set(where) == {"negative"}, f"the corrected message is presented in {sorted(where)}"
    outdated = where["negative"]["outdated"]
    assert (outdated["memory_id"], outdated["link"], outdated["status"]) == (rule.pk, "cites", "superseded")
    assert outdated["replaced_by"]["memory_id"] == correction.pk
    assert (
        "OUTDATED: this user message asked: \"Please export the slides as PDF for the client.\""
        in result["text"]
    )
    assert "now in force: Change the export format to PPTX instead." in result["text"]
    # The message that made the change is not outdated: it is where the rule in force came from.
    assert "negative" not in _where(result, later.pk)


def test_episode_a_curator_marks_superseded_by_a_later_episode_goes_to_negative_naming_it(
    project_scope,
    agent,
    curator,
    remember,
):
    now = timezone.now()
    old = remember(
        project_scope,
        "Send the weekly report to Bob on Fridays.",
        kind="episodic",
        occurred_at=now - timedelta(days=5),
        source_ref="w1",
    )
    new = remember(
        project_scope,
        "Send the weekly report to Carol on Mondays.",
        kind="episodic",
        occurred_at=now - timedelta(days=1),
        source_ref="w2",
    )
    relation_add(
        source_id=new.pk,
        target_id=old.pk,
        kind=RelationKind.SUPERSEDES,
        reason="Carol took over",
        actor=curator,
    )
    result = assemble_context(
        principal=agent, scope=project_scope, query="who gets the weekly report, Bob?", budget_tokens=800
    )
    block = _where(result, old.pk)["negative"]
    assert set(_where(result, old.pk)) == {"negative"}
    assert block["outdated"]["link"] == "supersedes"
    assert block["outdated"]["replaced_by"]["memory_id"] == new.pk
    assert "the later message: Send the weekly report to Carol on Mondays." in result["text"]


def test_a_later_episode_linked_by_an_earlier_time_does_not_outdate_it(
    project_scope, agent, curator, remember
):
    now = timezone.now()
    newer = remember(
        project_scope,
        "Deploy on Thursdays after the review.",
        kind="episodic",
        occurred_at=now - timedelta(days=1),
    )
    older = remember(
        project_scope,
        "Deploy on Tuesdays before the review.",
        kind="episodic",
        occurred_at=now - timedelta(days=4),
    )
    # A relation drawn the wrong way round (an older message "superseding" a newer one) changes nothing.
    relation_add(
        source_id=older.pk, target_id=newer.pk, kind=RelationKind.SUPERSEDES, reason="import", actor=curator
    )
    result = assemble_context(
        principal=agent, scope=project_scope, query="which day do we deploy?", budget_tokens=800
    )
    assert "negative" not in _where(result, newer.pk)


def test_episode_whose_lesson_was_retired_is_outdated_without_a_replacement(
    project_scope, agent, curator, remember
):
    turn = remember(
        project_scope,
        "Please cc the legal team on every release note.",
        kind="episodic",
        occurred_at=timezone.now() - timedelta(days=3),
        source_ref="s1#t9",
    )
    rule = remember(
        project_scope,
        "Release notes cc the legal team.",
        kind="convention",
        key="release_cc",
        source_ref="s1#t9",
    )
    memory_retire(memory_id=rule.pk, actor=curator, reason="legal no longer needs it")
    result = assemble_context(
        principal=agent, scope=project_scope, query="cc the legal team on release notes?", budget_tokens=800
    )
    block = _where(result, turn.pk)["negative"]
    assert (block["outdated"]["link"], block["outdated"]["status"]) == ("cites", "retired")
    assert block["outdated"]["replaced_by"] is None
    assert "release_cc r1) was retired" in result["text"]


def test_episode_whose_lesson_was_forgotten_never_shows_the_forgotten_text(
    project_scope, agent, owner, remember
):
    turn = remember(
        project_scope,
        "Remember the door code for the lab.",
        kind="episodic",
        occurred_at=timezone.now() - timedelta(days=2),
        source_ref="s1#t4",
    )
    secret = remember(project_scope, "The lab door code is 4417.", kind="semantic", source_ref="s1#t4")
    memory_forget(memory_id=secret.pk, actor=owner, reason="secret", hard=True)
    result = assemble_context(
        principal=agent, scope=project_scope, query="what is the lab door code?", budget_tokens=800
    )
    assert _where(result, turn.pk)["negative"]["outdated"]["status"] == "forgotten"
    assert "4417" not in result["text"] and "4417" not in str(result["packet"])


def test_episode_whose_lesson_is_still_in_force_is_plain_evidence(project_scope, agent, remember):
    turn = remember(
        project_scope,
        "Use British spelling in the client deck.",
        kind="episodic",
        occurred_at=timezone.now() - timedelta(days=2),
        source_ref="s1#t1",
    )
    remember(
        project_scope,
        "British spelling in client decks.",
        kind="convention",
        key="spelling",
        source_ref="s1#t1",
    )
    result = assemble_context(
        principal=agent, scope=project_scope, query="British spelling in the deck?", budget_tokens=800
    )
    where = _where(result, turn.pk)
    assert where and "negative" not in where
    assert "OUTDATED" not in result["text"]


@pytest.mark.parametrize("strategy", ["structured_vector", "temporal"])
def test_without_the_relations_stage_the_episode_is_not_adjudicated(
    project_scope, agent, curator, remember, strategy
):
    """The ablation the replay suite measures: only `full` reads provenance."""
    turn = remember(
        project_scope,
        "Please export the deck as PDF.",
        kind="episodic",
        occurred_at=timezone.now() - timedelta(days=3),
        source_ref="s1#t1",
    )
    rule = remember(
        project_scope, "Export the deck as PDF.", kind="convention", key="fmt", source_ref="s1#t1"
    )
    memory_retire(memory_id=rule.pk, actor=curator, reason="no format rule any more")
    result = assemble_context(
        principal=agent,
        scope=project_scope,
        query="export the deck as PDF",
        budget_tokens=800,
        strategy=strategy,
    )
    assert "negative" not in _where(result, turn.pk)
    full = assemble_context(
        principal=agent,
        scope=project_scope,
        query="export the deck as PDF",
        budget_tokens=800,
        strategy="full",
    )
    assert set(_where(full, turn.pk)) == {"negative"}


def test_provenance_of_every_candidate_episode_is_read_in_one_statement(
    project_scope, agent, curator, remember
):
    now = timezone.now()
    for i in range(12):
        turn = remember(
            project_scope,
            f"Please label export batch {i} as draft.",
            kind="episodic",
            occurred_at=now - timedelta(hours=i + 1),
            source_ref=f"s1#b{i}",
            embed=False,
        )
        rule = remember(
            project_scope,
            f"Batch {i} is labelled draft.",
            kind="convention",
            key=f"batch_{i}",
            source_ref=f"s1#b{i}",
            embed=False,
        )
        if i % 2:
            memory_retire(memory_id=rule.pk, actor=curator, reason="done")
        embed_memories([turn.pk])
    with CaptureQueriesContext(connection) as queries:
        result = assemble_context(
            principal=agent, scope=project_scope, query="label export batch as draft", budget_tokens=2000
        )
    provenance = [q for q in queries.captured_queries if "learned(episode_id" in q["sql"]]
    assert len(provenance) == 1
    assert len(result["packet"]["negative"]) >= 3
    assert all(b["outdated"]["status"] == "retired" for b in result["packet"]["negative"])


def test_episode_whose_extracted_rule_was_superseded_is_outdated_through_derived_from(
    project_scope,
    agent,
    reviewer,
    curator,
):
    episode, (rule,) = _ingest(
        project_scope, "s1", "From now on, always name files with the date first.", "", 4
    )
    assert rule.source_ref == ""  # no ref to cite: only the derived_from relation links them
    assert Relation.objects.filter(source=rule, target=episode, kind=RelationKind.DERIVED_FROM).exists()
    memory_confirm(memory_id=rule.pk, actor=reviewer)
    new = memory_supersede(
        memory_id=rule.pk,
        text="Name files with the project code first, then the date.",
        reason="naming scheme changed",
        source_kind="user",
        actor=curator,
    )
    result = assemble_context(
        principal=agent, scope=project_scope, query="name files with the date first", budget_tokens=800
    )
    block = _where(result, episode.pk)["negative"]
    assert (block["outdated"]["link"], block["outdated"]["replaced_by"]["memory_id"]) == (
        "derived_from",
        new.pk,
    )


def test_an_episode_whose_extracted_rule_is_in_force_costs_no_provenance_query(
    project_scope, agent, reviewer, curator
):
    """Most imported turns taught a candidate still in force: their derived_from link cannot outdate them,
    so the row read with the search says so and the provenance statement (after the embedding) is not
    sent; once the rule is superseded it is, and the episode goes to negative."""
    episode, (rule,) = _ingest(
        project_scope, "s1", "From now on, always name files with the date first.", "", 4
    )
    query = "name files with the date first"
    for confirmed in (False, True):
        if confirmed:
            memory_confirm(memory_id=rule.pk, actor=reviewer)
        with CaptureQueriesContext(connection) as queries:
            result = assemble_context(principal=agent, scope=project_scope, query=query, budget_tokens=800)
        assert not [q for q in queries.captured_queries if "learned(episode_id" in q["sql"]]
        assert "negative" not in _where(result, episode.pk) and _where(result, episode.pk)
    memory_supersede(
        memory_id=rule.pk,
        text="Name files with the project code first.",
        reason="changed",
        source_kind="user",
        actor=curator,
    )
    with CaptureQueriesContext(connection) as queries:
        result = assemble_context(principal=agent, scope=project_scope, query=query, budget_tokens=800)
    assert len([q for q in queries.captured_queries if "learned(episode_id" in q["sql"]]) == 1
    assert set(_where(result, episode.pk)) == {"negative"}


def test_the_turn_the_rule_in_force_cites_is_not_outdated(project_scope, agent, curator, remember):
    """One message both taught r1 and (as a curator recorded it) the r2 that replaced it: it is where the
    rule in force came from, not an outdated instruction."""
    turn = remember(
        project_scope,
        "Use Inter for headings; actually make that Inter Tight.",
        kind="episodic",
        occurred_at=timezone.now() - timedelta(days=1),
        source_ref="s1#t3",
    )
    old = remember(
        project_scope, "Headings in Inter.", kind="convention", key="heading_font", source_ref="s1#t3"
    )
    memory_supersede(
        memory_id=old.pk,
        text="Headings in Inter Tight.",
        reason="same message",
        source_kind="user",
        source_ref="s1#t3",
        actor=curator,
    )
    result = assemble_context(
        principal=agent, scope=project_scope, query="which font for headings, Inter?", budget_tokens=800
    )
    where = _where(result, turn.pk)
    assert where and "negative" not in where
