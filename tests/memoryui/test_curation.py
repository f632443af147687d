"""The memory page's curation forms: link to… (with its picker), remove a link, request promotion; and the
overview's summary panel. Each with the session of each role, another workspace's, and none."""

from __future__ import annotations

import pytest
from django.test import Client

from governance.models import AuditEvent, Memory, Relation, Status, Summary
from governance.redaction.masking import FORGOTTEN_TEXT
from governance.selectors.dashboard.links import link_choices, promotion_episodes
from governance.selectors.dashboard.summaries import scope_summary
from governance.selectors.review import review_queue
from governance.services.memory import MemoryInput, memory_forget, memory_record, memory_supersede
from governance.services.relation import RELATION_FORGOTTEN, RELATION_SELF, relation_link
from governance.services.summary import summary_build
from memoryui.views.curation import EPISODES_REQUIRED, TARGET_REQUIRED
from tests.memoryui.conftest import remember


@pytest.fixture
def pair(project_scope):
    return (
        remember(project_scope, "The launch is on March 3"),
        remember(project_scope, "Marketing plans the launch for March 10"),
    )


def _link(client, a, b, kind="contradicts", reason="two dates", **extra):
    return client.post(f"/memories/{a.pk}/link/", {"kind": kind, "target": b.pk, "reason": reason, **extra})


def test_the_memory_page_offers_link_to_only_where_the_link_right_is(curator_client, reviewer_client, pair):
    a, _ = pair
    assert b'id="link-form"' in curator_client.get(f"/memories/{a.pk}/").content
    assert b'id="link-form"' not in reviewer_client.get(f"/memories/{a.pk}/").content


def test_a_curator_links_from_the_memory_page_and_sees_the_link(curator_client, curator, pair):
    a, b = pair
    response = _link(curator_client, a, b, reason="the press release says the tenth")
    assert response.status_code == 302
    relation = Relation.objects.get(source=a, target=b)
    assert (relation.kind, relation.by_hand, relation.actor_id) == ("contradicts", True, curator.pk)
    page = curator_client.get(f"/memories/{a.pk}/").content.decode()
    assert "the press release says the tenth" in page and "by hand" in page
    assert AuditEvent.objects.filter(action="relation.link", actor=curator).exists()


def test_the_id_box_works_when_nothing_was_picked(curator_client, pair):
    a, b = pair
    response = curator_client.post(
        f"/memories/{a.pk}/link/", {"kind": "supports", "target_id": f"#{b.pk}", "reason": "same launch"}
    )
    assert (
        response.status_code == 302 and Relation.objects.filter(source=a, target=b, kind="supports").exists()
    )


@pytest.mark.parametrize(
    "post, status, message",
    [
        ({"kind": "supports", "reason": "x"}, 400, TARGET_REQUIRED),
        ({"kind": "supports", "target": "self", "reason": "x"}, 400, RELATION_SELF),
        ({"kind": "supports", "target": "other", "reason": ""}, 400, "Say why these memories are linked"),
        ({"kind": "supersedes", "target": "other", "reason": "x"}, 400, "A link made by hand is one of"),
    ],
)
def test_a_refused_link_re_renders_the_page_with_the_reason_and_changes_nothing(
    curator_client, pair, post, status, message
):
    a, b = pair
    data = {**post}
    if data.get("target") == "self":
        data["target"] = a.pk
    elif data.get("target") == "other":
        data["target"] = b.pk
    response = curator_client.post(f"/memories/{a.pk}/link/", data)
    assert response.status_code == status and message in response.content.decode()
    assert not Relation.objects.exists()


def test_a_forgotten_memory_is_refused_as_a_link_target(curator_client, pair):
    a, b = pair
    memory_forget(memory_id=b.pk, actor=None, reason="user asked", hard=False)
    response = _link(curator_client, a, b)
    assert response.status_code == 409 and RELATION_FORGOTTEN in response.content.decode()


def test_reviewer_outsider_and_anonymous_cannot_link(reviewer_client, outsider_client, pair):
    a, b = pair
    assert _link(reviewer_client, a, b).status_code == 403
    assert _link(outsider_client, a, b).status_code == 404
    anonymous = _link(Client(), a, b)
    assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
    assert not Relation.objects.exists()


def test_the_picker_finds_readable_memories_by_keyword_or_id_never_another_workspace(
    curator_client,
    curator,
    outsider,
    pair,
    project_scope,
    workspace_scope,
    sibling_scope,
    other_workspace_scope,
):
    a, b = pair
    above = remember(workspace_scope, "The launch party is in Berlin")
    remember(sibling_scope, "Payments launch in May")  # a sibling: not readable by the project's curator
    foreign = remember(other_workspace_scope, "Globex launch is secret")
    found = curator_client.get(f"/memories/{a.pk}/link/choices/", {"q": "launch"}).content.decode()
    assert f'value="{b.pk}"' in found and f'value="{above.pk}"' in found
    assert "Payments" not in found and "Globex" not in found and f'value="{a.pk}"' not in found
    by_id = curator_client.get(f"/memories/{a.pk}/link/choices/", {"q": f"#{foreign.pk}"}).content.decode()
    assert "Globex" not in by_id and "No memory you may read" in by_id
    assert [m.pk for m in link_choices(curator, a, str(b.pk))] == [b.pk]
    memory_forget(memory_id=b.pk, actor=None, reason="gone", hard=False)
    assert link_choices(curator, a, "march") == []
    assert Client().get(f"/memories/{a.pk}/link/choices/", {"q": "launch"}).status_code == 302


