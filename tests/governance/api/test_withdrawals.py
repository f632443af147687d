"""A user takes back what they asked for without asking for anything in its place, relayed by an agent alone
between rounds of tool logs: "PDF 不用导了。", "Never mind the word limit.", "No need to sort it.", "预发就跳过吧。",
"Don't send it to anyone yet.". The withdrawal names what it withdraws by a value of it, by the words of the
request, or by the name of the setting ("字数", "word limit"). In its session the earlier request is set aside,
saying the user withdrew it; in another chat neither is in force; a withdrawal of the session's own request
waits for no reviewer, one of a rule a person confirmed does. Asked for again, the request replaces the
withdrawal. A reminder, a remark of the world, thanks or a "never mind" that names nothing withdraw nothing
(services/retraction.py, services/requirements.py)."""

from __future__ import annotations

import pytest

from governance.models import Memory, Status
from tests.governance.api.test_elliptical_choices import SLIDES_EN, SLIDES_ZH, _relay
from tests.governance.api.test_session_overrides import _rule, _scope_id
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

WITHDRAWALS = [
    # by a value of the request
    ("zh", SLIDES_ZH, "PDF 不用导了。", "导出吧。"),
    ("en", SLIDES_EN, "Forget the PDF, I don't need an export at all.", "Export it."),
    ("zh", SLIDES_ZH, "我不需要 PDF 了。", "导出吧。"),
    ("en", "Deploy to the staging server first.", "Skip staging.", "Deploy it."),
    ("zh", "先部署到预发环境。", "预发就跳过吧。", "部署吧。"),
    (
        "en",
        "Use a dark theme for the dashboard.",
        "Drop the dark theme, keep the default.",
        "Build the dashboard.",
    ),
    ("zh", "仪表盘用深色主题。", "深色主题就算了。", "开始做仪表盘。"),
    ("zh", "报告发给张伟。", "先别发给张伟了。", "报告发给谁?"),
    # by the words of the request
    ("zh", SLIDES_ZH, "不用导出了,我直接在线看。", "导出吧。"),
    ("en", SLIDES_EN, "You don't need to export it, I'll present from your screen.", "Export it."),
    ("en", "Sort the table by date.", "No need to sort it.", "Build the table."),
    ("zh", "表格按日期排序。", "不用排序了。", "做表吧。"),
    ("en", "Translate the release notes into French.", "Actually, no need to translate them.", "Finish."),
    ("zh", "发布说明翻译成法语。", "不用翻译了。", "写完吧。"),
    ("en", "Email the invoice to Dana.", "Don't send it to anyone yet.", "Send the invoice."),
    ("en", "Post the summary in #design.", "Don't post it anywhere for now.", "Post it."),
    ("zh", "总结发到 #design 频道。", "先不用发频道了。", "发吧。"),
    ("en", "Schedule the review for Tuesday.", "Cancel the review, we'll skip it this week.", "Is it set?"),
    ("zh", "把评审会安排在周二。", "评审会取消吧。", "评审会定好了吗?"),
    ("en", "Write the tests in Java.", "Skip the tests for now.", "Go on."),
    ("en", SLIDES_EN, "Let's not do the PDF.", "Export it."),
    ("en", SLIDES_EN, "No PDF then.", "Export it."),
    ("en", SLIDES_EN, "The PDF won't be necessary.", "Export it."),
    ("en", SLIDES_EN, "I changed my mind about the PDF, no export.", "Export it."),
    ("zh", SLIDES_ZH, "不导出 PDF 了。", "导出吧。"),
    ("zh", SLIDES_ZH, "PDF 先不要了。", "导出吧。"),
    ("zh", SLIDES_ZH, "别导 PDF 了。", "导出吧。"),
    ("zh", SLIDES_ZH, "取消导出。", "导出吧。"),
    ("zh", "表格按日期排序。", "不需要排序。", "做表吧。"),
    ("zh", "先部署到预发环境。", "预发环境就不用了,直接上线。", "部署吧。"),
    ("en", "Email the invoice to Dana.", "Hold off on emailing Dana.", "Send the invoice."),
    # by the name of the setting
    ("en", "Limit the summary to 200 words.", "Never mind the word limit.", "Write the summary."),
    ("zh", "摘要控制在 200 字以内。", "字数不用限制了。", "写摘要吧。"),
    ("en", "Set the batch size to 64.", "Forget about the batch size, use the default.", "Run it."),
    ("zh", "并发数设成 8。", "并发数就不用设了,用默认的。", "跑吧。"),
    ("en", "Limit the summary to 200 words.", "We can drop the word limit.", "Write the summary."),
    ("en", "Limit the summary to 200 words.", "The word limit doesn't matter anymore.", "Write it."),
    ("zh", "摘要控制在 200 字以内。", "字数无所谓了。", "写摘要吧。"),
]


