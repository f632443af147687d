"""Graph (direction, parallel edges, kind filter, around one memory), timeline (picker, table fallback),
the overview's fitted activation bins and the glossary: what each role sees, and what it may not."""

import math

import pytest
from django.urls import reverse

from governance.services.memory import memory_reinforce
from governance.services.relation import relation_add
from memoryui.views.graph import BAD_DEPTH, BAD_KIND, BAD_MEMORY
from memoryui.views.layout import edge_geometry
from memoryui.views.timeline import BAD_PICK
from tests.conftest import token_client
from tests.memoryui.conftest import remember


@pytest.fixture
def pair(history, project_scope):
    """Two memories linked twice (a contradicts and a supersedes), and one more supporting the first."""
    a = remember(project_scope, "Slides use the blue theme", key="theme")
    b = remember(project_scope, "Slides use the green theme", kind="semantic")
    c = remember(project_scope, "The client asked for blue on the call", kind="episodic")
    relation_add(source_id=b.pk, target_id=a.pk, kind="contradicts", actor=None)
    relation_add(source_id=b.pk, target_id=a.pk, kind="supersedes", actor=None)
    relation_add(source_id=c.pk, target_id=a.pk, kind="supports", actor=None)
    return {"a": a, "b": b, "c": c}


def _links(data, a, b):
    return [lk for lk in data["links"] if {lk["source"], lk["target"]} == {a.pk, b.pk}]


def test_parallel_edges_between_one_pair_get_distinct_bends_and_both_are_drawn(reviewer_client, pair):
    data = reviewer_client.get(reverse("dashboard:graph-data")).json()
    both = _links(data, pair["a"], pair["b"])
    assert sorted(lk["kind"] for lk in both) == ["contradicts", "supersedes"]
    assert len({lk["offset"] for lk in both}) == 2 and all(lk["offset"] != 0 for lk in both)
    lone = _links(data, pair["c"], pair["a"])
    assert [lk["offset"] for lk in lone] == [0]
    # each kind's trace draws its curves (None between them) and one arrowhead per edge
    for kind in ("contradicts", "supersedes", "supports"):
        e = data["edges"][kind]
        assert e["x"].count(None) == e["count"] == len(e["arrows"]["angle"])
    assert data["edge_count"] == len(data["links"])


