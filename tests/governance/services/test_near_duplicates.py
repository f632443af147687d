"""Near-duplicates at write (issue 25): a statement that repeats one of its scope reinforces it instead of
being stored again; a repeated rule is proposed as the next revision; both are shown in review."""

from __future__ import annotations

import pytest
from django.test import override_settings
from django.urls import reverse

from governance.models import AuditEvent, Memory, ReinforcementEvent, Relation, Status
from governance.services.memory import (
    MemoryInput,
    memory_confirm,
    memory_forget,
    memory_record,
    memory_record_batch,
)
from governance.services.near_duplicate import same_statement
from tests.conftest import token_client
from tests.governance.services.test_concurrency import race

KEPT = "The client wants the slides as PPTX files."


def fact(scope, text, kind="semantic", ref="", **kw) -> MemoryInput:
    return MemoryInput(scope=scope, kind=kind, text=text, source_kind="user", source_ref=ref, **kw)


@pytest.mark.parametrize(
    "new, old, repeat",
    [
        ("Client wants slides as PPTX files", KEPT, True),  # fewer words, no punctuation
        ("the CLIENT wants the slides as pptx files!", KEPT, True),
        ("The client wants the slides as PDF files.", KEPT, False),  # another value
        ("The client does not want the slides as PPTX files.", KEPT, False),  # negated: a contradiction
        ("Client prefers PPTX files.", "The client wants PPTX.", False),  # a paraphrase: not caught
        ("PPTX", KEPT, False),  # one word is no statement
        ("Slides PPTX", "The client wants the slides as PPTX files for the quarterly board meeting.", False),
        ("客户要PPTX格式的幻灯片。", "客户要PPTX格式的幻灯片，谢谢。", True),
        ("客户要PDF格式的幻灯片。", "客户要PPTX格式的幻灯片。", False),
    ],
)
def test_a_repeat_says_nothing_the_other_does_not_with_the_same_polarity(new, old, repeat):
    assert (same_statement(new, old) is not None) is repeat


@pytest.mark.django_db
def test_a_repeated_fact_reinforces_the_one_stored_and_adds_no_row(project_scope, agent):
    kept = memory_record(item=fact(project_scope, KEPT, ref="t1", session="s1"), actor=agent)
    again = memory_record(
        item=fact(project_scope, "Client wants slides as PPTX files", ref="t7"), actor=agent
    )

    assert again.pk == kept.pk
    assert again.near_duplicate == {"decision": "reinforced", "memory_id": kept.pk, "share": 1.0}
    assert Memory.objects.filter(scope=project_scope).count() == 1
    kept.refresh_from_db()
    assert kept.reinforcement_count == 1 and kept.activation_log_k > Memory(pk=0).activation_log_k
    assert ReinforcementEvent.objects.get(memory=kept).reason == ReinforcementEvent.Reason.WRITE
    [merged] = kept.meta["near_duplicates"]
    assert merged["source_ref"] == "t7" and merged["by"] == "slides-agent"
    assert "text" not in merged  # nothing a forget would have to reach
    event = AuditEvent.objects.get(action="memory.near_duplicate")
    assert event.target_id == str(kept.pk) and event.data["decision"] == "reinforced"
    assert "PPTX" not in str(event.data)

    # Another value, a negation, another kind, another scope: each its own memory.
    memory_record(item=fact(project_scope, "The client wants the slides as PDF files."), actor=agent)
    memory_record(item=fact(project_scope, "The client does not want the slides as PPTX files."), actor=agent)
    memory_record(item=fact(project_scope, KEPT, kind="preference"), actor=agent)
    assert Memory.objects.filter(scope=project_scope).count() == 4


@pytest.mark.django_db
def test_episodes_and_rejected_memories_are_never_merged_into(project_scope, agent, curator):
    memory_record(item=fact(project_scope, KEPT, kind="episodic", ref="t1"), actor=agent)
    memory_record(item=fact(project_scope, KEPT, kind="episodic", ref="t2"), actor=agent)
    rejected = memory_record(item=fact(project_scope, KEPT), actor=agent)
    from governance.services.memory import memory_reject

    memory_reject(memory_id=rejected.pk, actor=curator, reason="not so")
    again = memory_record(item=fact(project_scope, KEPT), actor=agent)
    assert again.pk != rejected.pk and again.status == Status.CANDIDATE
    assert Memory.objects.filter(scope=project_scope).count() == 4