@pytest.mark.parametrize(("lang", "request_", "withdrawal", "question"), WITHDRAWALS)
def test_a_withdrawal_sets_the_request_aside_in_its_session_only(
    client_for, agent, project_scope, lang, request_, withdrawal, question
):
    client = client_for(agent)
    _relay(client, lang, [request_, withdrawal])
    body = ask(client, question, session="s1")
    assert request_ not in pinned(body), body["text"]
    assert request_ in set_aside(body)
    aside = next(b for b in body["packet"]["negative"] if b["text"] == request_)
    assert withdrawal in aside["reason"]
    used = [b["text"] for slot in ("constraints", "evidence", "preferences") for b in body["packet"][slot]]
    assert request_ not in used
    other = ask(client, question, session="s2")
    assert request_ not in pinned(other) and withdrawal not in pinned(other)


# The seeds' story, the format withdrawn instead of changed: thirty rounds of layout requests and render logs.
STORIES = [
    Story(
        said={
            1: "帮我做一份演示文稿,最后导出 PDF。",
            5: "PDF 不用导了,我直接放映。",
            12: "别覆盖原文件。",
            30: "现在可以导出了吗?",
        },
        filler="第{page}页的标题字号太大,帮我调小一点。",
        log=LOG_ZH,
        reply="好的。",
        done="好的,已调整第{page}页的版式。",
    ),
    Story(
        said={
            1: "Please make a slide deck for me, and export it as PDF at the end.",
            5: "Actually, skip the PDF export, I'll present it live.",
            12: "Don't overwrite the original file.",
            30: "Can we export it now?",
        },
        filler="The title on page {page} is too big, please make it smaller.",
        log=LOG,
        reply="Sure.",
        done="Done, page {page} is adjusted.",
    ),
]


@pytest.mark.parametrize("story", STORIES, ids=["zh", "en"])
def test_round_30_of_the_story_does_not_export_the_withdrawn_pdf(client_for, agent, project_scope, story):
    body = play(client_for(agent), story)
    assert story.said[1] not in pinned(body), body["text"]
    assert story.said[1] in set_aside_in_part_or_whole(body)
    assert story.said[5] in pinned(body) and story.said[12] in pinned(body)


# A change of mind said in more than one sentence, or with a new value beside the withdrawal: whichever sentence
# does it, the earlier request is not in force.
CHANGES_OF_MIND = [
    ("zh", SLIDES_ZH, "PDF 不要了。给我 PPTX。"),
    ("en", SLIDES_EN, "No PDF. Give me a PPTX."),
    ("zh", "周五前把报告发给客户。", "下周一前发就行。"),
    ("en", "Send the report to the client by Friday.", "Monday is fine too."),
    ("zh", "用中文回答。", "英文也行,其实用英文更好。"),
    ("en", "Answer in Chinese.", "English is better actually."),
    ("zh", "图表用柱状图。", "饼图吧,别用柱状图了。"),
    ("en", "Use Postgres for the prototype.", "SQLite is enough for now, skip Postgres."),
    ("zh", "每周一早上九点发周报。", "周报不用发了,项目结束了。"),
    (
        "en",
        "Email the weekly report every Monday at 9am.",
        "Stop sending the weekly report, the project is over.",
    ),
]


@pytest.mark.parametrize(("lang", "request_", "change"), CHANGES_OF_MIND)
def test_after_a_change_of_mind_the_earlier_request_is_not_in_force(
    client_for, agent, project_scope, lang, request_, change
):
    client = client_for(agent)
    _relay(client, lang, [request_, change])
    body = ask(client, "Go on." if lang == "en" else "继续。", session="s1")
    assert request_ not in pinned(body), body["text"]
    assert request_ in set_aside(body)
    assert request_ not in pinned(ask(client, "Go on.", session="s2"))


def test_the_packet_says_the_user_withdrew_it_and_no_reviewer_is_asked(client_for, agent, project_scope):
    client = client_for(agent)
    _relay(client, "zh", [SLIDES_ZH, "PDF 不用导了。"])
    body = ask(client, "导出吧。", session="s1")
    aside = next(b for b in body["packet"]["negative"] if b["text"] == SLIDES_ZH)
    assert "the user withdrew it in this session" in aside["reason"]
    assert (
        "PDF 不用导了。 [the user, turn s1-u1: in force for this session, this session only; withdraws"
        in body["text"]
    )
    withdrawal = Memory.objects.exclude(kind="episodic").get(text="PDF 不用导了。")
    requirement = withdrawal.meta["requirement"]
    assert requirement["type"] == "withdrawal"
    assert requirement["negated"] == [{"sort": "format", "norm": "pdf", "text": "PDF"}]
    # the session's own request, taken back: nothing for a reviewer, nothing lasting
    assert withdrawal.status == Status.CANDIDATE and not requirement["lasting"]
    assert not Memory.objects.filter(status=Status.PROPOSED).exists()


