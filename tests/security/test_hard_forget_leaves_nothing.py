"""Issue 10, part 5: a hard forget leaves no copy. A contradiction block carries each memory's text under its
own id so redaction finds it; the candidates of a forgotten promotion are never proposed again; the PostgreSQL
server log holds no statement or parameter of a failed write; the tombstone's hash is keyed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.db import connection

from devtools import embedded
from governance.errors import ActiveKeyExists
from governance.models import AuditEvent, Kind, Memory, Status, Turn, content_hash
from governance.propagation.turns import REDACTED, redact_turns, turns_still_holding_purged
from governance.recall.packet import assemble_context
from governance.services.events import event_ingest
from governance.services.memory import MemoryInput, memory_forget, memory_record
from governance.services.memory.promotion import PromotionForgotten, promotion_propose, promotion_scan
from governance.services.relation import relation_add
from tests.conftest import token_client
from tests.governance.propagation.helpers import unique_marker

pytestmark = pytest.mark.django_db


def remember(scope, text, **kw):
    kw.setdefault("kind", "semantic")
    kw.setdefault("status", "active")
    return memory_record(item=MemoryInput(scope=scope, text=text, source_kind="user", **kw), actor=None)


def contradiction_turn(scope, owner, loser_text):
    winner = remember(scope, "The launch date is March 3")
    loser = remember(scope, f"The launch date is March 10 {loser_text}", status="candidate")
    relation_add(source_id=loser.pk, target_id=winner.pk, kind="contradicts", reason="two dates", actor=owner)
    result = assemble_context(
        principal=owner, scope=scope, query="when is the launch date?", budget_tokens=800
    )
    assert [b["memory_id"] for b in result["packet"]["relations"]] == [winner.pk]
    return winner, loser, result


def test_contradiction_block_carries_each_memory_so_a_hard_forget_of_the_loser_redacts_it(
    project_scope, owner
):
    marker = unique_marker()
    winner, loser, result = contradiction_turn(project_scope, owner, marker)
    block = result["packet"]["relations"][0]
    assert block["text"] == winner.text and block["contradicted"]["memory_id"] == loser.pk
    assert f"{winner.text} (contradicts: {loser.text})" in result["text"]  # rendered as before

    memory_forget(memory_id=loser.pk, actor=owner, reason="user asked", hard=True)
    redact_turns([loser.pk])
    turn = Turn.objects.get(pk=result["turn_id"])
    assert marker not in json.dumps(turn.packet) and marker not in turn.text
    assert turn.packet["relations"][0]["text"] == winner.text  # the winner's own text stays
    assert f"(contradicts: {REDACTED})" in turn.text


def test_an_old_one_string_contradiction_block_is_redacted_whole(project_scope, owner):
    marker = unique_marker()
    winner, loser, result = contradiction_turn(project_scope, owner, marker)
    # The form stored before blocks carried their members: "W (contradicts: L)" in one string.
    packet = result["packet"]
    rel = packet["relations"][0]
    rel["text"] = f"{winner.text} (contradicts: {loser.text})"
    del rel["contradicted"]
    Turn.objects.filter(pk=result["turn_id"]).update(packet=packet)

    memory_forget(memory_id=loser.pk, actor=owner, reason="user asked", hard=True)
    redact_turns([loser.pk])
    turn = Turn.objects.get(pk=result["turn_id"])
    assert marker not in json.dumps(turn.packet) and marker not in turn.text
    assert turns_still_holding_purged() == []


def test_turn_read_masks_a_hard_forgotten_loser_before_the_worker_has_redacted(
    project_scope, owner, reviewer
):
    marker = unique_marker()
    winner, loser, result = contradiction_turn(project_scope, owner, marker)
    memory_forget(memory_id=loser.pk, actor=owner, reason="user asked", hard=True)  # no worker runs here
    assert marker in json.dumps(Turn.objects.get(pk=result["turn_id"]).packet)
    for principal in (owner, reviewer):
        body = token_client(principal).get(f"/api/v1/turns/{result['turn_id']}").content.decode()
        assert marker not in body and winner.text in body


def promotable(scope, text, sessions=3):
    episodes, candidates = [], []
    for i in range(sessions):
        episodes.append(
            memory_record(
                item=MemoryInput(
                    scope=scope,
                    kind="episodic",
                    source_kind="user",
                    session=f"s{i}",
                    text=f"User said it in session {i}",
                ),
                actor=None,
            )
        )
        candidates.append(
            memory_record(
                item=MemoryInput(
                    scope=scope,
                    kind="preference",
                    source_kind="user",
                    session=f"s{i}",
                    status="candidate",
                    text=text,
                    meta={"episode_ids": [episodes[-1].pk]},
                ),
                actor=None,
            )
        )
    return episodes, candidates


def test_a_forgotten_text_said_again_is_proposed_like_any_other(project_scope, owner):
    """Suppression is by row: skipping every candidate of a forgotten text told an agent (three sessions of a
    guess, then the scan or a promotion request) which text had been forgotten."""
    text = f"I prefer the {unique_marker()} template"
    _, old = promotable(project_scope, text)
    [proposal] = promotion_scan(scope=project_scope)
    for ended in (proposal, *old):  # the proposal and, as a person would, the candidates it was made of
        memory_forget(memory_id=ended.pk, actor=owner, reason="user asked", hard=True)

    episodes, said_again = promotable(project_scope, text)
    asked = promotion_propose(memory_id=said_again[0].pk, episode_ids=[e.pk for e in episodes], actor=None)
    assert asked.status == Status.PROPOSED
    assert set(asked.meta["promotion"]["candidates"]) == {c.pk for c in said_again}  # repeats merge into one
    assert not {c.pk for c in old} & {c.pk for c in said_again}


def test_promotion_scan_never_re_proposes_a_hard_forgotten_proposal(project_scope, owner):
    marker = unique_marker()
    text = f"I prefer the {marker} template"
    episodes, candidates = promotable(project_scope, text)
    [proposal] = promotion_scan(scope=project_scope)
    assert proposal.text == text
    memory_forget(memory_id=proposal.pk, actor=owner, reason="user asked", hard=True)

    assert promotion_scan(scope=project_scope) == []
    with pytest.raises(PromotionForgotten):
        promotion_propose(memory_id=candidates[0].pk, episode_ids=[e.pk for e in episodes], actor=None)
    rewritten = Memory.objects.filter(content_hash=content_hash(text)).exclude(status=Status.CANDIDATE)
    assert list(rewritten.values_list("pk", flat=True)) == [proposal.pk]
    # A person writing it again is the way back (and it is audited).
    again = remember(project_scope, text, kind="preference", status="proposed")
    assert AuditEvent.objects.filter(target_id=str(again.pk), action="memory.record").exists()


def test_extraction_extracts_a_sentence_forgotten_in_the_scope_like_any_other(project_scope, owner):
    marker = unique_marker()
    sentence = f"From now on always put {marker} in the footer."
    first = event_ingest(
        scope=project_scope,
        session="s1",
        at=None,
        actor=None,
        turns=[{"role": "user", "content": sentence, "ref": "t1"}],
    )
    [candidate] = [m for m in first if m.kind != Kind.EPISODIC]  # a standing instruction: proposed
    memory_forget(memory_id=candidate.pk, actor=owner, reason="user asked", hard=True)

    again = event_ingest(
        scope=project_scope,
        session="s2",
        at=None,
        actor=None,
        turns=[{"role": "user", "content": f"{sentence} I prefer short slides.", "ref": "t2"}],
    )
    extracted = [m for m in again if m.kind != Kind.EPISODIC]
    # Said again, the sentence is a new statement, extracted like any other (skipping it told the poster
    # which of its guesses had been forgotten); the forgotten memory stays forgotten.
    assert [m.text for m in extracted] == [sentence, "I prefer short slides."]
    assert extracted[0].pk != candidate.pk and extracted[0].status == candidate.status
    assert Memory.objects.get(pk=candidate.pk).status == Status.FORGOTTEN


def test_tombstone_hash_is_keyed_so_it_cannot_confirm_a_guessed_pin(project_scope, owner):
    pin = "4711"
    secret = remember(project_scope, pin)
    memory_forget(memory_id=secret.pk, actor=owner, reason="user asked", hard=True)
    tomb = Memory.objects.get(pk=secret.pk)
    guesses = {hashlib.sha256(f"{n:04d}".encode()).hexdigest() for n in range(10_000)}
    assert tomb.text == "" and tomb.content_hash not in guesses
    events = [
        json.dumps(e.data) for e in AuditEvent.objects.filter(target_type="memory", target_id=str(secret.pk))
    ]
    assert len(events) == 2 and not any(g in e for e in events for g in guesses)
    assert tomb.content_hash == content_hash(pin)  # keyed, still the same for the same text (dedup)


def server_log() -> str:
    """What the embedded PostgreSQL has written to its log (its stderr, wherever that points)."""
    pid = embedded.postgres_pid()
    assert pid is not None, "these tests run against the embedded PostgreSQL"
    return Path(f"/proc/{pid}/fd/2").read_text(errors="replace")


def test_server_log_holds_no_text_of_a_failed_write_on_the_409_path(project_scope, owner):
    marker = unique_marker()
    remember(project_scope, "The door PIN is 0000", key="door_pin", kind="convention")
    with pytest.raises(ActiveKeyExists):
        remember(project_scope, f"The door PIN is {marker}", key="door_pin", kind="convention", revision=2)
    response = token_client(owner).post(
        "/api/v1/memories",
        {
            "scope": project_scope.path,
            "kind": "convention",
            "key": "door_pin",
            "text": f"PIN {marker} again",
            "source": {"kind": "user"},
            "status": "active",
            "revision": 2,
        },
        format="json",
    )
    assert response.status_code == 409
    log = server_log()
    assert "memory_one_active_per_key" in log  # the error itself is still logged
    assert marker not in log  # but not the statement, whose literals are the text
    with connection.cursor() as cur:
        cur.execute(
            "SELECT current_setting('log_min_error_statement'),"
            " current_setting('log_parameter_max_length_on_error'), current_setting('log_parameter_max_length'),"
            " current_setting('log_error_verbosity')"
        )
        assert cur.fetchone() == ("panic", "0", "0", "terse")


def test_a_query_repeating_a_hard_forgotten_text_is_stored_redacted(
    project_scope, other_workspace_scope, owner
):
    """The forget removed the text; a later context request that sends it again must not store it back in
    the turn log (found by bench_load's data checks). Only an exact repeat in the same workspace counts:
    another workspace's forget says nothing here, and would be an oracle if it did."""
    marker = unique_marker()
    text = f"My locker code is {marker}"
    secret = remember(project_scope, text)
    memory_forget(memory_id=secret.pk, actor=owner, reason="user asked", hard=True)

    result = assemble_context(principal=owner, scope=project_scope, query=text, budget_tokens=400)
    turn = Turn.objects.get(pk=result["turn_id"])
    assert turn.query == REDACTED and turn.request["query"] == REDACTED
    assert (
        marker not in json.dumps(turn.request)
        and marker not in json.dumps(turn.packet)
        and marker not in turn.text
    )

    # A query that is not an exact repeat is stored as sent.
    other = assemble_context(principal=owner, scope=project_scope, query=f"{text}?", budget_tokens=400)
    assert Turn.objects.get(pk=other["turn_id"]).query == f"{text}?"


def test_a_forget_in_another_workspace_does_not_redact_this_workspaces_queries(
    project_scope, other_workspace_scope, owner
):
    from governance.models import Role
    from governance.services.principal import grant_add

    grant_add(principal=owner, scope=other_workspace_scope, role=Role.OWNER, actor=None)
    text = f"The shared phrase {unique_marker()}"
    elsewhere = remember(other_workspace_scope, text)
    memory_forget(memory_id=elsewhere.pk, actor=owner, reason="user asked", hard=True)

    result = assemble_context(principal=owner, scope=project_scope, query=text, budget_tokens=400)
    assert Turn.objects.get(pk=result["turn_id"]).query == text
