"""Why / why not: a memory's page lists the turns that used or skipped it; a turn's page says, stage by
stage, what came in, what went out and why; diff and replay rows carry text (masked when forgotten),
status, and an "unconfirmed" badge for what no person has confirmed."""

from __future__ import annotations

from django.urls import reverse

from governance.models import Turn, TurnMemory
from governance.selectors import dashboard as sel
from governance.services.memory import memory_forget
from memoryui.views.turns import FORGOTTEN_TEXT
from tests.memoryui.conftest import remember


def _cite(turn, *rows):
    TurnMemory.objects.bulk_create(TurnMemory(turn=turn, memory_id=m, slot=s, included=i) for m, s, i in rows)


def _staged_turn(project_scope, history, **kw):
    """A turn as today's packer stores it: skipped items name the stage that left them out."""
    packet = {
        "constraints": [
            {
                "memory_id": history["second"].pk,
                "key": "export_format",
                "revision": 2,
                "status": "active",
                "text": "Export slides as PPTX",
                "score": 0.9,
                "reason": "keyed fact in force",
            }
        ],
        "skipped": [
            {
                "memory_id": history["episode"].pk,
                "text": "User: make the deck shorter",
                "status": "active",
                "slot": "evidence",
                "score": 0.12,
                "reason": "cold and not among the best matches",
                "stage": "rank",
            },
            {
                "memory_id": history["proposal"].pk,
                "text": "The user prefers dark themes",
                "status": "proposed",
                "slot": "preferences",
                "score": 0.3,
                "reason": "did not fit the token budget",
                "stage": "pack",
            },
        ],
    }
    turn = Turn.objects.create(
        scope=project_scope,
        session=kw.get("session", "s9"),
        query=kw.get("query", "what format?"),
        packet=packet,
        budget_limit=100,
        budget_used=90,
        trace={
            "stages": [
                {"name": "eligible", "ms": 1, "in": 13, "out": 13},
                {"name": "rank", "ms": 1, "in": 13, "out": 9},
                {"name": "pack", "ms": 1, "in": 9, "out": 1},
            ]
        },
    )
    _cite(
        turn,
        (history["second"].pk, "constraints", True),
        (history["episode"].pk, "evidence", False),
        (history["proposal"].pk, "preferences", False),
    )
    return turn


def test_memory_page_lists_the_turns_that_used_or_skipped_it(reviewer_client, project_scope, history):
    turn = _staged_turn(project_scope, history)
    used = reviewer_client.get(reverse("dashboard:memory", args=[history["second"].pk])).context["turn_uses"]
    assert [(u["turn"].pk, u["used"], u["slot"], u["reason"]) for u in used] == [
        (turn.pk, True, "constraints", "keyed fact in force")
    ]
    response = reviewer_client.get(reverse("dashboard:memory", args=[history["proposal"].pk]))
    [row] = response.context["turn_uses"]
    assert row["skipped"] and row["slot"] == "preferences" and row["stage"] == "pack" and row["score"] == 0.3
    assert b"skipped at pack" in response.content and b"did not fit the token budget" in response.content


def test_memory_page_hides_turns_asked_outside_the_viewers_scopes(reviewer_client, workspace_scope, history):
    above = Turn.objects.create(
        scope=workspace_scope,
        query="asked at the workspace",
        packet={
            "evidence": [
                {"memory_id": history["second"].pk, "text": "Export slides as PPTX", "reason": "matched"}
            ]
        },
    )
    _cite(above, (history["second"].pk, "evidence", True))
    uses = reviewer_client.get(reverse("dashboard:memory", args=[history["second"].pk])).context["turn_uses"]
    assert above.pk not in {u["turn"].pk for u in uses}