def test_the_picker_runs_one_query_whatever_it_finds(
    curator, pair, project_scope, django_assert_max_num_queries
):
    a, _ = pair
    for i in range(15):
        remember(project_scope, f"launch checklist item {i}")
    with django_assert_max_num_queries(2):  # the grants (once per request), then the memories
        found = link_choices(curator, a, "launch")
    assert len(found) == 16


def test_a_curator_removes_a_link_with_a_reason_from_the_page(curator_client, curator, reviewer_client, pair):
    a, b = pair
    relation = relation_link(
        source_id=a.pk, target_id=b.pk, kind="supports", reason="same launch", actor=curator
    )
    page = curator_client.get(f"/memories/{b.pk}/").content.decode()
    assert 'data-action="unlink"' in page  # offered on the other end too
    assert b'data-action="unlink"' not in reviewer_client.get(f"/memories/{a.pk}/").content
    assert (
        reviewer_client.post(
            f"/memories/{a.pk}/unlink/", {"relation": relation.pk, "reason": "x"}
        ).status_code
        == 403
    )
    no_reason = curator_client.post(f"/memories/{a.pk}/unlink/", {"relation": relation.pk, "reason": ""})
    assert no_reason.status_code == 400 and Relation.objects.filter(pk=relation.pk).exists()
    done = curator_client.post(
        f"/memories/{a.pk}/unlink/", {"relation": relation.pk, "reason": "not the same"}
    )
    assert done.status_code == 302 and not Relation.objects.filter(pk=relation.pk).exists()


def test_a_revision_link_is_never_offered_for_removal(curator_client, project_scope):
    first = remember(project_scope, "Export as PDF", kind="convention", key="export_format")
    second = memory_supersede(
        memory_id=first.pk, text="Export as PPTX", reason="changed", source_kind="user", actor=None
    )
    assert b'data-action="unlink"' not in curator_client.get(f"/memories/{second.pk}/").content


# --- Promotion requested from the memory page ------------------------------------------------------------


@pytest.fixture
def promotable(project_scope, settings):
    settings.PROMOTION_MIN_EPISODES = 2
    episodes = [
        memory_record(
            item=MemoryInput(
                scope=project_scope,
                kind="episodic",
                text=f"User wants PDF ({s})",
                source_kind="user",
                session=s,
                task_type="slides",
            ),
            actor=None,
        )
        for s in ("s1", "s2")
    ]
    candidate = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="preference",
            text="Exports slides as PDF",
            source_kind="model_inference",
            session="s1",
            task_type="slides",
        ),
        actor=None,
    )
    return candidate, episodes


def test_the_promotion_form_lists_the_episodes_it_may_cite(reviewer_client, promotable, outsider_client):
    candidate, episodes = promotable
    page = reviewer_client.get(f"/memories/{candidate.pk}/").content.decode()
    assert 'id="promotion-request"' in page
    assert all(f'name="episodes" value="{e.pk}"' in page for e in episodes)
    assert {e.pk for e in promotion_episodes(candidate)} == {e.pk for e in episodes}
    assert outsider_client.get(f"/memories/{candidate.pk}/").status_code == 404


def test_a_reviewer_requests_promotion_and_it_waits_for_review(reviewer_client, reviewer, promotable):
    candidate, episodes = promotable
    response = reviewer_client.post(
        f"/memories/{candidate.pk}/promote/", {"episodes": [e.pk for e in episodes], "reason": "seen twice"}
    )
    assert response.status_code == 302
    proposal = Memory.objects.get(status=Status.PROPOSED, meta__promotion__requested_by=reviewer.name)
    assert response["Location"] == f"/memories/{proposal.pk}/" and proposal.confirmed_at is None
    assert [i.memory.pk for i in review_queue(principal=reviewer)] == [proposal.pk]


def test_a_promotion_request_without_episodes_or_support_is_refused(
    reviewer_client, outsider_client, promotable
):
    candidate, episodes = promotable
    none = reviewer_client.post(f"/memories/{candidate.pk}/promote/", {"reason": "x"})
    assert none.status_code == 400 and EPISODES_REQUIRED in none.content.decode()
    one = reviewer_client.post(f"/memories/{candidate.pk}/promote/", {"episodes": [episodes[0].pk]})
    assert one.status_code == 409
    foreign = outsider_client.post(
        f"/memories/{candidate.pk}/promote/", {"episodes": [e.pk for e in episodes]}
    )
    assert foreign.status_code == 404
    assert (
        Client().post(f"/memories/{candidate.pk}/promote/", {"episodes": [episodes[0].pk]}).status_code == 302
    )
    assert not Memory.objects.filter(status=Status.PROPOSED).exists()


