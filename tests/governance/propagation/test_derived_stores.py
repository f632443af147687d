"""Derived stores, driven through the real propagation code in this process (the worker path is covered
by test_forget_no_trace and test_crash_recovery): summaries, retention, and the reconciler's drift repair."""

import json
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from governance import propagation
from governance.errors import PermissionDenied
from governance.models import AuditEvent, Memory, Outbox, Status, Summary, Turn, TurnMemory
from governance.services.memory import MemoryInput, memory_forget, memory_record, memory_supersede
from governance.services.retention import retention_apply, retention_policy_set
from governance.services.summary import summary_build, summary_get
from governance.tasks import embed_outbox, propagate_outbox, repair_derived_drift


def run_pending():
    """Apply every pending outbox row here and now (what the worker would do)."""
    for outbox_id in Outbox.objects.filter(state="pending").order_by("pk").values_list("pk", flat=True):
        propagate_outbox(outbox_id)
        embed_outbox(outbox_id)


def remember(scope, text, **kw):
    kw.setdefault("kind", "convention")
    kw.setdefault("status", "active")
    kw.setdefault("source_kind", "user")
    return memory_record(item=MemoryInput(scope=scope, text=text, **kw), actor=None)


def test_summary_cites_every_line_and_covers_each_section(project_scope, owner, curator):
    goal = remember(project_scope, "Ship the Q3 deck to the client", key="goal", kind="stage_fact")
    rule = remember(project_scope, "Slides are exported as PDF", key="export_format")
    memory_supersede(
        memory_id=rule.pk,
        text="Slides are exported as PPTX",
        reason="client asked",
        source_kind="user",
        actor=curator,
    )
    # What was done is what a tool reported (a user's request or a guess is not: issue 25).
    done = remember(
        project_scope, "Exported the deck as PPTX", kind="episodic", status=None, source_kind="tool_result"
    )
    question = remember(
        project_scope, "Which font does the client use?", kind="stage_fact", key="open_question.font"
    )
    nxt = remember(project_scope, "Send the deck for legal review", key="next_step", kind="stage_fact")
    summary = summary_build(scope=project_scope, actor=owner)
    sections = {line["section"] for line in summary.lines}
    assert sections == {"goal", "constraints", "done", "superseded", "open_questions", "next_step"}
    assert all(line["memory_ids"] for line in summary.lines)
    cited = set(summary.cited_ids)
    assert {goal.pk, rule.pk, done.pk, question.pk, nxt.pk} <= cited
    assert "replaced by: Slides are exported as PPTX" in summary.text
    assert f"m{goal.pk}" in summary.text
    assert AuditEvent.objects.filter(action="summary.build", target_id=str(summary.pk)).exists()


def test_a_change_to_a_cited_memory_marks_the_summary_stale_and_the_next_read_rebuilds_it(
    project_scope, owner
):
    rule = remember(project_scope, "Reports have at most five bullet points")
    summary_build(scope=project_scope, actor=owner)
    run_pending()
    memory_forget(memory_id=rule.pk, actor=owner, reason="no longer true")  # soft
    run_pending()
    assert Summary.objects.get(scope=project_scope).stale is False  # a forget rebuilds at once
    assert rule.pk not in Summary.objects.get(scope=project_scope).cited_ids
    remember(project_scope, "Reports are written in plain language")
    run_pending()
    assert Summary.objects.get(scope=project_scope).stale is True
    fresh = summary_get(scope=project_scope, actor=owner)
    assert not fresh.stale and "plain language" in fresh.text


def test_summary_of_a_scope_never_shows_a_sibling_or_a_reader_without_a_grant(
    project_scope, sibling_scope, outsider
):
    remember(sibling_scope, "Payments use idempotency keys")
    summary = summary_build(scope=project_scope, actor=None)
    assert "idempotency" not in summary.text
    from governance.errors import NotFound

    with pytest.raises(NotFound):
        summary_get(scope=project_scope, actor=outsider)


def test_retention_retires_unused_memories_and_archives_cold_ones(
    project_scope, workspace_scope, owner, curator
):
    with pytest.raises(PermissionDenied):
        retention_policy_set(scope=project_scope, actor=curator, retire_unused_days=30)
    policy = retention_policy_set(scope=workspace_scope, actor=owner, retire_unused_days=30)
    old = remember(project_scope, "Use the blue template")
    used = remember(project_scope, "Use the grey template for drafts")
    trace = remember(project_scope, "User opened the deck", kind="episodic", status=None)
    later = timezone.now() + timedelta(days=40)
    Memory.objects.filter(pk=used.pk).update(last_reinforced_at=later - timedelta(days=2))
    result = retention_apply(policy=policy, now=later)
    assert result == {"retired": 1, "archived": 0}
    statuses = dict(Memory.objects.filter(pk__in=[old.pk, used.pk, trace.pk]).values_list("pk", "status"))
    assert statuses == {old.pk: Status.RETIRED, used.pk: Status.ACTIVE, trace.pk: Status.ACTIVE}
    assert AuditEvent.objects.filter(
        action="memory.retire", target_id=str(old.pk), actor_name="system"
    ).exists()
    assert retention_apply(policy=policy, now=later) == {"retired": 0, "archived": 0}  # idempotent

    policy = retention_policy_set(scope=workspace_scope, actor=owner, archive_cold=True, cold_threshold=0.5)
    result = retention_apply(policy=policy, now=timezone.now() + timedelta(days=400))
    assert result["archived"] == 1
    assert Memory.objects.get(pk=used.pk).meta.get("archived_at")
    assert Memory.objects.get(pk=used.pk).status == Status.ACTIVE  # archived, still findable
    assert Outbox.objects.filter(topic="memory.archived", memory_id=used.pk).exists()


