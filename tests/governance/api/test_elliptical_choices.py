"""A user's correction said the way people say it, through the public API with an agent's token only: a bare
value ("CSV 就行", "Let's go with Markdown then", "算了,周四吧", "Actually, Thursday."), a request in the words of
a change ("格式换一下,用 PPTX"), a negated destination ("先别发群里,发我邮箱"), each between rounds of tool logs,
in English and in Chinese; or as a preference or a verdict on the old value ("PPTX would be better since I need
to edit it", "我倾向于 PPTX", "PDF 不行,换 PPTX", "导出 PPTX 不导 PDF 了"). In its session the new value is pinned and the earlier request set aside naming
it; in another session the earlier request is not in force. Said of the world, of oneself or as a question,
the same value changes nothing and no candidate is written for it (services/choices.py)."""

from __future__ import annotations

import pytest

from governance.models import Memory
from governance.propagation import embed_memories
from tests.governance.api.test_session_requirements import ask, pinned, set_aside

SCOPE = "acme/slides"

LOGS = {
    "en": "build log: step {n} ok; cache hit; 0 warnings; wrote out/part-{n}.tmp (2,048 bytes)\n" * 10,
    "zh": "构建日志: 第{n}步完成; 缓存命中; 0 个警告; 写入 out/part-{n}.tmp (2,048 字节)\n" * 10,
}
REPLIES = {"en": "Working on it.", "zh": "好的,正在处理。"}


def _relay(client, lang: str, said: list[str], *, session: str = "s1") -> None:
    """Each user turn, then two rounds of an assistant reply and a long tool log, as one agent relays them;
    the worker's embedding done at the end."""
    n = 0
    for i, text in enumerate(said):
        turns = [{"role": "user", "content": text, "ref": f"{session}-u{i}"}]
        for _ in range(2):
            n += 1
            turns += [
                {"role": "assistant", "content": REPLIES[lang], "ref": f"{session}-a{n}"},
                {
                    "role": "tool_call",
                    "content": f"build(step={n})",
                    "call_id": f"c{n}",
                    "ref": f"{session}-c{n}",
                },
                {
                    "role": "tool_result",
                    "content": LOGS[lang].format(n=n),
                    "call_id": f"c{n}",
                    "ref": f"{session}-r{n}",
                },
            ]
        sent = client.post(
            "/api/v1/events", {"scope": SCOPE, "session": session, "turns": turns}, format="json"
        )
        assert sent.status_code == 201, sent.json()
    embed_memories(list(Memory.objects.filter(embedding__isnull=True).values_list("pk", flat=True)))


SLIDES_ZH, SLIDES_EN = (
    "帮我做一份演示文稿,最后导出 PDF。",
    "Help me make a slide deck, and export it as PDF at the end.",
)
CHANGES = [
    ("zh", "周报整理好以后导出成 Excel表格。", "CSV 就行,别搞复杂了。", "周报可以导出了吗?"),
    ("zh", "报告用英文写。", "那就中文吧。", "报告可以开始写了吗?"),
    ("zh", "把评审会安排在周二。", "算了,周四吧。", "评审会定好了吗?"),
    ("zh", SLIDES_ZH, "格式换一下,用 PPTX。", "可以导出了吗?"),
    ("zh", SLIDES_ZH, "PPTX 吧,后面我还要改。", "现在可以导出了吗?"),
    ("zh", SLIDES_ZH, "等等,最后给我 PPTX 就行。", "导出吧。"),
    ("zh", "做完以后发到群里。", "先别发群里,发我邮箱。", "做完了,现在发吗?"),
    ("en", "Export the quarterly numbers as XLSX when you're done.", "Hmm, CSV is fine actually.", "Ready?"),
    ("en", "Write the meeting notes up as HTML.", "Let's go with Markdown then.", "Are the notes done?"),
    ("en", "Schedule the design review for Tuesday.", "Actually, Thursday.", "Is the review booked?"),
    ("en", "Translate the release notes into German.", "French would be better for them.", "Done?"),
    ("en", SLIDES_EN, "Wait, give me PPTX at the end.", "Go ahead."),
    ("en", SLIDES_EN, "Actually pptx, I'll keep editing.", "Export it."),
    ("en", SLIDES_EN, "No PDF please, I need an editable PPTX.", "Go."),
    ("en", SLIDES_EN, "On second thought, PPTX.", "Can we export now?"),
    # said as a preference, or as a verdict on the old value (services/choices.py _CHOOSES, values.py)
    ("zh", "报告用英文写。", "中文更合适吧,客户都是国内的。", "报告可以开始写了吗?"),
    ("zh", "把评审会安排在周二。", "周四比较好。", "评审会定好了吗?"),
    ("zh", "周报整理好以后导出成 Excel表格。", "Excel 不太行,CSV 吧。", "周报可以导出了吗?"),
    ("zh", SLIDES_ZH, "PDF 不行,我得改,换 PPTX", "现在可以导出了吗?"),
    ("zh", SLIDES_ZH, "改一下,导出 PPTX 不导 PDF 了。", "导出吧。"),
    ("zh", SLIDES_ZH, "嗯…想了想,PPTX 更合适", "可以导出了吗?"),
    ("zh", SLIDES_ZH, "我倾向于 PPTX,方便改。", "现在导出吗?"),
    ("en", "Write the meeting notes up as HTML.", "I'd rather have Markdown.", "Are the notes done?"),
    ("en", "Schedule the design review for Tuesday.", "Thursday makes more sense.", "Is the review booked?"),
    (
        "en",
        "Translate the release notes into German.",
        "I'd prefer French, since most readers are in Lyon.",
        "Done?",
    ),
    ("en", SLIDES_EN, "On second thought, I'd rather have pptx.", "Can we export now?"),
    ("en", SLIDES_EN, "PPTX would be better since I need to edit it.", "Export it."),
    (
        "en",
        "Export the quarterly numbers as XLSX when you're done.",
        "XLSX won't work for them, CSV please.",
        "Ready?",
    ),
]


