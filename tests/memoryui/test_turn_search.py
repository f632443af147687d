"""Finding turns (words of the query, agent, session, dates, a memory used or skipped, strategy; keyset
pages; forgotten text never found or shown) and asking "why not this memory?" of one; a real trace whose
counts add up from stage to stage."""

from __future__ import annotations

from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from governance.models import Turn, TurnMemory
from governance.recall import assemble_context
from governance.redaction.masking import FORGOTTEN_TEXT
from governance.services.memory import memory_forget
from memoryui.views.trace import flat, funnel
from tests.memoryui.conftest import remember


def _turn(scope, query, *, principal=None, session="s1", strategy="full", cite=(), packet=None, **kw):
    turn = Turn.objects.create(
        scope=scope,
        principal=principal,
        session=session,
        query=query,
        strategy=strategy,
        packet=packet or {},
        **kw,
    )
    TurnMemory.objects.bulk_create(TurnMemory(turn=turn, memory_id=m, slot=s, included=i) for m, s, i in cite)
    return turn


def _found(client, **params):
    response = client.get(reverse("dashboard:turns"), params)
    assert response.status_code == 200, response.content
    return [t.pk for t in response.context["page_obj"]]


def test_turns_are_found_by_words_agent_session_dates_memory_and_strategy(
    reviewer_client, project_scope, history, agent
):
    pptx = _turn(
        project_scope,
        "which export format for the slides?",
        principal=agent,
        session="alpha",
        cite=[(history["second"].pk, "constraints", True), (history["proposal"].pk, "preferences", False)],
    )
    deck = _turn(project_scope, "make the deck shorter please", session="beta", strategy="vector_only")
    old = _turn(project_scope, "an export from last year", session="beta")
    Turn.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=400))
    assert _found(reviewer_client, q="export") == [old.pk, pptx.pk]  # in the order stored, newest first
    assert _found(reviewer_client, q="deck shorter") == [deck.pk]
    assert _found(reviewer_client, agent="slides-agent") == [pptx.pk]
    assert _found(reviewer_client, session="beta") == [old.pk, deck.pk]
    assert _found(reviewer_client, strategy="vector_only") == [deck.pk]
    day = (timezone.now() - timedelta(days=1)).date().isoformat()
    assert _found(reviewer_client, q="export", **{"from": day}) == [pptx.pk]
    assert _found(reviewer_client, memory=f"#{history['second'].pk}", used="used") == [pptx.pk]
    assert _found(reviewer_client, memory=history["proposal"].pk, used="skipped") == [pptx.pk]
    assert _found(reviewer_client, memory=history["proposal"].pk, used="used") == []


def test_turns_of_other_scopes_are_never_found(
    reviewer_client, outsider_client, sibling_scope, project_scope
):
    _turn(sibling_scope, "payments export secret")
    mine = _turn(project_scope, "export the slides")
    assert _found(reviewer_client, q="export") == [mine.pk]
    assert _found(outsider_client, q="export") == []


def test_a_forgotten_text_is_neither_found_nor_shown(owner_client, project_scope):
    secret = remember(project_scope, "the door code is 4711 zebra")
    turn = _turn(
        project_scope,
        "the door code is 4711 zebra",
        cite=[(secret.pk, "evidence", True)],
        packet={"evidence": [{"memory_id": secret.pk, "text": "the door code is 4711 zebra"}]},
    )
    assert _found(owner_client, q="zebra") == [turn.pk]
    memory_forget(memory_id=secret.pk, reason="a secret", actor=None)
    assert _found(owner_client, q="zebra") == []
    listing = owner_client.get(reverse("dashboard:turns"))
    # The query that was the text is rewritten in the forget's own transaction ("[forgotten]"); a read
    # would mask it by the memory's status otherwise (FORGOTTEN_TEXT).
    assert b"zebra" not in listing.content
    assert b"[forgotten]" in listing.content or FORGOTTEN_TEXT.encode() in listing.content
    assert b"zebra" not in owner_client.get(reverse("dashboard:turn", args=[turn.pk])).content


def test_keyset_pages_walk_every_turn_once_both_ways(reviewer_client, project_scope):
    made = [_turn(project_scope, f"question {i}").pk for i in range(55)]
    first = reviewer_client.get(reverse("dashboard:turns"))
    seen = [t.pk for t in first.context["page_obj"]]
    nxt = first.context["links"]["next"]
    second = reviewer_client.get(reverse("dashboard:turns") + nxt)
    seen += [t.pk for t in second.context["page_obj"]]
    assert seen == sorted(made, reverse=True) and "next" not in second.context["links"]
    back = reviewer_client.get(reverse("dashboard:turns") + second.context["links"]["prev"])
    assert [t.pk for t in back.context["page_obj"]] == seen[: len(back.context["page_obj"].object_list)]


def test_bad_filters_are_a_400_with_the_field(reviewer_client):
    for params, field in (
        ({"from": "yesterday"}, b"from"),
        ({"memory": "abc"}, b"memory"),
        ({"used": "maybe"}, b"used"),
        ({"before": "-3"}, b"before"),
        ({"to": "9999-12-31"}, b"to"),
        ({"after": "12"}, b"after"),
        ({"from": "2026-02-02", "to": "2026-01-01"}, b"from"),
    ):
        response = reviewer_client.get(reverse("dashboard:turns"), params)
        assert (
            response.status_code == 400 and b"invalid_input" in response.content and field in response.content
        ), params


