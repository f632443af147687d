"""Issue 51: every memory label carries its scope ("export_format r1 · acme/slides"), so two memories of the
same key and revision in two scopes never look alike: on the timeline, in the graph's JSON, in the why-not
picker, in a turn's diff, on the review page; and the scope of a memory the viewer may not read never shows."""

import re

import pytest
from django.urls import reverse

from governance.models import Memory, Turn
from governance.services.memory import memory_propose
from governance.services.relation import relation_add
from governance.services.scope import scope_ensure
from governance.services.summary import summary_build
from memoryui.labels import memory_label
from tests.memoryui.conftest import remember

CN = (
    "acme/sheji-gao"  # 设计稿 in pinyin: scope names are lowercase ASCII slugs (governance/services/scope.py)
)


@pytest.fixture
def twins(project_scope, workspace_scope):
    """`export_format` r1 in acme/slides and in acme/sheji-gao (Chinese text), linked so the graph draws both."""
    cn_scope = scope_ensure(path=CN, actor=None)
    en = remember(project_scope, "Export slides as PDF", kind="convention", key="export_format")
    cn = remember(cn_scope, "幻灯片导出为 PDF", kind="convention", key="export_format")
    relation_add(source_id=en.pk, target_id=cn.pk, kind="supports", actor=None)
    return {"en": en, "cn": cn, "cn_scope": cn_scope}


def _block(m, slot_status="active"):
    return {
        "memory_id": m.pk,
        "kind": m.kind,
        "key": m.key,
        "revision": m.revision,
        "status": slot_status,
        "text": m.text,
        "score": 0.5,
        "reason": "keyed fact in force",
    }


def _turn(scope, agent, blocks, query="export"):
    return Turn.objects.create(
        scope=scope, principal=agent, query=query, packet={"constraints": blocks}, budget_limit=500
    )


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_the_plain_label_names_key_revision_and_scope_or_id_excerpt_and_scope():
    assert memory_label(pk=7, key="export_format", revision=2, scope_path="demo/slides") == (
        "export_format r2 · demo/slides"
    )
    assert memory_label(pk=7, key=None, revision=1, scope_path=CN, text="用户 说:  导出为 PPTX") == (
        f"#7 用户 说: 导出为 PPTX · {CN}"
    )
    # A forgotten memory's words never make its label.
    assert memory_label(pk=7, key=None, revision=1, scope_path="a", text="secret", hidden=True) == "#7 · a"


def test_the_timeline_names_each_twin_with_its_scope(owner_client, twins):
    data = owner_client.get("/timeline/data.json", {"m": [twins["en"].pk, twins["cn"].pk]}).json()
    labels = {s["id"]: s["label"] for s in data["series"]}
    assert labels == {
        twins["en"].pk: "export_format r1 · acme/slides",
        twins["cn"].pk: f"export_format r1 · {CN}",
    }


def test_the_graph_json_names_each_twin_with_its_scope(owner_client, twins):
    nodes = owner_client.get(reverse("dashboard:graph-data")).json()["nodes"]
    labels = {n["id"]: n["label"] for n in nodes}
    assert labels[twins["en"].pk] == "export_format r1 · acme/slides"
    assert labels[twins["cn"].pk] == f"export_format r1 · {CN}"


def test_the_why_not_picker_and_answer_name_the_scope(owner_client, twins, project_scope, agent):
    turn = _turn(project_scope, agent, [])
    html = owner_client.get(f"/turns/{turn.pk}/why-not/", {"q": "PDF"}).content.decode()
    text = _text(html)
    assert "export_format r1 · acme/slides" in text
    html = owner_client.get(f"/turns/{turn.pk}/why-not/", {"q": "幻灯片"}).content.decode()
    assert f"export_format r1 · {CN}" in _text(html)
    answer = owner_client.get(f"/turns/{turn.pk}/why-not/", {"memory": twins["cn"].pk}).content.decode()
    assert f"export_format r1 · {CN}" in _text(answer)


def test_a_turns_diff_and_slots_tell_the_twins_apart(owner_client, twins, project_scope, agent):
    _turn(project_scope, agent, [_block(twins["en"])])
    later = _turn(project_scope, agent, [_block(twins["cn"])])
    html = owner_client.get(f"/turns/{later.pk}/").content.decode()
    diff = html[html.index('class="compact diff"') :]
    added = _text(diff[diff.index("data-added") : diff.index("data-removed")])
    removed = _text(diff[diff.index("data-removed") :])
    assert f"export_format r1 · {CN}" in added and "acme/slides" not in added
    assert "export_format r1 · acme/slides" in removed


def test_the_review_page_tells_two_proposals_of_one_key_apart(owner_client, twins, project_scope):
    en = remember(project_scope, "Export slides as PPTX", key="导出格式", status="candidate")
    cn = remember(twins["cn_scope"], "幻灯片导出为 PPTX", key="导出格式", status="candidate")
    for m in (en, cn):
        memory_propose(memory_id=m.pk, actor=None)
    text = _text(owner_client.get("/review/", {"scope": "acme"}).content.decode())
    assert "导出格式 r1 · acme/slides" in text
    assert f"导出格式 r1 · {CN}" in text


def test_a_packet_block_in_a_scope_the_viewer_may_not_read_shows_no_scope_path(
    reviewer_client, twins, project_scope, agent
):
    # The reviewer reads acme/slides only; a stored packet that cited the sheji-gao memory names it without its
    # scope (the path is what this person may not learn).
    turn = _turn(project_scope, agent, [_block(twins["en"]), _block(twins["cn"])])
    html = reviewer_client.get(f"/turns/{turn.pk}/").content.decode()
    assert "export_format r1 · acme/slides" in _text(html)
    assert "sheji-gao" not in html


def test_a_long_scope_path_keeps_its_whole_path_in_the_title(owner_client, project_scope, agent):
    long = scope_ensure(path="acme/" + "/".join(["a-rather-long-scope-name-for-the-phone"] * 4), actor=None)
    m = remember(long, "Use the long template", key="template")
    turn = _turn(project_scope, agent, [_block(m)])
    html = owner_client.get(f"/turns/{turn.pk}/").content.decode()
    assert f'<span class="mlabel-scope" title="{long.path}">{long.path}</span>' in html


def test_the_summary_panel_names_its_cited_memories_with_their_scope(reviewer_client, project_scope):
    goal = remember(project_scope, "Ship the Q3 deck", kind="convention", key="goal")
    Memory.objects.filter(pk=goal.pk).update(confirmed_at=goal.created_at)
    summary_build(scope=project_scope, actor=None, reason="test")
    html = reviewer_client.get("/", {"scope": "acme/slides"}).content.decode()
    assert "goal r1 · acme/slides" in _text(html[html.index('id="summary"') :])
