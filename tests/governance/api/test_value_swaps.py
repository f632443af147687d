"""A change from one value to another said in one sentence that names both, relayed by an agent alone between
rounds of tool logs: the move ("PDF 改 PPTX 吧", "把评审会从周二改到周四", "Switch from PDF to PPTX", "Replace PDF
with PPTX", "用 PPTX 代替 PDF") or the old value judged beside the new one ("PDF 不方便编辑,用 PPTX", "MySQL 不合适,
换 PostgreSQL", "Python is too slow here, use Go"). Naming the old value is no repeat of it: in its session the
earlier request is set aside naming the change, in another chat neither is in force. A range, a fallback, both
values wanted, or a judgement with no other value change nothing (services/swaps.py)."""

from __future__ import annotations

import pytest

from governance.services.values import negated_values, values_in
from tests.governance.api.test_elliptical_choices import SLIDES_EN, SLIDES_ZH, _relay
from tests.governance.api.test_session_requirements import (
    LOG,
    LOG_ZH,
    Story,
    ask,
    pinned,
    play,
    set_aside,
    set_aside_in_part_or_whole,
)

SWAPS = [
    # the move, old value first
    ("zh", SLIDES_ZH, "PDF 改 PPTX 吧"),
    ("zh", SLIDES_ZH, "把 PDF 换成 PPTX。"),
    ("zh", SLIDES_ZH, "格式从 PDF 改成 PPTX。"),
    ("zh", SLIDES_ZH, "导出格式 PDF → PPTX"),
    ("zh", "周一把报告发给客户。", "周一改周三吧。"),
    ("zh", "评审会定在周二。", "把评审会从周二改到周四。"),
    ("en", SLIDES_EN, "Switch from PDF to PPTX."),
    ("en", SLIDES_EN, "Change PDF to PPTX, please."),
    ("en", SLIDES_EN, "Swap the PDF for a PPTX."),
    ("en", SLIDES_EN, "Replace PDF with PPTX."),
    ("en", "Schedule the review for Tuesday.", "Move the review from Tuesday to Thursday."),
    # the new value first
    ("zh", SLIDES_ZH, "用 PPTX 代替 PDF。"),
    # the old value judged beside the new one
    ("zh", SLIDES_ZH, "PDF 不方便编辑,用 PPTX。"),
    ("zh", SLIDES_ZH, "PDF 编辑不了,换 PPTX。"),
    ("zh", "用 MySQL 存数据。", "MySQL 不合适,换 PostgreSQL。"),
    ("zh", "图表用饼图。", "饼图太挤了,换成柱状图。"),
    ("en", SLIDES_EN, "PDF is hard to edit, use PPTX."),
    ("en", SLIDES_EN, "PDF doesn't work for me, PPTX please."),
    ("en", "Write the service in Python.", "Python is too slow here, use Go."),
    # the first request in a verb of its own ("导成"), the change with the new value only
    ("zh", "最后导成 pdf", "还是导 pptx 吧,方便改"),
]


@pytest.mark.parametrize(("lang", "request_", "change"), SWAPS)
def test_a_change_naming_the_old_value_and_the_new_replaces_the_request(
    client_for, agent, project_scope, lang, request_, change
):
    client = client_for(agent)
    _relay(client, lang, [request_, change])
    question = "可以继续了吗?" if lang == "zh" else "Can we go on?"
    body = ask(client, question, session="s1")
    assert change in pinned(body), body["text"]
    assert request_ not in pinned(body)
    assert request_ in set_aside_in_part_or_whole(body)
    aside = next(b for b in body["packet"]["negative"] if (b.get("part_of") or b)["text"] == request_)
    assert change in aside["reason"]
    other = ask(client, question, session="s2")
    assert request_ not in pinned(other) and change not in pinned(other)


# Said as people type in a chat: a request with a question after it, Chinese clauses parted by spaces, a
# correction after a pasted error log, a complaint before the value.
PASTED_ZH = "渲染报错如下:\n" + LOG_ZH.format(page=3) + "\n"
CASUAL = [
    ("en", SLIDES_EN, "Make it PPTX instead, can you export now?", "Make it PPTX instead"),
    ("en", SLIDES_EN, "Use PPTX, could you send it today?", "Use PPTX"),
    ("zh", SLIDES_ZH, "pdf 别导了 导pptx", "pdf 别导了 导pptx"),
    ("zh", "报告用英文写。", "英文不行 用中文写", "英文不行 用中文写"),
    ("zh", SLIDES_ZH, "我要的是 PPTX 不是 PDF", "我要的是 PPTX 不是 PDF"),
    ("en", SLIDES_EN, "Wrong format, I need PPTX.", "Wrong format, I need PPTX."),
    ("zh", SLIDES_ZH, PASTED_ZH + "另外,改成 PPTX 吧。", "另外,改成 PPTX 吧。"),
]


