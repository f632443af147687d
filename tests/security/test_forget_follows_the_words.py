"""Forgetting follows the words, not only the row (issue 50, high). The main way text enters the service is
an agent relaying a user's turn; the extractor stores each rule-like sentence of it as a candidate
`derived_from` the turn's episode. Forgetting that candidate — soft or hard, in English or Chinese — must
forget its sentence wherever it went: the episode (its text, keyword terms, vector and passages), the
stored turns that quoted the episode inside a longer string, the summary, a relation's reason, the
export; and no packet may quote the forgotten words to say they were forgotten. What a forget rewrites is
bounded by the forgetting person's subtree: a sibling scope's stored turns are not touched."""

from __future__ import annotations

import json

import pytest

from governance.models import Memory, Passage, Relation, RelationKind, Role, Status, Turn
from governance.services.memory import memory_forget
from governance.services.principal import grant_add, user_ensure
from governance.services.relation import relation_add
from governance.services.summary import summary_build
from tests.conftest import token_client
from tests.governance.propagation.helpers import postgres_hits, unique_marker

# One user turn of three sentences; the middle one is rule-like and carries the secret ({m}).
TURNS = {
    "en": (
        "Thanks for the draft. Always use the badge PIN {m} for the east entrance. The deck looks fine otherwise.",
        "Which badge PIN do we use for the east entrance?",
        ("Thanks for the draft.", "The deck looks fine otherwise."),
    ),
    "zh": (
        "谢谢你的初稿。以后东门一律刷门禁密码{m}。其他部分看起来不错。",
        "东门的门禁密码是多少？",
        ("谢谢你的初稿。", "其他部分看起来不错。"),
    ),
}
CASES = [
    pytest.param(lang, hard, id=f"{lang}-{'hard' if hard else 'soft'}")
    for lang in ("en", "zh")
    for hard in (True, False)
]


def _relay(client, scope: str, session: str, content: str, ref: str) -> None:
    answer = client.post(
        "/api/v1/events",
        {"scope": scope, "session": session, "turns": [{"role": "user", "content": content, "ref": ref}]},
        format="json",
    )
    assert answer.status_code == 201, answer.content


def _context(client, scope: str, query: str, session: str) -> dict:
    answer = client.post(
        "/api/v1/context", {"scope": scope, "query": query, "session": session}, format="json"
    )
    assert answer.status_code == 200, answer.content
    return answer.json()


def _said(project_scope, agent, lang: str):
    marker = unique_marker()
    content, question, kept = TURNS[lang]
    _relay(token_client(agent), "acme/slides", "s-said", content.format(m=marker), "t1")
    episode = Memory.objects.get(scope=project_scope, kind="episodic", text__contains=marker)
    [candidate] = Memory.objects.filter(
        scope=project_scope, meta__has_key="extracted_by", text__contains=marker
    )
    assert Relation.objects.filter(source=candidate, target=episode, kind=RelationKind.DERIVED_FROM).exists()
    return marker, question, kept, episode, candidate


@pytest.mark.parametrize("lang,hard", CASES)
def test_forgetting_an_extracted_sentence_forgets_it_in_its_turn_and_everywhere_it_went(
    project_scope, owner, agent, lang, hard
):
    marker, question, kept, episode, candidate = _said(project_scope, agent, lang)
    agent_client, owner_client = token_client(agent), token_client(owner)
    # Copies made before the forget: a stored packet quoting the turn (its own session's recent slot),
    # the scope's summary, and a person's link whose reason quotes the sentence.
    before = _context(agent_client, "acme/slides", question, "s-said")
    assert marker in json.dumps(before)
    summary_build(scope=project_scope, actor=owner)
    relation_add(
        source_id=candidate.pk,
        target_id=episode.pk,
        kind="supports",
        reason=f"the user said: {candidate.text}",
        actor=owner,
    )

    answer = owner_client.post(
        f"/api/v1/memories/{candidate.pk}/forget",
        {"mode": "hard" if hard else "soft", "reason": "the user asked"},
        format="json",
    )
    assert answer.status_code == 202, answer.content
    reached = {(place["place"], place.get("memory_id")): place for place in answer.json()["reached"]}
    assert reached[("memory", episode.pk)]["state"] == "rewritten", reached
    assert reached[("turns", None)]["count"] >= 1 and reached[("relations", None)]["count"] >= 1

    # The episode: its other sentences are kept, the forgotten one is gone from its text, keyword terms,
    # vector and passages (embedded again by the worker from the new text).
    episode.refresh_from_db()
    assert marker not in episode.text and all(sentence in episode.text for sentence in kept)
    assert marker.lower() not in episode.lexical.lower()
    assert episode.embedding is None and not Passage.objects.filter(memory=episode).exists()
    for client in (agent_client, owner_client):
        shown = client.get(f"/api/v1/memories/{episode.pk}").json()
        assert shown["text"] == episode.text

    # The stored turn from before the forget, as read and as stored.
    stored = agent_client.get(f"/api/v1/turns/{before['turn_id']}").json()
    assert marker not in json.dumps(stored)
    row = Turn.objects.get(pk=before["turn_id"])
    assert marker not in json.dumps([row.packet, row.trace, row.request, row.query, row.text])

    # A new packet, for any agent and session: nothing of the sentence, and no line that quotes the turn
    # to say what it asked for was forgotten.
    after = _context(agent_client, "acme/slides", question, "s-later")
    assert marker not in json.dumps(after)
    assert not [line for line in after["text"].splitlines() if "forgotten" in line and '"' in line]

    summary = owner_client.get("/api/v1/summary", {"scope": "acme/slides"})
    assert summary.status_code == 200 and marker not in summary.content.decode()
    exported = owner_client.get(f"/api/v1/scopes/{project_scope.pk}/export")
    assert exported.status_code == 200
    lines = [json.loads(line) for line in b"".join(exported.streaming_content).decode().splitlines()]
    # The audit log keeps what people typed as they typed it (append-only, hash-chained): the reason
    # above quotes the sentence on purpose; every other line of the export is free of it.
    assert [line["type"] for line in lines if marker in json.dumps(line)] in ([], ["audit"])
    assert not Relation.objects.filter(reason__contains=marker).exists()

    # Only the forgotten row itself keeps the words, and only after a soft forget (for owners).
    holding = set(Memory.objects.filter(text__contains=marker).values_list("pk", flat=True))
    assert holding == (set() if hard else {candidate.pk})
    if hard:
        assert postgres_hits(marker) == ["governance_auditevent.reason"]


