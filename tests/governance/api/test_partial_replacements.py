"""A user says several requirements in one breath ("只处理我确认的 v3,别覆盖原文件,也先不要发布。") and later changes
one of them ("可以发布了。"), relayed by an agent alone between rounds of tool logs. In its session the clauses the
later turn touched are set aside, naming it, and the rest stays pinned as the part of the earlier requirement still
in force (services/parts.py): the agent may publish now, and still may not overwrite the original file. A later
turn that changes the rest takes that too; one that cannot be told apart by clause replaces the whole, as before.
In English and in Chinese, for the seeds' slide deck and for a report."""

from __future__ import annotations

import json

import pytest

from governance.models import Memory
from tests.governance.api.test_elliptical_choices import _relay
from tests.governance.api.test_session_overrides import _rule
from tests.governance.api.test_session_requirements import ask, pinned, section, set_aside

BOUNDARY_ZH = "只处理我确认的 v3,别覆盖原文件,也先不要发布。"
BOUNDARY_EN = "Only work on the v3 I confirmed, don't overwrite the original file, and don't publish yet."
REPORT_EN = "Write the report in English, keep it under 500 words, and send it to Kenji by Friday."
REPORT_ZH = "报告用英文写,控制在 500 字以内,周五前发给 Kenji。"

PARTS = [
    ("zh", BOUNDARY_ZH, ["可以发布了。"], "只处理我确认的 v3,别覆盖原文件。", "先不要发布。"),
    (
        "en",
        BOUNDARY_EN,
        ["You can publish it now."],
        "Only work on the v3 I confirmed, don't overwrite the original file.",
        "Don't publish yet.",
    ),
    ("zh", BOUNDARY_ZH, ["现在开始处理 v4。"], "别覆盖原文件,也先不要发布。", "只处理我确认的 v3。"),
    (
        "en",
        BOUNDARY_EN,
        ["Move on to v4 now."],
        "Don't overwrite the original file, and don't publish yet.",
        "Only work on the v3 I confirmed.",
    ),
    (
        "zh",
        "帮我做一份演示文稿,最后导出 PDF,字体用思源黑体。",
        ["改成 PPTX。"],
        "帮我做一份演示文稿,字体用思源黑体。",
        "最后导出 PDF。",
    ),
    (
        "en",
        REPORT_EN,
        ["Actually, make it 800 words."],
        "Write the report in English, and send it to Kenji by Friday.",
        "Keep it under 500 words.",
    ),
    ("zh", REPORT_ZH, ["字数不用限制了。"], "报告用英文写,周五前发给 Kenji。", "控制在 500 字以内。"),
    ("zh", REPORT_ZH, ["改成周一。"], "报告用英文写,控制在 500 字以内。", "周五前发给 Kenji。"),
    # a withdrawal of one clause (services/retraction.py)
    ("zh", "代码用 Java 写,再写单元测试。", ["单元测试先不写了。"], "代码用 Java 写。", "写单元测试。"),
    (
        "en",
        "Write the service in Go, and add unit tests.",
        ["Skip the unit tests for now."],
        "Write the service in Go.",
        "Add unit tests.",
    ),
    # two changes, each of one clause: what stands is what neither touched
    (
        "zh",
        BOUNDARY_ZH,
        ["可以发布了。", "原文件可以覆盖了。"],
        "只处理我确认的 v3。",
        "别覆盖原文件,也先不要发布。",
    ),
    (
        "en",
        BOUNDARY_EN,
        ["You can publish it now.", "Feel free to overwrite the original file."],
        "Only work on the v3 I confirmed.",
        "Don't overwrite the original file, and don't publish yet.",
    ),
]


