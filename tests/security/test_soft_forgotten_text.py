"""Issue 10, part 4: a soft-forgotten text (kept in the row for owners) is returned by no API read or
search, to any role: stored turns, the memory search's counts, review briefs and summaries mask it with the
one masking of governance.redaction.masking, the same the dashboard uses."""

from __future__ import annotations

import pytest

from governance.models import Memory, Status
from governance.recall.packet import assemble_context
from governance.redaction.masking import FORGOTTEN_TEXT
from governance.selectors.dashboard.memories import MemoryFilters, memory_queryset
from governance.services.memory import MemoryInput, memory_forget, memory_record, memory_supersede
from governance.services.memory.promotion import promotion_propose
from memoryui.views.turns import annotate
from tests.conftest import token_client
from tests.governance.propagation.helpers import unique_marker

pytestmark = pytest.mark.django_db


def remember(scope, text, **kw):
    kw.setdefault("kind", "convention")
    kw.setdefault("status", "active")
    return memory_record(item=MemoryInput(scope=scope, text=text, source_kind="user", **kw), actor=None)


def test_turn_read_masks_a_memory_soft_forgotten_since_the_turn_for_every_role(
    project_scope, owner, reviewer, curator, agent
):
    marker = unique_marker()
    secret = remember(project_scope, f"The door PIN is {marker}", key="door_pin")
    kept = remember(project_scope, "Slides use the company template", key="slide_template")
    result = assemble_context(principal=owner, scope=project_scope, query="door pin", budget_tokens=800)
    assert marker in result["text"]
    memory_forget(memory_id=secret.pk, actor=curator, reason="user asked", hard=False)
    assert marker in Memory.objects.get(pk=secret.pk).text  # soft: the row keeps it

    for principal in (owner, curator, reviewer, agent):
        response = token_client(principal).get(f"/api/v1/turns/{result['turn_id']}")
        assert response.status_code == 200
        assert marker not in response.content.decode()
        body = response.json()
        blocks = {b["memory_id"]: b for b in body["packet"]["constraints"]}
        assert blocks[secret.pk]["text"] == FORGOTTEN_TEXT
        assert blocks[kept.pk]["text"] == "Slides use the company template"
        assert FORGOTTEN_TEXT in body["text"]


def test_dashboard_and_api_mask_a_turn_with_the_same_function(project_scope, owner, curator):
    marker = unique_marker()
    secret = remember(project_scope, f"The door PIN is {marker}", key="door_pin")
    result = assemble_context(principal=owner, scope=project_scope, query="door pin", budget_tokens=800)
    memory_forget(memory_id=secret.pk, actor=curator, reason="user asked")
    dashboard = {b["memory_id"]: b["text"] for b in annotate(result["packet"])["constraints"]}
    api = {
        b["memory_id"]: b["text"]
        for b in token_client(owner).get(f"/api/v1/turns/{result['turn_id']}").json()["packet"]["constraints"]
    }
    assert dashboard == api and dashboard[secret.pk] == FORGOTTEN_TEXT


def test_search_never_matches_a_forgotten_memory_so_its_count_confirms_no_guess(
    project_scope, owner, curator
):
    marker = unique_marker()
    secret = remember(project_scope, f"The door PIN is {marker}", key="door_pin")
    memory_forget(memory_id=secret.pk, actor=curator, reason="user asked")
    client = token_client(owner)
    right = client.get("/api/v1/memories", {"status": "forgotten", "q": marker}).json()
    wrong = client.get("/api/v1/memories", {"status": "forgotten", "q": unique_marker()}).json()
    assert right["count"] == wrong["count"] == 0
    listed = client.get("/api/v1/memories", {"status": "forgotten"}).json()
    assert [m["id"] for m in listed["results"]] == [secret.pk] and marker not in str(listed)
    # The dashboard's search (full text over the row's terms) matches no forgotten row either.
    found = memory_queryset(owner, None, MemoryFilters(status=Status.FORGOTTEN, q=marker))
    assert found.count() == 0


def test_review_brief_masks_a_supporting_episode_forgotten_since(project_scope, owner, reviewer, curator):
    marker = unique_marker()
    episodes = [
        memory_record(
            item=MemoryInput(
                scope=project_scope,
                kind="episodic",
                source_kind="user",
                session=f"s{i}",
                text=f"User: my PIN is {marker}" if i == 0 else f"User: hello {i}",
            ),
            actor=None,
        )
        for i in range(3)
    ]
    candidate = remember(
        project_scope, "Always greet the client by name", status="candidate", kind="preference"
    )
    proposal = promotion_propose(memory_id=candidate.pk, episode_ids=[e.pk for e in episodes], actor=None)
    memory_forget(memory_id=episodes[0].pk, actor=curator, reason="user asked")

    for principal in (owner, reviewer):
        response = token_client(principal).get("/api/v1/review")
        assert response.status_code == 200
        assert marker not in response.content.decode()
        item = next(i for i in response.json() if i["memory"]["id"] == proposal.pk)
        briefs = {e["id"]: e for e in item["supporting_episodes"]}
        assert briefs[episodes[0].pk]["text"] == FORGOTTEN_TEXT
        assert briefs[episodes[1].pk]["text"] == "User: hello 1"


def test_summary_replaced_by_line_masks_a_soft_forgotten_successor(project_scope, owner, curator):
    marker = unique_marker()
    old = remember(project_scope, "The launch code name is Bluebird", kind="semantic", key="codename")
    new = memory_supersede(
        memory_id=old.pk,
        text=f"The launch code name is {marker}",
        reason="renamed",
        source_kind="user",
        actor=curator,
    )
    memory_forget(memory_id=new.pk, actor=curator, reason="user asked")
    response = token_client(owner).get("/api/v1/summary", {"scope": project_scope.path})
    assert response.status_code == 200
    assert marker not in response.content.decode()
    assert f"replaced by: {FORGOTTEN_TEXT}" in response.json()["text"]


def test_summary_built_before_the_forget_is_not_served_with_the_text(project_scope, owner, curator):
    marker = unique_marker()
    old = remember(project_scope, "The launch code name is Bluebird", kind="semantic", key="codename")
    new = memory_supersede(
        memory_id=old.pk,
        text=f"The launch code name is {marker}",
        reason="renamed",
        source_kind="user",
        actor=curator,
    )
    client = token_client(owner)
    assert marker in client.get("/api/v1/summary", {"scope": project_scope.path}).json()["text"]
    # No worker runs here: the summary is not marked stale, the read itself must not serve the text.
    memory_forget(memory_id=new.pk, actor=curator, reason="user asked")
    assert marker not in client.get("/api/v1/summary", {"scope": project_scope.path}).content.decode()
