"""A user changes what they asked for, relayed by an agent alone between rounds of tool logs, in the ways people
say it beyond a bare value: the old value dropped after it is named ("PDF 就不要了", "Skip the PDF"), another
person to send it to ("发给李娜就行,张伟休假了", "Send it to Kenji, Dana is on leave"), another file name or
chat channel ("Call it report_v2.docx", "Post it in #design instead"), a product named by a common word ("不用
Word 了"), a variant of a language ("Use American spelling instead" after "British English"), tabs or
spaces, a chart's type, a deployment's environment ("Deploy straight to production instead of staging"), a time for a
bare instruction ("每周一早上九点发周报" → "改到周三下午吧"), and settings of other kinds: the language code is written
in ("用 Python 写这个爬虫" → "还是用 Go 写吧"), what a table is sorted by ("Sort the table by date" → "Sort it by
price instead"), a dark or light theme, a length limit ("摘要控制在 200 字以内" → "100 字以内就够了"), a number or
duration a setting takes ("Set the batch size to 64" → "Reduce it to 32", "超时设成 30 秒" → "调到 60 秒吧"); two
settings of different things (a word limit, a file size) both stand. In its session the new word is pinned and the
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
    # settings of kinds no earlier case named (a programming language, a sort key, a theme, a limit, a number)
    ("en", "Use Python for the scraper.", "Actually, write it in Go.", "Start coding."),
    ("zh", "用 Python 写这个爬虫。", "还是用 Go 写吧。", "开始写吧。"),
    ("en", "Implement the parser in Rust.", "Let's do it in Python after all.", "Go on."),
    ("zh", "这个脚本用 Bash 写。", "改用 Python 吧。", "继续。"),
    ("en", "Write the tests in Java.", "Kotlin instead.", "Write them."),
    ("en", "Sort the table by date.", "Sort it by price instead.", "Build the table."),
    ("zh", "表格按日期排序。", "改成按价格排序。", "做表吧。"),
    ("en", "Order the results by score.", "Actually, order them by name.", "Show me."),
    ("zh", "结果按分数排序。", "还是按名字排吧。", "给我看看。"),
    ("en", "Use a dark theme for the dashboard.", "Switch to the light theme.", "Build the dashboard."),
    ("zh", "仪表盘用深色主题。", "换成浅色主题吧。", "开始做仪表盘。"),
    ("en", "Build the page with a light theme.", "Dark mode instead, please.", "Build it."),
    ("zh", "页面用浅色模式。", "改成夜间模式。", "做页面吧。"),
    ("en", "Limit the summary to 200 words.", "Keep it under 100 words.", "Write the summary."),
    ("zh", "摘要控制在 200 字以内。", "100 字以内就够了。", "写摘要吧。"),
    ("en", "Cap the answer at 300 words.", "Make it 150 words instead.", "Answer."),
    ("zh", "回复控制在 50 字以内。", "放宽到 100 字吧。", "回复吧。"),
    ("en", "Keep the timeout at 30 seconds.", "Raise it to 60 seconds.", "Configure it."),
    ("zh", "超时设成 30 秒。", "调到 60 秒吧。", "配置吧。"),
    ("en", "Set the batch size to 64.", "Reduce it to 32, we run out of memory.", "Run it."),
    ("zh", "并发数设成 8。", "改成 4 吧。", "跑吧。"),
    ("en", "Plot the revenue as a line chart.", "Bars would be clearer, use a bar chart.", "Plot it."),
    ("zh", "接口返回 JSON。", "还是返回 XML 吧,老系统只认 XML。", "写接口吧。"),
    ("en", "Return the results as JSON.", "Return XML instead.", "Write the endpoint."),
    ("zh", "时间都用北京时间。", "改用 UTC。", "写吧。"),
    ("en", "Group the expenses by month.", "Group them by category instead.", "Make the report."),
    ("zh", "把图片压缩到 500KB 以内。", "1MB 就够了。", "压缩吧。"),
    ("en", "Use TypeScript for the frontend.", "Plain JavaScript is fine.", "Start."),
    ("zh", "代码用 Java 写。", "换成 Kotlin。", "写吧。"),
    ("en", "Show the prices in euros.", "Actually, show them in dollars.", "Show me."),
    ("zh", "列表按时间倒序排列。", "改成按热度排序。", "排吧。"),
    ("en", "Could you sort the leaderboard by points?", "Hmm, sort it by wins instead.", "Update it."),
    ("zh", "排行榜按积分排序。", "算了,按胜场排吧。", "更新吧。"),
    ("en", "Please write the CLI in Rust.", "On second thought, Go.", "Continue."),
    ("zh", "命令行工具用 Rust 写。", "等等,还是 Go 吧。", "继续。"),
    ("en", "Set the retry count to 3.", "Bump it to 5.", "Deploy."),
    ("zh", "重试次数设为 3。", "改成 5 吧。", "部署吧。"),
    ("en", "Use dark mode for the admin page.", "Light mode is better for printing, switch to it.", "Go on."),
    ("zh", "每页显示 20 条。", "改成每页 50 条。", "继续。"),
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
    ("en", "Sort the table by date.", "I sorted my photos by color last night."),
    ("zh", "表格按日期排序。", "他们按价格排序了。"),
    ("en", "Use Python for the scraper.", "Go is what my brother codes in."),
    ("zh", "用 Python 写这个爬虫。", "我朋友用 Go 写了一个爬虫。"),
    ("en", "Use a dark theme for the dashboard.", "My phone has been in light mode for years."),
    ("zh", "仪表盘用深色主题。", "我的手机一直用浅色模式。"),
    ("en", "Limit the summary to 200 words.", "The article I read was 500 words long."),
    ("zh", "超时设成 30 秒。", "他把超时设成了 60 秒。"),
    ("en", "Set the batch size to 64.", "I stood by the window for 32 minutes."),
    ("en", "Return the results as JSON.", "She returned the PDF to the library."),
    ("zh", "接口返回 JSON。", "旧接口以前返回 XML。"),
    ("zh", "列表按时间倒序排列。", "原来的列表按热度排序。"),
    ("zh", "周五之前把报告发给张伟。", "原来的报告发给了李娜。"),
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


BOTH = [
    ("en", "Limit the summary to 200 words.", "Reduce the images to 500 KB."),
    ("zh", "摘要控制在 200 字以内。", "超时设成 30 秒。"),
    ("en", "Sort the table by date.", "Use a dark theme for the dashboard."),
]


@pytest.mark.parametrize(("lang", "first", "second"), BOTH)
def test_two_settings_of_different_things_both_stand(client_for, agent, project_scope, lang, first, second):
    client = client_for(agent)
    _relay(client, lang, [first, second])
    body = ask(client, "Go on.", session="s1")
    assert first in pinned(body) and second in pinned(body), body["text"]
    assert not {first, second} & set(set_aside(body))