@pytest.mark.parametrize(("lang", "said", "changes", "standing", "taken"), PARTS)
def test_a_change_of_one_clause_leaves_the_others_in_force(
    client_for, agent, project_scope, lang, said, changes, standing, taken
):
    client = client_for(agent)
    _relay(client, lang, [said, *changes])
    body = ask(client, "Go on." if lang == "en" else "继续。", session="s1")
    assert standing in pinned(body), body["text"]
    assert said not in pinned(body) and taken not in pinned(body)
    assert changes[-1] in pinned(body)
    assert taken in set_aside(body), body["text"]
    block = next(b for b in body["packet"]["constraints"] if b["text"] == standing)
    assert block["part_of"] == {"memory_id": block["memory_id"], "text": said, "part": "in force"}
    aside = next(b for b in body["packet"]["negative"] if b["text"] == taken)
    assert aside["memory_id"] == block["memory_id"] and changes[-1] in aside["reason"]
    # What the agent reads: the part in force among the constraints, the part taken among what no longer counts.
    constraints = section(body["text"], "Constraints in force")
    negative = section(body["text"], "No longer in force")
    assert standing in constraints and taken not in constraints
    assert taken in negative
    # Another chat: none of it is in force there.
    other = ask(client, "Go on." if lang == "en" else "继续。", session="s2")
    assert not {said, standing, *changes} & set(pinned(other))


WHOLE = [
    ("en", "Help me make a slide deck, and export it as PDF at the end.", "Change it to PPTX."),
    ("zh", BOUNDARY_ZH, "这些都不用管了,按你的想法来。"),
]


@pytest.mark.parametrize(("lang", "said", "change"), WHOLE)
def test_a_change_that_names_no_clause_of_its_own_replaces_the_whole_or_nothing(
    client_for, agent, project_scope, lang, said, change
):
    client = client_for(agent)
    _relay(client, lang, [said, change])
    body = ask(client, "Go on." if lang == "en" else "继续。", session="s1")
    assert not any(b.get("part_of") for slot in ("constraints", "negative") for b in body["packet"][slot])
    assert (said in pinned(body)) != (said in set_aside(body))


RULES = [
    ("zh", BOUNDARY_ZH, "可以发布了。", "只处理我确认的 v3,别覆盖原文件。", "先不要发布。"),
    (
        "en",
        "Export the deck as PDF, and use Source Han Sans for every slide.",
        "Change it to PPTX.",
        "Use Source Han Sans for every slide.",
        "Export the deck as PDF.",
    ),
]


@pytest.mark.parametrize(("lang", "rule", "change", "standing", "taken"), RULES)
def test_a_correction_of_one_clause_of_a_confirmed_rule_sets_only_that_clause_aside_in_its_session(
    client_for, owner, agent, project_scope, lang, rule, change, standing, taken
):
    made = _rule(client_for(owner), text=rule, key="house_rules")
    client = client_for(agent)
    _relay(client, lang, [change])
    body = ask(client, "Go on." if lang == "en" else "继续。", session="s1")
    assert standing in pinned(body) and change in pinned(body), body["text"]
    assert rule not in pinned(body) and taken in set_aside(body)
    block = next(b for b in body["packet"]["constraints"] if b["text"] == standing)
    assert block["memory_id"] == made["id"] and block["part_of"]["part"] == "in force"
    assert taken not in section(body["text"], "Constraints in force")
    # Outside the session the rule holds whole until a reviewer decides.
    other = ask(client, "Go on." if lang == "en" else "继续。", session="s2")
    assert rule in pinned(other) and change not in pinned(other)


def test_the_parts_of_a_requirement_a_person_forgot_are_masked_in_the_stored_turn_and_gone_from_the_packet(
    client_for, owner, agent, project_scope
):
    client = client_for(agent)
    _relay(client, "zh", [BOUNDARY_ZH, "可以发布了。"])
    body = ask(client, "继续。", session="s1")
    standing, taken = "只处理我确认的 v3,别覆盖原文件。", "先不要发布。"
    assert standing in pinned(body) and taken in set_aside(body)
    earlier = Memory.objects.exclude(kind="episodic").get(text=BOUNDARY_ZH)
    forgot = client_for(owner).post(
        f"/api/v1/memories/{earlier.pk}/forget", {"reason": "said by mistake", "mode": "soft"}, format="json"
    )
    assert forgot.status_code == 202, forgot.content
    stored = client.get(f"/api/v1/turns/{body['turn_id']}")
    assert stored.status_code == 200
    for words in (BOUNDARY_ZH, standing, taken.rstrip("。")):
        assert words not in json.dumps(stored.json()["packet"], ensure_ascii=False)
    again = ask(client, "继续。", session="s1")
    assert standing not in pinned(again) and taken not in set_aside(again)
