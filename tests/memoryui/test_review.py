from django.urls import reverse

from governance.models import Memory, Status
from governance.services.memory import memory_propose
from memoryui.views.review import NOTHING_SELECTED
from tests.memoryui.conftest import remember


def proposal(scope, text, kind="preference", **kw):
    memory = remember(scope, text, kind=kind, status="candidate", **kw)
    memory_propose(memory_id=memory.pk, actor=None)
    return memory


def test_queue_lists_proposals_of_readable_scopes(reviewer_client, outsider_client, history, sibling_scope):
    hidden = proposal(sibling_scope, "payments prefer cents")
    response = reviewer_client.get(reverse("dashboard:review"))
    listed = [i.memory.pk for i in response.context["items"]]
    assert listed == [history["proposal"].pk]
    assert hidden.pk not in listed
    assert outsider_client.get(reverse("dashboard:review")).context["count"] == 0


def test_bulk_confirm_activates_every_selected_item(reviewer_client, project_scope, history):
    other = proposal(project_scope, "short decks")
    response = reviewer_client.post(
        reverse("dashboard:review-act"), {"memory": [history["proposal"].pk, other.pk], "decision": "confirm"}
    )
    assert response.status_code == 302
    assert set(
        Memory.objects.filter(pk__in=[history["proposal"].pk, other.pk]).values_list("status", flat=True)
    ) == {"active"}


def test_bulk_decision_is_all_or_nothing(reviewer_client, project_scope, history, sibling_scope):
    hidden = proposal(sibling_scope, "payments prefer cents")
    response = reviewer_client.post(
        reverse("dashboard:review-act"),
        {"memory": [history["proposal"].pk, hidden.pk], "decision": "confirm"},
    )
    assert response.status_code == 404
    assert b"Nothing was changed" in response.content
    assert Memory.objects.get(pk=history["proposal"].pk).status == Status.PROPOSED


def test_bulk_reject_needs_reason_and_confirmation(reviewer_client, history):
    url = reverse("dashboard:review-act")
    assert (
        reviewer_client.post(url, {"memory": [history["proposal"].pk], "decision": "reject"}).status_code
        == 400
    )
    assert (
        reviewer_client.post(
            url, {"memory": [history["proposal"].pk], "decision": "reject", "reason": "wrong"}
        ).status_code
        == 400
    )
    ok = reviewer_client.post(
        url,
        {"memory": [history["proposal"].pk], "decision": "reject", "reason": "wrong", "irreversible": "yes"},
    )
    assert ok.status_code == 302
    assert Memory.objects.get(pk=history["proposal"].pk).status == Status.REJECTED


def test_empty_selection_and_bad_ids_are_clear_400s(reviewer_client, history):
    url = reverse("dashboard:review-act")
    empty = reviewer_client.post(url, {"decision": "confirm"})
    assert empty.status_code == 400 and NOTHING_SELECTED.encode() in empty.content
    assert reviewer_client.post(url, {"memory": ["abc"], "decision": "confirm"}).status_code == 400


def test_four_eyes_state_is_shown_and_one_reviewer_only_records_an_approval(
    reviewer_client, project_scope, history
):
    project_scope.require_two_reviewers = True
    project_scope.save(update_fields=["require_two_reviewers"])
    commitment = proposal(project_scope, "Never email the client on Sundays", tier="long")
    body = reviewer_client.get(reverse("dashboard:review")).content.decode()
    assert "Four-eyes: 0 of 2 approvals" in body
    reviewer_client.post(reverse("dashboard:review-act"), {"memory": [commitment.pk], "decision": "confirm"})
    assert Memory.objects.get(pk=commitment.pk).status == Status.PROPOSED
    assert (
        "Four-eyes: 1 of 2 approvals (rami)"
        in reviewer_client.get(reverse("dashboard:review")).content.decode()
    )


def test_a_viewer_sees_the_queue_without_decision_controls(client, project_scope, history):
    from governance.models import Role
    from governance.services.principal import grant_add, user_ensure

    viewer = user_ensure(username="vera", password="pw-vera", actor=None)
    grant_add(principal=viewer, scope=project_scope, role=Role.VIEWER, actor=None)
    client.login(username="vera", password="pw-vera")
    response = client.get(reverse("dashboard:review"))
    assert response.context["count"] == 1 and not response.context["can_act"]
    assert b"Confirm selected" not in response.content


# --- Provenance, filters, paging, query count --------------------------------------------------------------


