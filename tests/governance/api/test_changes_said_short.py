"""Lifts, withdrawals, boundaries and changes said the short way people type them, relayed by an agent alone
between rounds of tool logs, in Chinese and in English: a verb said short ("可以发了" for "先别发布"), an order to do
what a boundary held back ("发布吧"), assent idioms that negate nothing ("发吧,没问题了"), "You're clear to publish.",
a boundary said topic first ("原文件别动"), a bare 不 before the verb ("pdf就不导了"), "导出就算了", "nvm the pdf", a
judgement of the old value beside the new ("周五来不及,下周一吧", "200 字太少了,放宽到 500": a bare number in the unit of
the quantity beside it). In its session the earlier requirement is set aside; an answer that changes nothing
keeps it (services/opposite.py, services/correction.py, services/retraction.py, services/swaps.py)."""

from __future__ import annotations

import pytest

from tests.governance.api.test_elliptical_choices import SLIDES_EN, SLIDES_ZH, _relay
from tests.governance.api.test_session_requirements import ask, pinned, set_aside_in_part_or_whole

SET_ASIDE = [
    ("zh", "先别发布。", "发吧,没问题了"),
    ("zh", "先别发布。", "可以发了"),
    ("zh", "先别发布。", "发布吧"),
    ("en", "Don't publish yet.", "ok publish it"),
    ("en", "Don't publish yet.", "You're clear to publish."),
    ("zh", "别覆盖原文件。", "原文件覆盖掉也没关系"),
    ("en", "Don't overwrite the original file.", "Overwriting the original is fine now."),
    ("zh", SLIDES_ZH, "pdf就不导了"),
    ("zh", SLIDES_ZH, "导出就算了"),
    ("en", SLIDES_EN, "nvm the pdf"),
    ("en", SLIDES_EN, "scratch the PDF export"),
    ("zh", "只处理 v3。", "v4 也一起处理吧"),
    ("zh", "报告周五前发给客户。", "周五来不及,下周一吧"),
    ("en", "Send the report to the client by Friday.", "Friday's too tight, make it Monday."),
    ("zh", "摘要控制在 200 字以内。", "200 字太少了,放宽到 500"),
]


@pytest.mark.parametrize(("lang", "first", "later"), SET_ASIDE)
def test_a_change_said_short_sets_the_earlier_requirement_aside(
    client_for, agent, project_scope, lang, first, later
):
    client = client_for(agent)
    _relay(client, lang, [first, later])
    body = ask(client, "继续" if lang == "zh" else "Go on.", session="s1")
    assert first not in pinned(body), body["text"]
    assert first in set_aside_in_part_or_whole(body)


KEPT = [
    ("zh", "原文件别动", "好的"),  # a boundary said topic first, then an answer that changes nothing
    ("en", "don't touch the original file", "thanks"),
    ("zh", "先别发布。", "发布会改到下周了吗?"),  # a question
    ("zh", "先别发布。", "别人都发了。"),  # of others
]


@pytest.mark.parametrize(("lang", "first", "later"), KEPT)
def test_an_answer_that_changes_nothing_keeps_it(client_for, agent, project_scope, lang, first, later):
    client = client_for(agent)
    _relay(client, lang, [first, later])
    body = ask(client, "继续" if lang == "zh" else "Go on.", session="s1")
    assert first in pinned(body), body["text"]