def test_forgetting_a_turn_forgets_the_undecided_candidates_read_from_it(project_scope, owner, agent):
    """The words went the other way too: the candidates extracted from a turn are made of its sentences.
    Forgetting the turn forgets those still awaiting a person; one a person confirmed stays in force (it is
    their decision) and the report names it."""
    marker, _, _, episode, candidate = _said(project_scope, agent, "en")
    answer = token_client(owner).post(
        f"/api/v1/memories/{episode.pk}/forget", {"mode": "hard", "reason": "the user asked"}, format="json"
    )
    assert answer.status_code == 202, answer.content
    candidate.refresh_from_db()
    assert candidate.status == Status.FORGOTTEN and candidate.purged_at is not None
    assert {(p["place"], p.get("memory_id"), p["state"]) for p in answer.json()["reached"]} >= {
        ("memory", candidate.pk, "forgotten")
    }
    assert postgres_hits(marker) == []


def test_a_sub_scope_owners_forget_rewrites_only_its_own_subtree(
    project_scope, sibling_scope, owner, agent, remember
):
    """A forget rewrites what could have seen the memory — its scope and those under it — and never a
    sibling scope's stored turns, which the forgetting person may not even read."""
    slides_owner = user_ensure(username="sol", password="pw-sol", actor=None)
    grant_add(principal=slides_owner, scope=project_scope, role=Role.OWNER, actor=None)
    payments_agent = user_ensure(username="pay-agent", password="pw-pa", actor=None)
    grant_add(principal=payments_agent, scope=sibling_scope, role=Role.AGENT, actor=None)
    text = f"The vault code is {unique_marker()} for the night shift."
    secret = remember(project_scope, text)
    sibling_turn = _context(token_client(payments_agent), "acme/payments", text, "s-pay")
    own_turn = _context(token_client(agent), "acme/slides", text, "s-own")

    memory_forget(memory_id=secret.pk, actor=slides_owner, reason="user asked", hard=True)
    assert Turn.objects.get(pk=sibling_turn["turn_id"]).query == text
    assert text not in json.dumps(Turn.objects.filter(pk=own_turn["turn_id"]).values().get(), default=str)


def test_after_a_purge_no_graph_draws_the_node_and_no_link_keeps_its_words(project_scope, owner, remember):
    """A link's reason written about a purged memory is blanked on both ends; neither the scope's graph nor
    the neighbour's draws the purged node or its edge (the link itself stays for the chain)."""
    from django.test import Client
    from django.urls import reverse

    marker = unique_marker()
    kept = remember(project_scope, "Slides use the 16:9 format.")
    purged = remember(project_scope, f"The room code is {marker}.")
    relation_add(
        source_id=purged.pk, target_id=kept.pk, kind="supports", reason=f"code {marker} noted", actor=owner
    )
    memory_forget(memory_id=purged.pk, actor=owner, reason="user asked", hard=True)

    assert Relation.objects.filter(source=purged, target=kept).get().reason == "[forgotten]"
    client = Client()
    assert client.login(username=owner.name, password="pw-olivia")
    for params in ({"scope": "acme/slides"}, {"memory": kept.pk}):
        data = client.get(reverse("dashboard:graph-data"), params).json()
        assert purged.pk not in {n["id"] for n in data["nodes"]}, params
        assert marker not in json.dumps(data)
    page = client.get(reverse("dashboard:memory", args=[kept.pk]))
    assert page.status_code == 200 and marker not in page.content.decode()
