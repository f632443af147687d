from django.urls import reverse

from governance.models import Relation
from governance.services.memory import memory_reinforce
from governance.services.relation import relation_add
from tests.memoryui.conftest import remember


def test_timeline_has_a_curve_per_top_memory_with_reinforcements(reviewer_client, history):
    memory_reinforce(memory_ids=[history["second"].pk], weight=0.8, reason="recall", actor=None)
    data = reviewer_client.get(reverse("dashboard:timeline-data"), {"days": "7", "top": "5"}).json()
    by_id = {s["id"]: s for s in data["series"]}
    assert history["second"].pk in by_id and history["secret"].pk not in by_id
    assert len(by_id[history["second"].pk]["reinforcements"]) == 1
    assert data["threshold"] > 0


def test_timeline_rejects_bad_parameters_with_a_sentence(reviewer_client, history):
    response = reviewer_client.get(reverse("dashboard:timeline-data"), {"days": "3"})
    assert response.status_code == 400 and response.json()["error"] == "invalid_input"
    assert reviewer_client.get(reverse("dashboard:timeline"), {"top": "500"}).status_code == 400


def test_graph_has_nodes_edges_and_positions_for_readable_memories(
    reviewer_client, owner_client, history, project_scope, sibling_scope
):
    evidence = remember(project_scope, "The client said PPTX on the call", kind="episodic")
    relation_add(source_id=evidence.pk, target_id=history["second"].pk, kind="supports", actor=None)
    relation_add(source_id=history["secret"].pk, target_id=history["second"].pk, kind="supports", actor=None)
    data = reviewer_client.get(reverse("dashboard:graph-data")).json()
    ids = {n["id"] for n in data["nodes"]}
    assert {history["first"].pk, history["second"].pk, evidence.pk} == ids
    assert set(data["edges"]) == {"supersedes", "supports"}
    assert all(isinstance(n["x"], float) for n in data["nodes"])
    assert len({(n["x"], n["y"]) for n in data["nodes"]}) == len(ids)
    assert len(owner_client.get(reverse("dashboard:graph-data")).json()["nodes"]) == 4
    assert Relation.objects.count() == 3


def test_layout_separates_components_and_handles_a_few_thousand_nodes():
    from memoryui.views.layout import layout

    nodes = list(range(3000))
    edges = [(i, i + 1) for i in range(0, 3000, 2)] + [(i, i + 2) for i in range(0, 600, 3)]
    pos = layout(nodes, edges)
    assert set(pos) == set(nodes)
    assert len(set(pos.values())) == len(nodes)


def test_graph_of_a_narrow_scope_finds_its_relations_past_the_newest_foreign_ones(
    reviewer, history, project_scope, sibling_scope, monkeypatch
):
    from governance.selectors import dashboard as sel

    foreign = [remember(sibling_scope, f"payments fact {i}") for i in range(4)]
    for a, b in zip(foreign, foreign[1:], strict=False):
        relation_add(source_id=a.pk, target_id=b.pk, kind="supports", actor=None)
    # With a first chunk of two relations (both foreign), the selector must look further through the scopes.
    from governance.selectors.dashboard import memories as graph_module

    monkeypatch.setattr(graph_module, "GRAPH_CHUNK", 2)
    graph = sel.relation_graph(reviewer, None)
    assert [(s, t, k) for s, t, k in graph["edges"]] == [
        (history["second"].pk, history["first"].pk, "supersedes")
    ]
    focused = sel.relation_graph(reviewer, project_scope)
    assert [(s, t, k) for s, t, k in focused["edges"]] == [
        (history["second"].pk, history["first"].pk, "supersedes")
    ]
