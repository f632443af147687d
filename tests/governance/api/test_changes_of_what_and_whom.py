"""A user changes what they asked for, relayed by an agent alone between rounds of tool logs, in the ways people
say it beyond a bare value: the old value dropped after it is named ("PDF 就不要了", "Skip the PDF"), another
person to send it to ("发给李娜就行,张伟休假了", "Send it to Kenji, Dana is on leave"), another file name or
chat channel ("Call it report_v2.docx", "Post it in #design instead"), a product named by a common word ("不用
Word 了"), a variant of a language ("Use American spelling instead" after "British English"), tabs or
spaces, a chart's type, a deployment's environment ("Deploy straight to production instead of staging"), a time for a
bare instruction ("每周一早上九点发周报" → "改到周三下午吧"). In its session the new word is pinned and the
earlier one set aside, naming it; in another chat neither is in force. Said of the world or of what happened,
the same names change nothing (services/values.py, value_words.py, extraction.py, requirements.py)."""

from __future__ import annotations

import pytest

from governance.models import Memory
from tests.governance.api.test_elliptical_choices import SLIDES_EN, SLIDES_ZH, _relay
from tests.governance.api.test_session_requirements import ask, pinned, set_aside

CHANGES = [
    ("zh", SLIDES_ZH, "PDF 就不要了,给我可编辑的版本。", "导出吧。"),
    ("zh", SLIDES_ZH, "还是做成 Keynote 吧。", "可以导出了吗?"),
    ("zh", "会议纪要用 Word 格式。", "不用 Word 了,Markdown 就好。", "纪要写好了吗?"),
    ("zh", "每周一早上九点发周报。", "改到周三下午吧。", "周报什么时候发?"),
    ("zh", "报告发给张伟。", "发给李娜就行,张伟休假了。", "报告发给谁?"),
    ("en", SLIDES_EN, "Skip the PDF, I just need the deck file.", "Export it."),
    ("en", "Send the summary to the #general channel.", "Post it in #design instead.", "Where does it go?"),
    ("en", "Name the output file report_final.docx.", "Call it report_v2.docx.", "Save the file."),
    ("en", "Email the invoice to Dana.", "Send it to Kenji, Dana is on leave.", "Send the invoice."),
    ("en", "Write the changelog in British English.", "Use American spelling instead.", "Write it."),
    ("zh", "发布说明用英式英语写。", "还是用美式英语吧,客户在美国。", "开始写吧。"),
    ("zh", "代码缩进用 tab。", "用空格,不要用 tab。", "开始写吧。"),
    ("zh", "销售数据用柱状图。", "换成折线图吧。", "画图吧。"),
    ("zh", "先部署到预发环境。", "直接部署到生产环境吧。", "部署吧。"),
    ("en", "Indent the code with tabs.", "Spaces, not tabs.", "Format it."),
    (
        "en",
        "Deploy to the staging server first.",
        "Deploy straight to production instead of staging.",
        "Deploy it.",
    ),
    (
        "en",
        "Use a bar chart for the sales figures.",
        "Make it a line chart rather than a bar chart.",
        "Draw it.",
    ),
]


@pytest.mark.parametrize(("lang", "request_", "change", "question"), CHANGES)
def test_the_later_word_replaces_the_request_in_its_session_only(
    client_for, agent, project_scope, lang, request_, change, question
):
    client = client_for(agent)
    _relay(client, lang, [request_, change])
    body = ask(client, question, session="s1")
    assert change in pinned(body), body["text"]
    assert request_ not in pinned(body)
    assert request_ in set_aside(body)
    aside = next(b for b in body["packet"]["negative"] if b["text"] == request_)
    assert change in aside["reason"]
    used = [b["text"] for slot in ("constraints", "evidence", "preferences") for b in body["packet"][slot]]
    assert request_ not in used
    other = ask(client, question, session="s2")
    assert request_ not in pinned(other) and change not in pinned(other)


KEPT = [
    ("en", "Email the invoice to Dana.", "I talked to Dana yesterday, she liked it."),
    ("en", "Send the summary to the #general channel.", "The bug was fixed in #42."),
    ("en", "Name the output file report_final.docx.", "Word count matters more than the layout."),
    ("zh", "报告发给张伟。", "他昨天把报告发给李娜了。"),
    ("zh", "每周一早上九点发周报。", "周三我发烧了。"),
    ("en", "Write the changelog in British English.", "My editor learned British spelling at school."),
    ("zh", "发布说明用英式英语写。", "我们的客户大多在美国。"),
    ("en", "Indent the code with tabs.", "I have too many browser tabs open."),
    ("en", "Deploy to the staging server first.", "The production team moved to Berlin last year."),
    ("zh", "销售数据用柱状图。", "他昨天画了一个饼图。"),
    ("zh", "代码缩进用 tab。", "这段日志里有很多空格。"),
    ("zh", "先部署到预发环境。", "预发环境挂了。"),
]


@pytest.mark.parametrize(("lang", "request_", "remark"), KEPT)
def test_the_same_names_said_of_the_world_change_nothing(
    client_for, agent, project_scope, lang, request_, remark
):
    client = client_for(agent)
    _relay(client, lang, [request_, remark])
    body = ask(client, "?" if lang == "en" else "现在呢?", session="s1")
    assert request_ in pinned(body), body["text"]
    assert set_aside(body) == []
    assert not Memory.objects.filter(text=remark).exclude(kind="episodic").exists()


UNRELATED = [
    ("zh", "代码缩进用空格。", "文件名里不要用空格。"),
    ("en", "Indent the code with spaces.", "Don't put spaces in file names."),
]


@pytest.mark.parametrize(("lang", "request_", "rule"), UNRELATED)
def test_a_rule_about_another_thing_with_the_same_word_sets_nothing_aside(
    client_for, agent, project_scope, lang, request_, rule
):
    """ "空格" in a file name is no indentation: the new rule may stand, the request stays in force."""
    client = client_for(agent)
    _relay(client, lang, [request_, rule])
    body = ask(client, "?" if lang == "en" else "现在呢?", session="s1")
    assert request_ in pinned(body), body["text"]
    assert request_ not in set_aside(body)