# --- The summary panel --------------------------------------------------------------------------------


@pytest.fixture
def summarised(project_scope):
    goal = remember(project_scope, "Ship the Q3 deck", kind="convention", key="goal")
    Memory.objects.filter(pk=goal.pk).update(confirmed_at=goal.created_at)
    rule = remember(project_scope, "Never use red in charts", kind="convention", key="chart_colour")
    Memory.objects.filter(pk=rule.pk).update(confirmed_at=rule.created_at)
    done = remember(project_scope, "Trim tool: the deck is too long, cut it", kind="episodic")
    # What was done is what a tool reported (issue 25: a user's request is not something done).
    Memory.objects.filter(pk=done.pk).update(source_kind="tool_result")
    summary_build(scope=project_scope, actor=None, reason="test")
    return goal, rule, done


def test_the_overview_shows_the_focused_scopes_summary_with_its_cited_memories(reviewer_client, summarised):
    goal, rule, done = summarised
    page = reviewer_client.get("/", {"scope": "acme/slides"}).content.decode()
    assert 'id="summary"' in page and "Ship the Q3 deck" in page and "Never use red in charts" in page
    assert f'href="/memories/{goal.pk}/"' in page and f'href="/memories/{done.pk}/"' in page
    assert 'data-stale="no"' in page and "the system" in page
    assert "Pick a scope" in reviewer_client.get("/").content.decode()


def test_a_cited_memory_superseded_or_forgotten_since_is_shown_as_such(reviewer, reviewer_client, summarised):
    goal, rule, done = summarised
    memory_supersede(
        memory_id=goal.pk, text="Ship the Q4 deck", reason="moved", source_kind="user", actor=None
    )
    memory_forget(memory_id=done.pk, actor=None, reason="user asked", hard=False)
    view = scope_summary(reviewer, goal.scope)
    statuses = {c.id: c.status for line in view.lines for c in line.cited}
    assert (statuses[goal.pk], statuses[done.pk]) == ("superseded", "forgotten")
    page = reviewer_client.get("/", {"scope": "acme/slides"}).content.decode()
    assert "cut it" not in page and FORGOTTEN_TEXT in page
    assert 'data-stale="yes"' in page
    assert Summary.objects.get(scope=goal.scope).text  # the page made no write: still the stored build


def test_the_summary_panel_reads_in_constant_queries(
    reviewer, project_scope, summarised, django_assert_max_num_queries
):
    for i in range(12):
        step = remember(project_scope, f"Tool: step {i} done", kind="episodic")
        Memory.objects.filter(pk=step.pk).update(source_kind="tool_result")
    summary_build(scope=project_scope, actor=None)
    with django_assert_max_num_queries(4):
        view = scope_summary(reviewer, project_scope)
    assert sum(len(line.cited) for line in view.lines) > 10


def test_rebuild_is_offered_to_readers_and_refused_outside_their_scopes(
    reviewer_client, outsider_client, reviewer, summarised, project_scope
):
    goal, _, _ = summarised
    page = reviewer_client.get("/", {"scope": "acme/slides"}).content.decode()
    assert 'data-action="rebuild-summary"' in page
    remember(project_scope, "Use the company font", kind="convention", key="font")
    response = reviewer_client.post("/summary/rebuild/", {"scope": "acme/slides"})
    assert response.status_code == 302 and response["Location"].endswith("#summary")
    summary = Summary.objects.get(scope=project_scope)
    assert summary.built_by_id == reviewer.pk
    assert AuditEvent.objects.filter(action="summary.build", actor=reviewer).exists()
    assert outsider_client.post("/summary/rebuild/", {"scope": "acme/slides"}).status_code == 404
    assert reviewer_client.post("/summary/rebuild/", {"scope": ""}).status_code == 400
    assert Client().post("/summary/rebuild/", {"scope": "acme/slides"}).status_code == 302
    assert outsider_client.get("/", {"scope": "acme/slides"}).status_code == 404


def test_the_memory_pages_curation_forms_read_in_constant_queries(
    curator, project_scope, promotable, django_assert_max_num_queries
):
    from governance.permissions import RoleMap
    from memoryui.views.curation import curation_context

    candidate, episodes = promotable
    for i in range(12):
        other = remember(project_scope, f"related fact {i}")
        relation_link(source_id=other.pk, target_id=candidate.pk, kind="supports", reason="r", actor=curator)
    roles = RoleMap.of(curator)
    with django_assert_max_num_queries(4):  # episodes, the scan's choice, links out, links in
        context = curation_context(curator, candidate, roles)
    assert context["can_link"] and context["promotable"] and len(context["unlinkable"]) == 12
