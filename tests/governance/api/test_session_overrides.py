"""A user's correction in a conversation is in force for that session at once (issue 24), through the
public API only: the rule it replaces is set aside for that session, every other session keeps the rule
and sees the pending proposal, a reviewer's confirmation makes it the rule for everyone and a rejection
ends the override at the session's next turn, saying so."""

from __future__ import annotations

import pytest

from governance.models import Memory
from governance.propagation import embed_memories

RULE = "Export the Q3 deck as PDF."
CORRECTION = "Actually, change it: export the Q3 deck as PPTX instead of PDF from now on."


def _rule(client, text=RULE, key="export_format", **extra) -> dict:
    made = client.post("/api/v1/memories", {
        "scope": "acme/slides", "kind": "convention", "key": key, "text": text, "status": "active",
        "source": {"kind": "user", "ref": "kickoff"}, **extra,
    }, format="json")
    assert made.status_code == 201, made.json()
    assert made.json()["status"] == "active"
    return made.json()


def _say(client, session: str, text: str = CORRECTION, ref: str = "t5") -> list[dict]:
    event = client.post("/api/v1/events", {
        "scope": "acme/slides", "session": session,
        "turns": [{"role": "user", "content": text, "ref": ref},
                  {"role": "assistant", "content": "Understood, PPTX from now on.", "ref": f"{ref}-a"}],
    }, format="json")
    assert event.status_code == 201, event.json()
    embed_memories(list(Memory.objects.values_list("pk", flat=True)))
    return event.json()["created"]


def _context(client, session: str, query: str = "export the Q3 deck now") -> dict:
    response = client.post("/api/v1/context", {"scope": "acme/slides", "query": query, "budget_tokens": 1500,
                                               "session": session}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def _proposal(created: list[dict]) -> dict:
    found = [m for m in created if m["kind"] != "episodic"]
    assert len(found) == 1, created
    return found[0]


def _constraint_ids(body: dict) -> list[int]:
    return [b["memory_id"] for b in body["packet"]["constraints"]]


@pytest.fixture
def scenario(client_for, owner, agent, project_scope):
    owner_client = client_for(owner)
    rule = _rule(owner_client)
    agent_client = client_for(agent)
    proposal = _proposal(_say(agent_client, "s1"))
    return owner_client, agent_client, rule, proposal


def test_the_users_correction_is_in_force_for_its_session_and_sets_the_rule_aside(scenario):
    _owner, agent_client, rule, proposal = scenario
    assert proposal["key"] == "export_format" and proposal["status"] == "proposed"
    body = _context(agent_client, "s1")
    packet = body["packet"]
    assert _constraint_ids(body) == [proposal["id"]]
    pinned = packet["constraints"][0]
    assert pinned["session_override"]["session"] == "s1"
    assert pinned["session_override"]["turn"] == "t5"
    assert pinned["session_override"]["replaces"]["memory_id"] == rule["id"]
    assert "in force for this session" in pinned["reason"]
    negative = [b for b in packet["negative"] if b["memory_id"] == rule["id"]]
    assert len(negative) == 1 and negative[0]["set_aside"]["by"]["memory_id"] == proposal["id"]
    # The rule is nowhere else: not pinned, not evidence; the correction is not "contradicted".
    usable = [b["memory_id"] for slot in ("constraints", "evidence", "preferences", "recent") for b in packet[slot]]
    assert rule["id"] not in usable
    assert "CONTRADICTED" not in body["text"]
    text = body["text"]
    assert "PPTX" in text.split("## Constraints in force")[1].split("##")[0]
    assert "in force for this session (the user, turn t5), awaiting confirmation" in text
    assert f"NO LONGER IN FORCE for this session: {RULE}" in text


def test_another_session_keeps_the_rule_and_sees_the_pending_proposal(scenario):
    _owner, agent_client, rule, proposal = scenario
    body = _context(agent_client, "s2")
    assert _constraint_ids(body) == [rule["id"]]
    pinned = body["packet"]["constraints"][0]
    assert pinned["pending_changes"][0]["memory_id"] == proposal["id"]
    assert "session_override" not in pinned
    assert not [b for b in body["packet"]["negative"] if b["memory_id"] == rule["id"]]
    assert "a change awaits a reviewer" in body["text"]


def test_a_reviewers_confirmation_makes_it_the_next_revision_in_every_session(scenario, client_for, reviewer):
    _owner, agent_client, rule, proposal = scenario
    confirmed = client_for(reviewer).post(f"/api/v1/memories/{proposal['id']}/confirm", {"reason": "ok"},
                                          format="json")
    assert confirmed.status_code == 200, confirmed.json()
    for session in ("s1", "s2", "s3"):
        body = _context(agent_client, session)
        assert _constraint_ids(body) == [proposal["id"]], session
        pinned = body["packet"]["constraints"][0]
        assert (pinned["key"], pinned["revision"], pinned["status"]) == ("export_format", 2, "active")
        assert "session_override" not in pinned
        assert "[export_format r2]" in body["text"]


def test_a_rejection_ends_the_override_at_the_next_turn_and_the_packet_says_so(scenario, client_for, reviewer):
    _owner, agent_client, rule, proposal = scenario
    assert _constraint_ids(_context(agent_client, "s1")) == [proposal["id"]]
    rejected = client_for(reviewer).post(f"/api/v1/memories/{proposal['id']}/reject",
                                         {"reason": "the client contract says PDF"}, format="json")
    assert rejected.status_code == 200, rejected.json()
    body = _context(agent_client, "s1")
    assert _constraint_ids(body) == [rule["id"]]
    pinned = body["packet"]["constraints"][0]
    assert pinned["override_rejected"]["memory_id"] == proposal["id"]
    assert "was rejected by a reviewer" in body["text"]
    assert not [b for b in body["packet"]["negative"] if b["memory_id"] == rule["id"]]