def test_each_item_shows_proposer_reason_source_and_the_turn_it_was_seen_in(
    reviewer_client, project_scope, agent
):
    from governance.models import Turn
    from governance.services.memory import MemoryInput, memory_record

    seen_in = Turn.objects.create(scope=project_scope, principal=agent, session="s-9", query="make it dark")
    item = memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="preference",
            text="The user likes dark decks",
            source_kind="user",
            source_ref="turn-ref-42",
            session="s-9",
            status="candidate",
        ),
        actor=agent,
    )
    memory_propose(memory_id=item.pk, actor=agent, reason="The user said so twice in this session")
    response = reviewer_client.get(reverse("dashboard:review"))
    [listed] = [i for i in response.context["items"] if i.memory.pk == item.pk]
    assert listed.origin_turn_id == seen_in.pk
    body = response.content.decode()
    assert "slides-agent" in body and "The user said so twice in this session" in body
    assert "turn-ref-42" in body and reverse("dashboard:turn", args=[seen_in.pk]) in body
    assert "acme/slides" in body and "0\xa0minutes ago" in body  # scope path and age


def test_promotions_are_in_the_same_queue_labelled(reviewer_client, project_scope):
    promo = proposal(
        project_scope, "Decks use the corporate template", meta={"promotion": {"sessions": ["a", "b"]}}
    )
    response = reviewer_client.get(reverse("dashboard:review"))
    [item] = [i for i in response.context["items"] if i.memory.pk == promo.pk]
    assert item.kind == "promotion" and 'class="badge kind-promotion">Promotion<' in response.content.decode()


def test_filters_by_kind_proposer_and_age(reviewer_client, project_scope, agent):
    from datetime import timedelta

    from django.utils import timezone

    from governance.services.memory import MemoryInput, memory_record

    old = proposal(project_scope, "Old convention", kind="convention")
    Memory.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=3))
    by_agent = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="preference", text="Agent's idea", source_kind="user", status="proposed"
        ),
        actor=agent,
    )
    url = reverse("dashboard:review")

    def listed(**params):
        return [i.memory.pk for i in reviewer_client.get(url, params).context["items"]]

    assert listed(kind="convention") == [old.pk]
    assert listed(proposer="slides-agent") == [by_agent.pk]
    assert by_agent.pk not in listed(proposer="-")
    assert listed(older="1d") == [old.pk]
    assert old.pk not in listed(newer="1d") and by_agent.pk in listed(newer="1d")
    assert listed(sort="newest")[0] == by_agent.pk and listed()[0] == old.pk
    assert reviewer_client.get(url, {"older": "forever"}).status_code == 400
    assert reviewer_client.get(url, {"kind": "gossip"}).status_code == 400
    assert reviewer_client.get(url, {"after": "not-a-cursor"}).status_code == 400
    assert (
        reviewer_client.get(url, {"after": "2026-13-01T00:00:00+00:00~1"}).status_code == 400
    )  # no such day


def test_keyset_paging_goes_past_the_first_60(reviewer_client, project_scope):
    from governance.services.memory import MemoryInput, memory_record_batch

    made = memory_record_batch(
        items=[
            MemoryInput(
                scope=project_scope,
                kind="preference",
                text=f"Preference {i}",
                source_kind="user",
                status="proposed",
            )
            for i in range(65)
        ],
        actor=None,
    )
    first = reviewer_client.get(reverse("dashboard:review"))
    assert first.context["count"] == 60 and first.context["waiting"] == 65
    second = reviewer_client.get(reverse("dashboard:review") + first.context["links"]["next"])
    shown = [i.memory.pk for i in first.context["items"]] + [i.memory.pk for i in second.context["items"]]
    assert shown == sorted(m.pk for m in made)  # oldest first, no gap, no repeat
    assert "next" not in second.context["links"] and "first" in second.context["links"]


def test_review_page_query_count_does_not_grow_with_the_queue(reviewer_client, project_scope, agent):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from governance.models import Turn
    from governance.services.memory import MemoryInput, memory_record

    def add(n):
        for i in range(n):
            item = memory_record(
                item=MemoryInput(
                    scope=project_scope,
                    kind="preference",
                    text=f"Idea {i} {n}",
                    source_kind="user",
                    session="s",
                    status="candidate",
                ),
                actor=agent,
            )
            memory_propose(memory_id=item.pk, actor=agent, reason=f"reason {i}")
        Turn.objects.create(scope=project_scope, principal=agent, session="s", query="q")

    def count():
        with CaptureQueriesContext(connection) as ctx:
            assert reviewer_client.get(reverse("dashboard:review")).status_code == 200
        return len(ctx.captured_queries)

    add(2)
    small = count()
    add(25)
    assert count() == small