def test_a_withdrawal_of_a_persons_rule_is_in_force_in_its_session_and_waits_for_a_reviewer(
    client_for, owner, agent, project_scope
):
    rule = _rule(client_for(owner), text="Export every deck as PDF.", key="export_format")
    client = client_for(agent)
    _relay(client, "en", ["Forget about the PDF export for this one."])
    withdrawal = Memory.objects.exclude(kind="episodic").get(text="Forget about the PDF export for this one.")
    assert withdrawal.status == Status.PROPOSED and withdrawal.key == "export_format"
    here = ask(client, "Export the deck.", session="s1")
    assert "Export every deck as PDF." not in pinned(here)
    assert "Export every deck as PDF." in set_aside(here)
    elsewhere = ask(client, "Export the deck.", session="s2")
    assert "Export every deck as PDF." in pinned(elsewhere)
    assert rule["id"] not in [b["memory_id"] for b in here["packet"]["constraints"]]


def test_a_withdrawal_does_not_set_a_binding_rule_aside(client_for, owner, agent, project_scope):
    owner_client = client_for(owner)
    rule = _rule(owner_client, text="Export every deck as PDF.", key="export_format")
    changed = owner_client.patch(
        f"/api/v1/scopes/{_scope_id(owner_client)}", {"binding_keys": ["export_format"]}, format="json"
    )
    assert changed.status_code == 200, changed.json()
    client = client_for(agent)
    _relay(client, "en", ["Forget about the PDF export for this one."])
    body = ask(client, "Export the deck.", session="s1")
    assert "Export every deck as PDF." in pinned(body), body["text"]
    assert rule["id"] not in [b["memory_id"] for b in body["packet"]["negative"]]
    assert "BINDING: the user asked in this session" in body["text"]


ASKED_AGAIN = [
    ("zh", SLIDES_ZH, "PDF 不用导了。", "算了,还是导出 PDF 吧。"),
    ("en", SLIDES_EN, "Forget the PDF.", "Actually, export it as PDF after all."),
    (
        "en",
        "Limit the summary to 200 words.",
        "Never mind the word limit.",
        "Actually, keep it under 150 words.",
    ),
    ("zh", "摘要控制在 200 字以内。", "字数不用限制了。", "还是控制在 300 字以内吧。"),
]


@pytest.mark.parametrize(("lang", "request_", "withdrawal", "again"), ASKED_AGAIN)
def test_asked_for_again_the_request_replaces_the_withdrawal(
    client_for, agent, project_scope, lang, request_, withdrawal, again
):
    client = client_for(agent)
    _relay(client, lang, [request_, withdrawal, again])
    body = ask(client, "Go on.", session="s1")
    assert again in pinned(body), body["text"]
    assert request_ not in pinned(body) and withdrawal not in pinned(body)
    assert withdrawal in set_aside(body)


REMARKS = [
    ("en", SLIDES_EN, "The PDF export on my laptop never works."),
    ("zh", SLIDES_ZH, "PDF 不用压缩了。"),
    ("en", "Sort the table by date.", "No need to thank me."),
    ("zh", "表格按日期排序。", "排序不用太复杂。"),
    ("zh", "先部署到预发环境。", "他们上次跳过了预发。"),
    ("en", "Deploy to the staging server first.", "They skipped staging last time and it broke."),
    ("en", "Limit the summary to 200 words.", "Never mind, I found the file."),
    ("zh", "摘要控制在 200 字以内。", "算了,不说这个了。"),
    ("en", "Email the invoice to Dana.", "Don't worry about the typo."),
    ("zh", "报告发给张伟。", "不用谢,应该的。"),
    ("en", "Translate the release notes into French.", "Is there no need to translate the appendix?"),
]


@pytest.mark.parametrize(("lang", "request_", "remark"), REMARKS)
def test_a_remark_that_withdraws_nothing_leaves_the_request_in_force(
    client_for, agent, project_scope, lang, request_, remark
):
    client = client_for(agent)
    _relay(client, lang, [request_, remark])
    body = ask(client, "Go on.", session="s1")
    assert request_ in pinned(body), body["text"]
    assert set_aside(body) == []
    assert remark not in pinned(body)


@pytest.mark.parametrize(
    ("lang", "request_", "reminder"),
    [("en", SLIDES_EN, "Don't forget the PDF at the end."), ("zh", SLIDES_ZH, "别忘了最后导出 PDF。")],
)
def test_a_reminder_asks_for_the_request_again_and_sets_nothing_aside(
    client_for, agent, project_scope, lang, request_, reminder
):
    client = client_for(agent)
    _relay(client, lang, [request_, reminder])
    body = ask(client, "Go on.", session="s1")
    assert request_ in pinned(body), body["text"]
    assert set_aside(body) == []