@pytest.mark.parametrize(("lang", "request_", "said", "read"), CASUAL)
def test_a_change_typed_as_people_chat_replaces_the_request(
    client_for, agent, project_scope, lang, request_, said, read
):
    client = client_for(agent)
    _relay(client, lang, [request_, said])
    body = ask(client, "可以继续了吗?" if lang == "zh" else "Can we go on?", session="s1")
    assert read in pinned(body), body["text"]
    assert request_ not in pinned(body) and request_ in set_aside_in_part_or_whole(body)


KEPT = [
    ("zh", SLIDES_ZH, "PDF 不行的话用 PPTX。"),  # a fallback
    ("zh", SLIDES_ZH, "PDF 和 PPTX 都要。"),  # both
    ("zh", SLIDES_ZH, "PDF 不好打开。"),  # a judgement with no other value
    ("en", SLIDES_EN, "If the PDF doesn't work, use PPTX."),
    ("en", SLIDES_EN, "PDF is hard to edit."),
    ("en", "Schedule the review for Monday.", "Book the room from Monday to Friday."),  # a range
    # a lead-in split from its question says nothing of its own
    (
        "en",
        "Write a brand summary no longer than 200 words for an example business.",
        "For example, do you have any specific goals for the summary?",
    ),
]


@pytest.mark.parametrize(("lang", "request_", "remark"), KEPT)
def test_a_fallback_a_range_or_a_judgement_alone_keeps_the_request(
    client_for, agent, project_scope, lang, request_, remark
):
    client = client_for(agent)
    _relay(client, lang, [request_, remark])
    body = ask(client, "现在呢?" if lang == "zh" else "And now?", session="s1")
    assert request_ in pinned(body), body["text"]
    assert request_ not in set_aside(body)


@pytest.mark.parametrize(
    ("sentence", "moved"),
    [
        ("PDF 改 PPTX 吧", ["pdf"]),
        ("用 PPTX 代替 PDF。", ["pdf"]),
        ("Switch from PDF to PPTX.", ["pdf"]),
        ("Python 太慢了,用 Go。", ["python"]),
        ("We work Monday to Friday.", []),
        ("Book the room from Monday to Friday.", []),
        ("PDF 不行的话用 PPTX。", []),
        ("PDF 和 PPTX 都要。", []),
        ("导出 PDF 和 PPTX,PPTX 不好打开的话看 PDF。", []),
    ],
)
def test_which_value_a_sentence_moves_away_from(sentence, moved):
    assert [v.norm for v in negated_values(sentence, values_in(sentence))] == moved


# The seeds' story with the change said by the old value and the new, thirty rounds of render logs between.
STORIES = [
    Story(
        said={
            1: "帮我做一份演示文稿,最后导出 PDF。",
            5: "PDF 不方便编辑,用 PPTX 吧。",
            12: "原文件别动,先别发出去。",
            30: "可以导出了吗?",
        },
        filler="第{page}页的图片太大了,帮我缩小一点。",
        log=LOG_ZH,
        reply="好的。",
        done="好的,已处理第{page}页。",
    ),
    Story(
        said={
            1: "Make me a slide deck and send it over as a PDF when it's done.",
            5: "Switch from PDF to PPTX, I'll want to edit it.",
            12: "Leave the original file alone, and don't publish it until I say so.",
            30: "Ready to export?",
        },
        filler="The chart on page {page} is cut off, please fix it.",
        log=LOG,
        reply="Sure.",
        done="Fixed page {page}.",
    ),
]


@pytest.mark.parametrize("story", STORIES, ids=["zh", "en"])
def test_round_30_of_the_story_exports_the_format_the_change_named(client_for, agent, project_scope, story):
    body = play(client_for(agent), story)
    assert story.said[1] not in pinned(body), body["text"]
    assert story.said[1] in set_aside_in_part_or_whole(body)
    assert story.said[5] in pinned(body) and story.said[12] in pinned(body)