def test_reconciler_repairs_a_forgotten_memory_left_in_caches_and_stored_packets(project_scope, owner):
    secret = remember(project_scope, "The vault code is 99-ALPHA-1", kind="semantic")
    keep = remember(project_scope, "The lobby code is public", kind="semantic")
    turn = Turn.objects.create(
        scope=project_scope,
        query="codes?",
        packet={
            "evidence": [
                {"memory_id": secret.pk, "text": secret.text, "kind": "semantic", "status": "active"},
                {"memory_id": keep.pk, "text": keep.text, "kind": "semantic", "status": "active"},
            ]
        },
        text=f"- {secret.text}\n- {keep.text}",
        # Not the secret: a turn whose request carried it is rewritten whole in the forget's own
        # transaction (services/memory/words.py); this one's packet is left to the workers.
        request={"echo": "codes?"},
    )
    TurnMemory.objects.create(turn=turn, memory=secret, slot="evidence")
    client = propagation.redis_client()
    hot = cache.make_key(propagation.hot_set_key(project_scope.pk))
    client.zadd(hot, {str(secret.pk): 1.0, str(keep.pk): 1.0})
    stale_key = f"ws:{project_scope.workspace_id}:g0:packet:old"
    cache.set(stale_key, json.dumps({"text": secret.text}), timeout=3600)
    propagation.bump_cache_generation(project_scope.workspace_id)
    # The forget commits, but no delivery ever runs (a lost message and a dead worker).
    memory_forget(memory_id=secret.pk, actor=owner, reason="asked", hard=True)
    assert propagation.turns_still_holding_purged() == [(turn.pk, secret.pk)]

    report = repair_derived_drift()
    assert report["turns_redacted"] == 1 and report["hot_removed"] == 1 and report["old_cache_entries"] >= 1
    turn.refresh_from_db()
    assert "99-ALPHA-1" not in json.dumps(turn.packet) + turn.text + json.dumps(turn.request)
    assert keep.text in turn.text
    assert client.zscore(hot, str(secret.pk)) is None and client.zscore(hot, str(keep.pk)) == 1.0
    assert cache.get(stale_key) is None
    assert propagation.turns_still_holding_purged() == []
    assert repair_derived_drift()["turns_redacted"] == 0  # nothing left to repair


@pytest.mark.parametrize("text", ["PIN 4242", "The door code is 4242-ALPHA, tell nobody"])
def test_turn_redaction_covers_short_and_long_texts_and_copies_outside_blocks(project_scope, owner, text):
    """Short texts take the block-by-block Python path, long ones the SQL fast path; both must clean the
    block, a verbatim copy in the request and trace, and the rendered text, and leave other blocks alone."""
    secret = remember(project_scope, text, kind="semantic")
    keep = remember(project_scope, "Visitors sign in at the desk", kind="semantic")
    packet = {
        "evidence": [
            {"memory_id": secret.pk, "text": text, "status": "active"},
            {"memory_id": keep.pk, "text": keep.text, "status": "active"},
        ],
        "skipped": [{"memory_id": secret.pk, "text": text, "slot": "evidence", "reason": "budget"}],
    }
    from governance.redaction.render import render_packet_text

    turn = Turn.objects.create(
        scope=project_scope,
        query="codes?",
        packet=packet,
        text=render_packet_text(packet),
        request={"events": [{"text": text}]},
        trace={"note": text},
    )
    TurnMemory.objects.create(turn=turn, memory=secret, slot="evidence")
    memory_forget(memory_id=secret.pk, actor=owner, reason="asked", hard=True)
    propagation.redact_turns([secret.pk])
    turn.refresh_from_db()
    stored = json.dumps([turn.packet, turn.request, turn.trace]) + turn.text
    assert text not in stored and "4242" not in stored
    assert keep.text in turn.text and turn.packet["evidence"][1]["text"] == keep.text
    assert turn.packet["evidence"][0]["text"] == propagation.REDACTED


class UpperWriter:
    """A stand-in for an LLM writer: it only ever receives the cited lines."""

    name = "upper-test"

    def write(self, *, scope_path, lines):
        return "\n".join(f"{line.section.upper()}: {line.text.upper()}" for line in lines)


def test_a_configured_writer_writes_the_text_and_the_citations_stay_structured(project_scope, settings):
    rule = remember(project_scope, "Slides use 16:9")
    settings.SUMMARY_WRITER = f"{__name__}.UpperWriter"
    summary = summary_build(scope=project_scope, actor=None)
    assert summary.writer == "upper-test" and "CONSTRAINTS: SLIDES USE 16:9" in summary.text
    assert rule.pk in summary.cited_ids