def test_memory_turns_are_the_newest_fifty_in_a_fixed_number_of_queries(
    reviewer, project_scope, history, django_assert_max_num_queries
):
    for i in range(sel.MEMORY_TURNS_LIMIT + 5):
        _staged_turn(project_scope, history, query=f"q{i}")
    with django_assert_max_num_queries(3):  # the viewer's scopes, then the turns with their blocks
        rows = sel.memory_turns(reviewer, history["second"].pk)
    assert len(rows) == sel.MEMORY_TURNS_LIMIT
    assert [r["turn"].query for r in rows[:2]] == [
        f"q{sel.MEMORY_TURNS_LIMIT + 4}",
        f"q{sel.MEMORY_TURNS_LIMIT + 3}",
    ]


def test_turn_page_says_per_stage_what_came_in_went_out_and_why(reviewer_client, project_scope, history):
    turn = _staged_turn(project_scope, history)
    response = reviewer_client.get(reverse("dashboard:turn", args=[turn.pk]))
    funnel = {s["name"]: s for s in response.context["funnel"]}
    assert (funnel["rank"]["in"], funnel["rank"]["out"]) == (13, 9)
    assert [b["memory_id"] for b in funnel["rank"]["dropped"]] == [history["episode"].pk]
    assert [b["memory_id"] for b in funnel["pack"]["dropped"]] == [history["proposal"].pk]
    assert funnel["eligible"]["dropped"] == []
    body = response.content.decode()
    assert "13 came in → 9 went out" in body and "cold and not among the best matches" in body


def test_an_old_turns_skipped_items_are_put_under_pack_or_an_earlier_stage(reviewer_client, turn):
    funnel = {
        s["name"]: s for s in reviewer_client.get(reverse("dashboard:turn", args=[turn.pk])).context["funnel"]
    }
    assert [b["reason"] for b in funnel["earlier"]["dropped"]] == ["over budget"]


def test_dropped_items_of_a_forgotten_memory_show_no_text(reviewer_client, project_scope, history):
    turn = _staged_turn(project_scope, history)
    memory_forget(memory_id=history["episode"].pk, actor=None, reason="asked to")
    response = reviewer_client.get(reverse("dashboard:turn", args=[turn.pk]))
    body = response.content.decode()
    assert "make the deck shorter" not in body and FORGOTTEN_TEXT in body


def test_diff_rows_carry_text_status_and_mask_forgotten_text(reviewer_client, turn, history, project_scope):
    later = Turn.objects.create(
        scope=project_scope,
        session="s1",
        query="again",
        packet={
            "constraints": turn.packet["constraints"],
            "evidence": [
                {
                    "memory_id": history["proposal"].pk,
                    "text": "The user prefers dark themes",
                    "status": "proposed",
                }
            ],
        },
    )
    memory_forget(memory_id=history["episode"].pk, actor=None, reason="asked to")
    response = reviewer_client.get(reverse("dashboard:turn", args=[later.pk]))
    rows = {d["slot"]: d for d in response.context["diff"]}
    [removed] = rows["recent"]["removed"]
    assert removed["text"] == FORGOTTEN_TEXT and removed["status_now"] == "forgotten"
    [added] = rows["evidence"]["added"]
    assert added["text"] == "The user prefers dark themes" and added["status_now"] == "proposed"
    body = response.content.decode()
    assert "make the deck shorter" not in body
    assert f'data-added="{history["proposal"].pk}"' in body and "unconfirmed" in body


def test_replay_badges_an_unreviewed_proposal_unconfirmed(reviewer_client, project_scope, history):
    proposal = remember(
        project_scope, "Export slides with speaker notes", kind="preference", status="proposed"
    )
    turn = Turn.objects.create(
        scope=project_scope,
        session="s2",
        query="export slides speaker notes",
        request={"budget_tokens": 2000},
        budget_limit=2000,
        packet={},
    )
    response = reviewer_client.post(reverse("dashboard:turn-replay", args=[turn.pk]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200, response.content
    came_in = {b["memory_id"]: b for d in response.context["diff"] for b in d["added"]}
    assert proposal.pk in came_in and came_in[proposal.pk]["status_now"] == "proposed"
    body = response.content.decode()
    start = body.index(f'data-added="{proposal.pk}"')
    assert "unconfirmed" in body[start : body.index("</div>", start)]
