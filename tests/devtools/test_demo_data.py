"""The demo workspace shows what it promises, and loading it again changes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import authenticate

from devtools import demo
from governance.models import (
    AuditEvent,
    Grant,
    Memory,
    Outbox,
    Principal,
    ReinforcementEvent,
    Relation,
    Role,
    Status,
)
from governance.services.audit import audit_verify_chain

pytestmark = pytest.mark.django_db


@pytest.fixture
def loaded():
    return demo.load_demo()


def _keyed(path: str, key: str):
    return Memory.objects.filter(scope__path=path, key=key).order_by("revision")


def test_loading_twice_creates_nothing_the_second_time(loaded):
    counts = (
        Memory.objects.count(),
        AuditEvent.objects.count(),
        Relation.objects.count(),
        ReinforcementEvent.objects.count(),
        Outbox.objects.count(),
        Grant.objects.count(),
    )
    again = demo.load_demo()
    assert loaded.created > 15 and loaded.existing == 0
    assert again.created == 0 and again.existing == loaded.created
    assert counts == (
        Memory.objects.count(),
        AuditEvent.objects.count(),
        Relation.objects.count(),
        ReinforcementEvent.objects.count(),
        Outbox.objects.count(),
        Grant.objects.count(),
    )
    assert audit_verify_chain().ok


def test_slide_export_format_changed_from_pdf_to_pptx(loaded):
    r1, r2 = _keyed("demo/slides", "export_format")
    assert (r1.revision, r1.status, "PDF" in r1.text) == (1, Status.SUPERSEDED, True)
    assert (r2.revision, r2.status, "PPTX" in r2.text) == (2, Status.ACTIVE, True)
    assert Relation.objects.filter(source=r2, target=r1, kind="supersedes").exists()


def test_slide_constraints_are_in_force(loaded):
    active = Memory.objects.filter(scope__path="demo/slides", status=Status.ACTIVE)
    texts = " ".join(active.values_list("text", flat=True)).lower()
    assert "do not overwrite the original file" in texts
    assert "do not publish" in texts


def test_payment_rule_was_replaced_two_weeks_later_by_tests_first(loaded):
    old, new = _keyed("demo/payments", "refactoring_policy")
    assert old.status == Status.SUPERSEDED and "Do not refactor" in old.text
    assert new.status == Status.ACTIVE and "tests first" in new.text
    assert new.occurred_at - old.occurred_at >= timedelta(days=13)
    assert Relation.objects.filter(source=new, target=old, kind="supersedes").exists()


def test_writing_preferences_differ_by_task_type(loaded):
    prefs = Memory.objects.filter(scope__path="demo/alex", kind="preference", status=Status.ACTIVE)
    by_task = {
        task: list(prefs.filter(task_type=task).values_list("text", flat=True))
        for task in ("daily_report", "long_article")
    }
    assert any("bullet" in t for t in by_task["daily_report"])
    assert any("paragraphs" in t for t in by_task["long_article"])
    assert any("日报" in t for t in by_task["daily_report"])  # memories are in English and Chinese


def test_second_project_has_its_own_export_rule(loaded):
    brochure = _keyed("demo/brochure", "export_format").get()
    slides_active = _keyed("demo/slides", "export_format").get(status=Status.ACTIVE)
    assert brochure.status == Status.ACTIVE and "PDF" in brochure.text
    assert brochure.scope_id != slides_active.scope_id
    assert brochure.scope.parent_id == slides_active.scope.parent_id  # siblings: neither sees the other


def test_tool_calls_are_paired_with_their_results(loaded):
    calls = Memory.objects.filter(scope__path="demo/slides").exclude(call_id="")
    pairs: dict[str, set[str]] = {}
    for m in calls:
        pairs.setdefault(m.call_id, set()).add(m.source_kind)
    assert len(pairs) == 2
    assert all(kinds == {"assistant", "tool_result"} for kinds in pairs.values())


def test_a_forgotten_preference_is_a_purged_tombstone(loaded):
    forgotten = Memory.objects.get(scope__path="demo/alex", status=Status.FORGOTTEN)
    assert forgotten.text == "" and forgotten.purged_at is not None and forgotten.content_hash
    assert not AuditEvent.objects.filter(reason__icontains="motivational").exists()


def test_candidates_and_proposals_wait_for_review(loaded):
    waiting = Memory.objects.filter(
        scope__workspace__slug="demo", status__in=[Status.CANDIDATE, Status.PROPOSED]
    )
    assert waiting.filter(status=Status.PROPOSED).count() >= 2
    assert waiting.filter(status=Status.CANDIDATE).exists()


def test_reinforcement_history_spans_days_and_raises_activation(loaded):
    daily = _keyed("demo/alex", "style.daily_report").get()
    article = _keyed("demo/alex", "style.long_article").get()
    events = ReinforcementEvent.objects.filter(memory=daily).order_by("at")
    assert events.count() >= 5
    assert (events.last().at - events.first().at) >= timedelta(days=7)
    # Same importance and age, but used often: the daily-report preference is the more active one.
    assert daily.activation_log_k > article.activation_log_k


def test_demo_agent_holds_the_agent_role_and_no_sign_in_is_created_by_the_loader(loaded):
    agent = Principal.objects.get(name=demo.AGENT)
    assert Grant.objects.filter(principal=agent, role=Role.AGENT, scope__path="demo").exists()
    assert not Principal.objects.filter(name=demo.DEMO_USER).exists()


def test_demo_user_signs_in_and_owns_the_demo_workspace(loaded):
    principal = demo.ensure_demo_user()
    demo.ensure_demo_user()  # idempotent too
    assert authenticate(username="demo", password="demo") is not None
    assert Grant.objects.filter(principal=principal, role=Role.OWNER, scope__path="demo").count() == 1


def test_example_turns_show_the_old_export_format_as_no_longer_in_force(loaded):
    from governance.models import Turn

    assert demo.store_demo_turns() == len(demo.DEMO_TURNS)
    assert demo.store_demo_turns() == 0  # once only
    turn = Turn.objects.get(scope__path="demo/slides", session="slides-3")
    r1, r2 = _keyed("demo/slides", "export_format")
    negative_ids = {b["memory_id"] for b in turn.packet["negative"]}
    in_force_ids = {b["memory_id"] for slot in ("constraints", "evidence") for b in turn.packet[slot]}
    assert r1.pk in negative_ids and r1.pk not in in_force_ids
    assert r2.pk in in_force_ids
    assert "do not overwrite the original file" in turn.text.lower()


def _blocks_of(packet: dict, memory_id: int) -> dict[str, dict]:
    return {slot: b for slot, blocks in packet.items() for b in blocks if b.get("memory_id") == memory_id}


@pytest.mark.parametrize("query", [demo.DEMO_TURNS[0][2], "export the deck again, final version"])
def test_the_users_old_pdf_message_is_flagged_outdated_not_live_evidence(loaded, query):
    """Seeds 000/001, first failure: the old requirement came back through the episode it was learned from."""
    from governance.recall import assemble_context

    agent = Principal.objects.get(name=demo.AGENT)
    pdf_turn = Memory.objects.get(scope__path="demo/slides", meta__demo="slides-t1")
    r1, r2 = _keyed("demo/slides", "export_format")
    result = assemble_context(
        principal=agent,
        scope="demo/slides",
        query=query,
        budget_tokens=600,
        task={"goal": query, "type": "continue"},
        session="slides-3",
    )
    where = _blocks_of(result["packet"], pdf_turn.pk)
    assert set(where) == {"negative"}, f"the PDF message is presented in {sorted(where)}"
    block = where["negative"]
    assert block["outdated"]["memory_id"] == r1.pk
    assert block["outdated"]["replaced_by"]["memory_id"] == r2.pk
    assert block["reason"].startswith("outdated: ")
    assert (
        "OUTDATED: this user message asked: \"Please export the Q3 review deck as PDF when it is ready.\""
        in result["text"]
    )
    assert "export_format r1" in result["text"] and "export_format r2" in result["text"]
    assert "now in force: Export the Q3 review deck as PPTX" in result["text"]


def test_the_stored_demo_turn_records_the_outdated_flag_and_reason(loaded):
    from governance.models import Turn

    demo.store_demo_turns()
    turn = Turn.objects.get(scope__path="demo/slides", session="slides-3")
    pdf_turn = Memory.objects.get(scope__path="demo/slides", meta__demo="slides-t1")
    where = _blocks_of(turn.packet, pdf_turn.pk)
    assert set(where) == {"negative"}
    assert any(f.startswith("outdated: ") for f in where["negative"]["flags"])
    assert "OUTDATED: this user message asked" in turn.text
    assert turn.cited.filter(memory_id=pdf_turn.pk, slot="negative", included=True).exists()


def test_a_memory_left_out_for_the_budget_is_listed_once(loaded):
    """A call and its result are offered as a pair for each of them; on a tight budget the demo's turn
    listed both of them twice among the skipped."""
    from governance.recall import assemble_context

    owner = demo.ensure_demo_user()
    for query in ("export the deck for the client", "export the deck again, final version"):
        for budget in (200, 300, 400):
            result = assemble_context(
                principal=owner, scope="demo/slides", query=query, budget_tokens=budget, session="demo-s1"
            )
            listed = [
                (s.get("memory_id"), s["slot"]) for s in result["packet"]["skipped"] if s.get("memory_id")
            ]
            assert len(listed) == len(set(listed)), (
                f"{query!r} at {budget}: a skipped memory listed twice: {listed}"
            )
