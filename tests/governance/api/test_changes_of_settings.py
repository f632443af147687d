"""A user changes a setting of the task they asked for, relayed by an agent alone between rounds of tool logs,
in kinds of values no earlier case named: the language the code is written in ("用 Python 写这个爬虫" →
"还是用 Go 写吧"), what a table is sorted by ("Sort the table by date" → "Sort it by price instead", "按日期
排序" → "改成按价格排序"), a dark or light theme, a length limit ("Limit the summary to 200 words" → "Keep it
under 100 words", "控制在 200 字以内" → "100 字以内就够了"), a plain number or duration a setting takes ("Set the
batch size to 64" → "Reduce it to 32", "超时设成 30 秒" → "调到 60 秒吧"). In its session the later word is
pinned and the earlier one set aside; said of the world or of what someone did, the same words change
nothing and are no request (services/values.py, value_words.py, extraction.py, choices.py)."""

from __future__ import annotations

import pytest

from tests.governance.api.test_elliptical_choices import _relay
from tests.governance.api.test_session_requirements import ask, pinned, set_aside

CHANGES = [
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
]


@pytest.mark.parametrize(("lang", "request_", "change", "question"), CHANGES)
def test_the_later_setting_replaces_the_earlier_in_its_session(
    client_for, agent, project_scope, lang, request_, change, question
):
    client = client_for(agent)
    _relay(client, lang, [request_, change])
    body = ask(client, question, session="s1")
    assert change in pinned(body), body["text"]
    assert request_ not in pinned(body)
    assert request_ in set_aside(body)
    other = ask(client, question, session="s2")
    assert request_ not in pinned(other) and change not in pinned(other)


KEPT = [
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
def test_the_same_words_said_of_the_world_change_nothing(
    client_for, agent, project_scope, lang, request_, remark
):
    client = client_for(agent)
    _relay(client, lang, [request_, remark])
    body = ask(client, "Go on.", session="s1")
    assert request_ in pinned(body), body["text"]
    assert remark not in pinned(body)
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
