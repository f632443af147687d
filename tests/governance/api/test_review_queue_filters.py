"""GET /api/v1/review takes the dashboard queue's filters and keyset cursor, and says where each item came
from (proposer, their reason, the turn it was seen in)."""

from __future__ import annotations

from governance.models import Turn
from governance.selectors.review import BAD_AGE
from governance.services.memory import MemoryInput, memory_propose, memory_record
from tests.conftest import token_client


def _propose(scope, text, *, kind="preference", actor=None, reason="", session=""):
    memory = memory_record(item=MemoryInput(scope=scope, kind=kind, text=text, source_kind="user",
                                            status="candidate", session=session), actor=actor)
    memory_propose(memory_id=memory.pk, actor=actor, reason=reason)
    return memory


def test_review_api_filters_pages_and_shows_provenance(project_scope, reviewer, agent):
    turn = Turn.objects.create(scope=project_scope, principal=agent, session="s1", query="what font")
    by_agent = _propose(project_scope, "Use Inter for headings", kind="convention", actor=agent,
                        reason="the user said so", session="s1")
    others = [_propose(project_scope, f"Likes option {i}") for i in range(3)]
    api = token_client(reviewer)
    [item] = api.get("/api/v1/review", {"kind": "convention"}).json()
    assert (item["memory"]["id"], item["proposer"], item["proposer_kind"], item["proposer_reason"],
            item["origin_turn_id"]) == (by_agent.pk, "slides-agent", "agent", "the user said so", turn.pk)
    assert [i["memory"]["id"] for i in api.get("/api/v1/review", {"proposer": "slides-agent"}).json()] == [by_agent.pk]
    everything = api.get("/api/v1/review").json()
    after_first = api.get("/api/v1/review", {"after": everything[0]["cursor"]}).json()
    assert [i["memory"]["id"] for i in after_first] == [m.pk for m in others]
    newest = api.get("/api/v1/review", {"sort": "newest"}).json()
    assert newest[0]["memory"]["id"] == others[-1].pk


def test_review_api_bad_filter_is_a_400_with_the_field(project_scope, reviewer):
    response = token_client(reviewer).get("/api/v1/review", {"older": "a while"})
    assert response.status_code == 400
    assert response.json()["message"] == BAD_AGE and response.json()["field"] == "older"