@pytest.mark.django_db
def test_a_repeated_rule_is_proposed_as_the_next_revision_for_a_person(
    project_scope, agent, curator, reviewer
):
    rule = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            text="Export the decks as PPTX files.",
            source_kind="user",
            status="active",
        ),
        actor=curator,
    )
    assert rule.status == Status.ACTIVE
    repeat = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            text="Export decks as PPTX.",
            source_kind="user",
            status="active",
        ),
        actor=agent,
    )
    assert repeat.pk != rule.pk
    assert (repeat.status, repeat.key, repeat.revision) == (Status.PROPOSED, "export_format", 2)
    assert repeat.meta["near_duplicate_of"]["memory_id"] == rule.pk
    rule.refresh_from_db()
    assert rule.status == Status.ACTIVE  # never in force by itself

    # Review shows the proposal with the rule it repeats (API and page).
    [item] = token_client(reviewer).get("/api/v1/review").json()
    assert item["memory"]["id"] == repeat.pk
    assert item["near_duplicate"]["id"] == rule.pk and item["near_duplicate"]["text"] == rule.text
    memory_confirm(memory_id=repeat.pk, actor=curator)
    rule.refresh_from_db()
    assert rule.status == Status.SUPERSEDED


@pytest.mark.django_db
def test_the_review_page_shows_the_repeat_and_the_merged_sources(project_scope, agent, reviewer, curator):
    from tests.memoryui.conftest import signed_in

    reviewer_client = signed_in(reviewer, "pw-rami")
    from governance.services.memory import memory_propose

    kept = memory_record(item=fact(project_scope, KEPT, kind="preference", ref="t1"), actor=agent)
    memory_propose(memory_id=kept.pk, actor=None)
    memory_record(
        item=fact(project_scope, "client wants slides as PPTX", kind="preference", ref="t9"), actor=agent
    )
    rule = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="method",
            text="Render every chart as an SVG image.",
            source_kind="user",
            status="active",
        ),
        actor=curator,
    )
    repeat = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="method", text="Render charts as SVG image", source_kind="user"
        ),
        actor=agent,
    )
    assert repeat.status == Status.PROPOSED and repeat.key is None

    html = reviewer_client.get(reverse("dashboard:review")).content.decode()
    assert "1 later write of the same statement reinforced this one" in html and "user t9" in html
    # the rule it repeats, linked by its label ("#id its first words · its scope")
    assert f'href="/memories/{rule.pk}/' in html and "Render every chart as an SVG image.</span>" in html
    assert "every word of this one is already there" in html


@pytest.mark.django_db
def test_a_rule_waiting_for_review_absorbs_its_repeat(project_scope, agent):
    first = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="convention", text="Never give up on a draft!", source_kind="user"
        ),
        actor=agent,
    )
    again = memory_record(
        item=MemoryInput(scope=project_scope, kind="convention", text="never give up", source_kind="user"),
        actor=agent,
    )
    assert again.pk == first.pk and again.status == Status.CANDIDATE
    assert Memory.objects.filter(scope=project_scope).count() == 1


@pytest.mark.django_db
def test_a_person_writing_in_force_what_waits_for_review_puts_it_in_force(project_scope, agent, curator):
    # The agent's extractor read the rule from the user's turn: a candidate. The owner then writes the
    # rule in force. Merged into the candidate, their decision was lost and no rule was in force.
    waiting = memory_record(
        item=fact(project_scope, "Always copy the finance team on supplier invoices.", kind="convention"),
        actor=agent,
    )
    assert waiting.status == Status.CANDIDATE
    rule = memory_record(
        item=fact(
            project_scope,
            "Always copy the finance team on supplier invoices.",
            kind="convention",
            status="active",
        ),
        actor=curator,
    )
    assert rule.pk != waiting.pk
    assert rule.status == Status.ACTIVE and rule.confirmed_at is not None
    assert getattr(rule, "near_duplicate", None) is None
    waiting.refresh_from_db()
    assert waiting.status == Status.CANDIDATE and not (waiting.meta or {}).get("near_duplicates")
    # A later contradicting instruction is linked to the rule in force (what a session correction reads).
    fix = memory_record(
        item=fact(
            project_scope,
            "From now on, do not copy the finance team on supplier invoices.",
            kind="convention",
            session="s-now",
        ),
        actor=agent,
    )
    assert Relation.objects.filter(source=fix, target=rule, kind="contradicts").exists()
    # The agent writing it again, or asking for it in force, is still absorbed: only a person decides.
    again = memory_record(
        item=fact(
            project_scope,
            "Always copy the finance team on supplier invoices!",
            kind="convention",
            status="active",
        ),
        actor=agent,
    )
    assert again.status != Status.ACTIVE