@pytest.mark.parametrize(("lang", "request_", "change", "question"), CHANGES)
def test_a_change_said_in_few_words_replaces_the_request_in_its_session_only(
    client_for, agent, project_scope, lang, request_, change, question
):
    client = client_for(agent)
    _relay(client, lang, [request_, change])
    body = ask(client, question, session="s1")
    assert change in pinned(body), body["text"]
    assert request_ not in pinned(body)
    assert request_ in set_aside(body)
    aside = next(b for b in body["packet"]["negative"] if b["text"] == request_)
    assert change in aside["reason"]  # set aside naming what replaced it
    # The earlier request is evidence of nothing in force: nowhere else in the packet.
    used = [b["text"] for slot in ("constraints", "evidence", "preferences") for b in body["packet"][slot]]
    assert request_ not in used
    # Another chat: neither is in force there.
    other = ask(client, question, session="s2")
    assert request_ not in pinned(other) and change not in pinned(other)


KEPT = [
    ("zh", "周报整理好以后导出成 Excel表格。", "我之前用 CSV 做过一版。"),
    ("zh", "周报整理好以后导出成 Excel表格。", "CSV 打开太慢了。"),
    ("zh", SLIDES_ZH, "客户那边只有 PPTX 的模板。"),
    ("zh", "把评审会安排在周二。", "周四我不在。"),
    ("en", "Export the quarterly numbers as XLSX when you're done.", "I used CSV for the last report."),
    ("en", SLIDES_EN, "PPTX is a pain to open on Linux."),
    ("en", SLIDES_EN, "Can Keynote even open PPTX?"),
    ("en", "Schedule the design review for Tuesday.", "She was out on Thursday."),
    # a verdict that goes on, a verdict on a value nobody asked for, an opinion
    ("zh", SLIDES_ZH, "PDF 不好打开。"),
    ("zh", SLIDES_ZH, "PPTX 我不太熟。"),
    ("zh", "把评审会安排在周二。", "周四不太行,那天我有课。"),
    ("en", SLIDES_EN, "The PDF won't open on my phone."),
    ("en", SLIDES_EN, "PPTX won't work for this."),
    ("en", "Write the meeting notes up as HTML.", "Markdown is easier to read, I think."),
    ("en", "Schedule the design review for Tuesday.", "Thursday won't work, I'm travelling."),
]


@pytest.mark.parametrize(("lang", "request_", "remark"), KEPT)
def test_a_value_said_of_the_world_or_of_oneself_changes_nothing(
    client_for, agent, project_scope, lang, request_, remark
):
    client = client_for(agent)
    _relay(client, lang, [request_, remark])
    body = ask(client, "?" if lang == "en" else "现在呢?", session="s1")
    assert request_ in pinned(body), body["text"]
    assert set_aside(body) == []
    # No candidate was written for the remark: it is a turn, not a requirement.
    assert not Memory.objects.filter(text=remark).exclude(kind="episodic").exists()


def test_a_bare_value_with_nothing_standing_writes_no_candidate(client_for, agent, project_scope):
    client = client_for(agent)
    _relay(client, "en", ["Thanks, that looks good.", "Markdown, please."])
    _relay(client, "zh", ["那就中文吧。"], session="s3")
    assert (
        not Memory.objects.exclude(kind="episodic")
        .filter(text__in=["Markdown, please.", "那就中文吧。"])
        .exists()
    )
