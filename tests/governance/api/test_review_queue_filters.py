"""GET /api/v1/review takes the dashboard queue's filters and keyset cursor, and says where each item came
from (proposer, their reason, the turn it was seen in)."""

from __future__ import annotations

from governance.models import Turn
from governance.selectors.review import BAD_AGE
from governance.services.memory import MemoryInput, memory_propose, memory_record
from tests.conftest import token_client


def _propose(scope, text, *, kind="preference", actor=None, reason="", session=""):
    memory = memory_record(
        item=MemoryInput(
            scope=scope, kind=kind, text=text, source_kind="user", status="candidate", session=session
        ),
        actor=actor,
    )
    memory_propose(memory_id=memory.pk, actor=actor, reason=reason)
    return memory


def test_review_api_filters_pages_and_shows_provenance(project_scope, reviewer, agent):
    turn = Turn.objects.create(scope=project_scope, principal=agent, session="s1", query="what font")
    by_agent = _propose(
        project_scope,
        "Use Inter for headings",
        kind="convention",
        actor=agent,
        reason="the user said so",
        session="s1",
    )
    others = [_propose(project_scope, f"Likes option {i}") for i in range(3)]
    api = token_client(reviewer)
    [item] = api.get("/api/v1/review", {"kind": "convention"}).json()
    assert (
        item["memory"]["id"],
        item["proposer"],
        item["proposer_kind"],
        item["proposer_reason"],
        item["origin_turn_id"],
    ) == (by_agent.pk, "slides-agent", "agent", "the user said so", turn.pk)
    assert [i["memory"]["id"] for i in api.get("/api/v1/review", {"proposer": "slides-agent"}).json()] == [
        by_agent.pk
    ]
    everything = api.get("/api/v1/review").json()
    after_first = api.get("/api/v1/review", {"after": everything[0]["cursor"]}).json()
    assert [i["memory"]["id"] for i in after_first] == [m.pk for m in others]
    newest = api.get("/api/v1/review", {"sort": "newest"}).json()
    assert newest[0]["memory"]["id"] == others[-1].pk


def test_review_api_bad_filter_is_a_400_with_the_field(project_scope, reviewer):
    response = token_client(reviewer).get("/api/v1/review", {"older": "a while"})
    assert response.status_code == 400
    assert response.json()["message"] == BAD_AGE and response.json()["field"] == "older"


def test_review_api_bad_or_edited_cursor_is_a_400_with_the_field(project_scope, reviewer):
    from governance.runtime import cursor as codec
    from governance.selectors.review import BAD_CURSOR

    memory = _propose(project_scope, "Likes option A")
    api = token_client(reviewer)
    [item] = api.get("/api/v1/review").json()
    good = item["cursor"]
    edited = good.replace(good[2], "A" if good[2] != "A" else "B", 1)
    for bad in (
        "not-a-cursor",
        f"{memory.created_at.isoformat()}~{memory.pk}",
        edited,
        codec.encode("audit", [memory.pk]),  # a cursor of another list
        codec.encode("review", ["2026-13-01T00:00:00+00:00", memory.pk]),  # no such day
        codec.encode("review", [memory.created_at.isoformat(), -1]),
    ):
        response = api.get("/api/v1/review", {"after": bad})
        assert response.status_code == 400, bad
        assert response.json()["message"] == BAD_CURSOR and response.json()["field"] == "after"