def _why(client, turn, **params):
    return client.get(reverse("dashboard:turn-why-not", args=[turn.pk]), params, HTTP_HX_REQUEST="true")


def test_why_not_answers_from_the_stored_packet(reviewer_client, project_scope, history):
    turn = _turn(
        project_scope,
        "what format?",
        packet={
            "constraints": [
                {"memory_id": history["second"].pk, "text": "Export slides as PPTX", "reason": "in force"}
            ],
            "negative": [
                {
                    "memory_id": history["first"].pk,
                    "text": "Export slides as PDF",
                    "reason": "superseded by r2",
                }
            ],
            "skipped": [
                {
                    "memory_id": history["episode"].pk,
                    "text": "User: make the deck shorter",
                    "stage": "rank",
                    "slot": "evidence",
                    "reason": "cold: activation 0.010 is below the threshold 0.05",
                }
            ],
        },
    )
    answer = _why(reviewer_client, turn, memory=history["episode"].pk).context["answer"]
    assert (answer.verdict, answer.stage, answer.source) == ("dropped at rank", "rank", "stored")
    assert "cold" in answer.reason
    assert _why(reviewer_client, turn, memory=history["first"].pk).context["answer"].verdict == "out of force"
    used = _why(reviewer_client, turn, memory=history["second"].pk)
    assert used.context["answer"].verdict == "used" and b"It was used" in used.content
    assert (
        f'href="/memories/{history["episode"].pk}/"'.encode()
        in _why(reviewer_client, turn, memory=history["episode"].pk).content
    )


def test_why_not_replays_the_turn_for_a_memory_it_does_not_name(reviewer_client, project_scope, history):
    unrelated = remember(project_scope, "Lunch is served at noon in the cafeteria")
    asked = assemble_context(
        principal=None, scope=project_scope, query="which export format?", budget_tokens=800
    )
    turn = Turn.objects.get(pk=asked["turn_id"])
    answer = _why(reviewer_client, turn, memory=unrelated.pk).context["answer"]
    assert answer.source == "replay" and answer.verdict in (
        "not matched by any path",
        "cut by fusion",
        "dropped at rank",
        "not placed",
    ), answer
    later = remember(project_scope, "Written after the turn", kind="episodic", occurred_at=timezone.now())
    answer = _why(reviewer_client, turn, memory=later.pk).context["answer"]
    assert (answer.verdict, answer.stage) == (
        "not eligible",
        "eligible",
    ) and "after the turn" in answer.reason
    retired_id = history["proposal"].pk
    pick = _why(reviewer_client, turn, q="dark themes")
    assert retired_id in [m.pk for m in pick.context["choices"]]
    assert _why(reviewer_client, turn, memory=history["secret"].pk).status_code == 404  # another scope's


def test_why_not_never_says_used_for_a_memory_the_turn_did_not_use(reviewer_client, project_scope):
    """A memory without its vector when the turn was asked (the embedding queue had it) is found by meaning
    once embedded, so a replay now would use it; the answer says the search has changed since, not "used"."""
    from governance.models import Memory
    from governance.propagation.embedding import embed_memories

    waiting = remember(project_scope, "Quarterly decks are exported for the board")
    asked = assemble_context(
        principal=None, scope=project_scope, query="which slides format do we send?", budget_tokens=800
    )
    turn = Turn.objects.get(pk=asked["turn_id"])
    assert waiting.pk not in {
        b.get("memory_id") for bs in turn.packet.values() if isinstance(bs, list) for b in bs
    }
    embed_memories(list(Memory.objects.values_list("pk", flat=True)))
    answer = _why(reviewer_client, turn, memory=waiting.pk).context["answer"]
    assert answer.verdict != "used" and answer.stage == "search", answer
    assert "changed since the turn" in answer.reason


def test_why_not_is_a_404_for_turns_and_memories_outside_the_readers_scopes(
    outsider_client, client, project_scope, history
):
    turn = _turn(project_scope, "what format?")
    assert _why(outsider_client, turn, memory=history["second"].pk).status_code == 404
    assert client.get(reverse("dashboard:turn-why-not", args=[turn.pk])).status_code == 302  # sign in first


def test_a_real_trace_adds_up_from_stage_to_stage(project_scope, history):
    for i in range(12):
        remember(project_scope, f"Slides export note {i}: use the corporate template", kind="semantic")
    result = assemble_context(
        principal=None, scope=project_scope, query="how do we export the slides?", budget_tokens=300
    )
    rows = flat(funnel(result["trace"], result["packet"].get("skipped", [])))
    fuse, rank, pack = rows["fuse"], rows["rank"], rows["pack"]
    assert fuse["in"] == sum(n for _, n in fuse["from"])
    after_fuse = rows["adjudicate"]["out"] if "adjudicate" in rows else fuse["out"]
    assert rank["in"] == after_fuse and dict(pack["from"])["rank"] == rank["out"]
    assert rows["eligible"]["summary"].endswith("scopes searched")
    for name in ("fuse", "adjudicate", "rank", "pack", "keyed"):
        r = rows.get(name)
        if r:
            dropped = len(r["dropped"]) + sum(
                c["n"] for c in r["counted"] if "without a recorded" not in c["why"]
            )
            assert r["in"] + r["added"] - r["out"] == dropped, (name, r)