def test_two_parallel_curves_bend_to_opposite_sides_and_arrows_point_at_the_target():
    positions = {1: (0.0, 0.0), 2: (10.0, 0.0)}
    a, b = edge_geometry([(2, 1, "contradicts"), (2, 1, "supersedes")], positions)
    mid_a, mid_b = a["y"][len(a["y"]) // 2], b["y"][len(b["y"]) // 2]
    assert mid_a * mid_b < 0 and abs(mid_a) > 1  # apexes on either side of the straight line, visibly apart
    (straight,) = edge_geometry([(1, 2, "supports")], positions)
    assert straight["x"] == [0.0, 10.0] and straight["y"] == [0.0, 0.0]
    assert math.isclose(straight["arrow"][2], 90.0)  # pointing right (clockwise from up), at node 2
    (back,) = edge_geometry([(2, 1, "supports")], positions)
    assert math.isclose(back["arrow"][2], -90.0)


def test_the_graph_keeps_to_the_relation_kinds_asked_for(reviewer_client, pair):
    data = reviewer_client.get(reverse("dashboard:graph-data"), {"kind": ["contradicts", "supports"]}).json()
    assert set(data["edges"]) == {"contradicts", "supports"}
    assert all(lk["kind"] in ("contradicts", "supports") for lk in data["links"])
    bad = reviewer_client.get(reverse("dashboard:graph-data"), {"kind": "likes"})
    assert bad.status_code == 400 and bad.json()["message"] == BAD_KIND


def test_around_a_memory_shows_its_neighbours_to_the_depth_asked(reviewer_client, pair, project_scope):
    far = remember(project_scope, "Blue was chosen by marketing")
    relation_add(source_id=far.pk, target_id=pair["c"].pk, kind="supports", actor=None)
    one = reviewer_client.get(reverse("dashboard:graph-data"), {"memory": pair["a"].pk, "depth": 1}).json()
    assert {n["id"] for n in one["nodes"]} == {pair["a"].pk, pair["b"].pk, pair["c"].pk}
    assert one["centre"] == pair["a"].pk
    two = reviewer_client.get(reverse("dashboard:graph-data"), {"memory": pair["a"].pk, "depth": 2}).json()
    assert far.pk in {n["id"] for n in two["nodes"]} and len(two["links"]) == 4
    page = reviewer_client.get(reverse("dashboard:graph"), {"memory": pair["a"].pk})
    assert page.status_code == 200 and b"around memory" in page.content


def test_around_a_memory_hides_neighbours_the_reader_may_not_read(
    reviewer_client, owner_client, pair, history
):
    relation_add(source_id=history["secret"].pk, target_id=pair["a"].pk, kind="supports", actor=None)
    mine = reviewer_client.get(reverse("dashboard:graph-data"), {"memory": pair["a"].pk}).json()
    assert history["secret"].pk not in {n["id"] for n in mine["nodes"]}
    assert history["secret"].text not in str(mine)
    owners = owner_client.get(reverse("dashboard:graph-data"), {"memory": pair["a"].pk}).json()
    assert history["secret"].pk in {n["id"] for n in owners["nodes"]}


def test_around_a_memory_outside_the_grants_or_of_another_workspace_is_a_404(
    reviewer_client, outsider_client, outsider, other_workspace_scope, pair, history
):
    foreign = remember(other_workspace_scope, "Globex invoices in CHF")
    for client, memory in (
        (reviewer_client, history["secret"]),
        (reviewer_client, foreign),
        (outsider_client, pair["a"]),
        (reviewer_client, None),
    ):
        memory_id = memory.pk if memory else 999_999
        data = client.get(reverse("dashboard:graph-data"), {"memory": memory_id})
        assert data.status_code == 404 and data.json()["error"] == "not_found"
        assert client.get(reverse("dashboard:graph"), {"memory": memory_id}).status_code == 404
    assert (
        b"Payments"
        not in reviewer_client.get(reverse("dashboard:graph-data"), {"memory": history["secret"].pk}).content
    )


def test_graph_parameters_are_checked_and_nobody_signed_out_gets_in(client, reviewer_client, agent, pair):
    assert (
        reviewer_client.get(reverse("dashboard:graph-data"), {"memory": "x"}).json()["message"] == BAD_MEMORY
    )
    assert (
        reviewer_client.get(reverse("dashboard:graph-data"), {"memory": pair["a"].pk, "depth": 3}).json()[
            "message"
        ]
        == BAD_DEPTH
    )
    for anonymous in (client, token_client(agent)):
        response = anonymous.get(reverse("dashboard:graph-data"), {"memory": pair["a"].pk})
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_memory_page_links_to_the_graph_around_it(reviewer_client, pair):
    body = reviewer_client.get(reverse("dashboard:memory", args=[pair["a"].pk])).content.decode()
    assert f'/graph/?memory={pair["a"].pk}&amp;depth=1' in body


def test_neighbourhood_selector_is_constant_query(
    reviewer, pair, project_scope, django_assert_max_num_queries
):
    from governance.selectors import dashboard as sel

    for i in range(20):
        m = remember(project_scope, f"evidence {i}")
        relation_add(source_id=m.pk, target_id=pair["c"].pk, kind="supports", actor=None)
    # the reader's grants and scopes (4), then two per step out (ends and their scopes), then the nodes
    with django_assert_max_num_queries(10):
        data = sel.memory_neighbourhood(reviewer, pair["a"].pk, depth=2)
    assert len(data["nodes"]) == 23


# --- Timeline ---------------------------------------------------------------------------------------------


def test_the_timeline_picker_finds_memories_by_words_and_shows_the_picked_ones(reviewer_client, history):
    found = reviewer_client.get(reverse("dashboard:timeline"), {"q": "PPTX"})
    assert [m.pk for m in found.context["choices"]] == [history["second"].pk]
    assert b'name="m" value="%d"' % history["second"].pk in found.content
    picked = reviewer_client.get(
        reverse("dashboard:timeline-data"), {"m": [history["episode"].pk, history["second"].pk]}
    )
    assert [s["id"] for s in picked.json()["series"]] == [history["episode"].pk, history["second"].pk]
    assert picked.json()["picked"] is True
    secret = reviewer_client.get(reverse("dashboard:timeline"), {"q": "Payments"})
    assert secret.context["choices"] == []


def test_picking_a_memory_outside_the_grants_is_a_404_and_a_bad_pick_a_400(
    reviewer_client, outsider_client, history
):
    assert (
        reviewer_client.get(reverse("dashboard:timeline-data"), {"m": history["secret"].pk}).status_code
        == 404
    )
    assert outsider_client.get(reverse("dashboard:timeline"), {"m": history["second"].pk}).status_code == 404
    bad = reviewer_client.get(reverse("dashboard:timeline-data"), {"m": "two"})
    assert bad.status_code == 400 and bad.json()["message"] == BAD_PICK
    assert (
        reviewer_client.get(reverse("dashboard:timeline"), {"m": [str(i) for i in range(51)]}).status_code
        == 400
    )


def test_the_timeline_page_holds_the_chart_data_and_the_same_data_as_a_table(reviewer_client, history):
    memory_reinforce(memory_ids=[history["second"].pk], weight=0.8, reason="recall", actor=None)
    response = reviewer_client.get(reverse("dashboard:timeline"), {"days": "7"})
    body = response.content.decode()
    assert 'id="timeline-data"' in body and "<table" in body
    row = {s["id"]: s for s in response.context["series"]}[history["second"].pk]
    assert f'data-memory="{history["second"].pk}"' in body
    assert len(row["table"]) == 6 and row["table"][-1] > 0
    assert len(row["reinforcements"]) == 1
    assert history["secret"].text not in body


def test_the_overview_histogram_bins_span_the_data_and_the_threshold_with_labels(
    reviewer_client, history, settings
):
    data = reviewer_client.get(reverse("dashboard:activation-histogram")).json()
    lo, hi = data["range"]
    threshold = math.log10(settings.MEMORY_COLD_THRESHOLD)
    assert lo <= threshold <= hi and hi - lo < 4  # fitted: not the fixed 10⁻⁶…10 of before
    assert sum(data["counts"]) == 3 and len(data["labels"]) == len(data["counts"])
    assert all("–" in label for label in data["labels"])
    fresh = math.log10(1.0)  # fresh memories start near A0 = 1
    assert any(
        n for n, c in zip(data["counts"], data["centers"], strict=True) if abs(math.log10(c) - fresh) < 0.5
    )


def test_the_glossary_explains_each_word_and_is_linked_from_every_page(
    reviewer_client, client, history, settings
):
    page = reviewer_client.get(reverse("dashboard:glossary"))
    body = page.content.decode()
    for slug in ("candidate", "proposed", "tier", "activation", "in-force", "four-eyes", "cold"):
        assert f'id="{slug}"' in body
    assert f"{settings.MEMORY_COLD_THRESHOLD:g}" in body
    overview = reviewer_client.get(reverse("dashboard:overview")).content.decode()
    assert reverse("dashboard:glossary") in overview and 'href="/glossary/#cold"' in overview
    assert client.get(reverse("dashboard:glossary")).status_code == 302