@pytest.mark.django_db
def test_a_batch_stores_a_repeated_candidate_once(project_scope, agent):
    items = [
        fact(project_scope, "Turn one about nothing in particular.", kind="episodic", ref="a"),
        fact(project_scope, KEPT, ref="a"),
        fact(project_scope, "Client wants the slides as PPTX.", ref="b"),
    ]
    created = memory_record_batch(items=items, actor=agent)
    assert [m.kind for m in created] == ["episodic", "semantic"]
    assert Memory.objects.filter(scope=project_scope, kind="semantic").count() == 1
    assert Memory.objects.get(scope=project_scope, kind="semantic").reinforcement_count == 1


@pytest.mark.django_db
@override_settings(MEMORY_NEAR_DUPLICATES=False)
def test_with_the_check_off_every_write_is_stored(project_scope, agent):
    memory_record(item=fact(project_scope, KEPT), actor=agent)
    memory_record(item=fact(project_scope, KEPT), actor=agent)
    assert Memory.objects.filter(scope=project_scope).count() == 2


@pytest.mark.django_db(transaction=True)
def test_two_identical_writes_at_once_store_one(project_scope, agent):
    results = race(4, lambda i: memory_record(item=fact(project_scope, KEPT, ref=f"t{i}"), actor=agent).pk)
    assert all(isinstance(r, int) for r in results), results
    assert len(set(results)) == 1
    assert Memory.objects.filter(scope=project_scope).count() == 1
    assert Memory.objects.get(scope=project_scope).reinforcement_count == 3


@pytest.mark.django_db
def test_the_api_answers_200_with_the_memory_repeated_and_hides_other_workspaces(
    project_scope, agent, outsider
):
    api = token_client(agent)
    body = {
        "scope": project_scope.path,
        "kind": "semantic",
        "text": KEPT,
        "source": {"kind": "user", "ref": "t1"},
    }
    first = api.post("/api/v1/memories", body, format="json")
    assert first.status_code == 201 and first.json()["near_duplicate"] is None
    again = api.post("/api/v1/memories", {**body, "text": "client wants slides as pptx"}, format="json")
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["near_duplicate"]["decision"] == "reinforced"
    assert again.json()["merged_repeats"] == 1
    # Another workspace's token cannot reach the scope (the same answer as an unknown one) nor merge into it.
    other = token_client(outsider).post("/api/v1/memories", body, format="json")
    unknown = token_client(outsider).post("/api/v1/memories", {**body, "scope": "no/such"}, format="json")
    assert other.status_code == unknown.status_code == 404 and other.json() == unknown.json()
    from rest_framework.test import APIClient

    assert APIClient().post("/api/v1/memories", body, format="json").status_code == 401
    assert Memory.objects.filter(scope=project_scope).count() == 1


@pytest.mark.django_db
def test_a_hard_forget_of_the_kept_memory_leaves_no_text_of_its_repeats(project_scope, agent, owner):
    kept = memory_record(item=fact(project_scope, KEPT, ref="t1"), actor=agent)
    memory_record(item=fact(project_scope, "client wants slides as PPTX", ref="t2"), actor=agent)
    memory_forget(memory_id=kept.pk, actor=owner, reason="wrong", hard=True)
    kept.refresh_from_db()
    assert kept.text == "" and "PPTX" not in str(kept.meta).upper()
    # A later repeat is a new memory: a forgotten memory absorbs nothing.
    new = memory_record(item=fact(project_scope, "client wants slides as PPTX", ref="t3"), actor=agent)
    assert new.pk != kept.pk and new.status == Status.CANDIDATE
