"""What the extractor reads as a requirement of the user's task, in English and Chinese (services/extraction.py,
`requirement_of`; services/values.py): requests that name a value, boundaries about the work, corrections
(elliptical ones too), standing instructions and stage facts — and what it must not read as one: statements of
what is, things done already, questions, encouragement in the words of an order."""

from __future__ import annotations

import pytest

from governance.services.extraction import RuleExtractor
from governance.services.values import changed, values_in


def read(text: str) -> dict | None:
    found = [e for e in RuleExtractor().extract([{"role": "user", "content": text, "ref": "t1"}])]
    requirements = [e.meta["requirement"] for e in found if e.meta.get("requirement")]
    assert len(requirements) <= 1
    return requirements[0] if requirements else None


@pytest.mark.parametrize(
    ("text", "kind", "values"),
    [
        ("帮我做一份演示文稿,最后导出 PDF。", "request", ["pdf"]),
        ("幻灯片导出成 PDF。", "request", ["pdf"]),
        ("数据用 CSV 格式交付。", "request", ["csv"]),
        ("用中文回答。", "request", ["chinese"]),
        ("周五前把报告发给客户。", "request", ["friday", "客户"]),
        # who it goes to, a file's name, a channel, a product named by a common word, a bare verb with a time
        ("报告发给张伟。", "request", ["张伟"]),
        ("Email the invoice to Dana.", "request", ["dana"]),
        ("Name the output file report_final.docx.", "request", ["report_final.docx"]),
        ("Send the summary to the #general channel.", "request", ["#general"]),
        ("会议纪要用 Word 格式。", "request", ["docx"]),
        ("每周一早上九点发周报。", "request", ["monday", "09:00"]),
        ("Please make a slide deck for me, and export it as PDF at the end.", "request", ["pdf"]),
        ("Write the quarterly report in English.", "request", ["english"]),
        ("Let's schedule the review for Friday at 10:00.", "request", ["friday", "10:00"]),
        ("The report is due on Dec 12.", "request", ["12-12"]),
        ("改成 PPTX,后面还要编辑。", "correction", ["pptx"]),
        ("换成 JSON。", "correction", ["json"]),
        ("改到下周一。", "correction", ["monday"]),
        ("Change it to PPTX, I still need to edit it later.", "correction", ["pptx"]),
        ("make that Markdown", "correction", ["markdown"]),
        ("Move it to Thursday instead.", "correction", ["thursday"]),
        ("只处理我确认的 v3,别覆盖原文件,也先不要发布。", "boundary", ["v3"]),
        (
            "Only work on the v3 I confirmed, don't overwrite the original file, and don't publish yet.",
            "boundary",
            ["v3"],
        ),
        ("不要删除原始数据。", "boundary", []),
        ("Don't send it to the client before Friday.", "boundary", ["friday"]),
        ("From now on, always number the slides.", "standing", []),
        ("以后都用 PDF 导出。", "standing", ["pdf"]),
        ("v3 is the final version.", "stage_fact", ["v3"]),
    ],
)
def test_what_the_user_asks_of_the_task_is_a_requirement(text, kind, values):
    requirement = read(text)
    assert requirement is not None, text
    assert requirement["type"] == kind
    assert [v["norm"] for v in requirement["values"]] == values


@pytest.mark.parametrize(
    "text",
    [
        "我用MySQL",
        "我们团队已经迁到PostgreSQL了",
        "他们用 Slack 沟通。",
        "我昨天导出了 PDF。",
        "文件已经导出成 PDF 了。",
        "I exported it as PDF yesterday.",
        "I'm going to Paris on Tuesday.",
        "Can we export it now?",
        "现在可以导出了吗?",
        "第27页的标题字号太大,帮我调小一点。",
        "Make it better.",
        "Don't give up, buddy!",
        "Don't forget to take breaks and dance it out when you need to destress!",
        "Thanks for always having my back.",
        "Sharing our experiences isn't always easy, but I feel it's important.",
        "别担心,一切都会好的。",
        "不要放弃,加油!",
        "I talked to Dana yesterday.",
        "Fixed in #42.",
        "Word count matters.",
        "他昨天把报告发给张伟了。",
        "周一我发烧了。",
    ],
)
def test_what_is_said_of_oneself_the_world_or_a_persons_life_is_no_requirement(text):
    assert read(text) is None


def test_a_value_named_negated_is_what_the_requirement_replaces():
    requirement = read("Export as PPTX, not PDF.")
    assert [v["norm"] for v in requirement["values"]] == ["pptx"]
    assert [v["norm"] for v in requirement["negated"]] == ["pdf"]
    zh = read("不要用 PDF,用 PPTX。")
    assert [v["norm"] for v in zh["negated"]] == ["pdf"] and [v["norm"] for v in zh["values"]] == ["pptx"]


@pytest.mark.parametrize(
    "text",
    [
        "PDF 就不要了,给我可编辑的版本。",
        "PDF 算了,直接给我源文件。",
        "Skip the PDF, I just need the deck file.",
        "Forget the PDF.",
        "We don't need the PDF anymore.",
        "The PDF isn't needed, send the deck.",
    ],
)
def test_a_value_named_to_be_dropped_is_negated_before_or_after_it(text):
    from governance.services.values import negated_values

    assert [v.norm for v in negated_values(text, values_in(text))] == ["pdf"]


@pytest.mark.parametrize(
    "text", ["PDF 不要压缩得太厉害。", "导出 PDF,不要压缩。", "Export the PDF, no need to zip it."]
)
def test_a_negation_about_what_to_do_with_the_value_keeps_it(text):
    from governance.services.values import negated_values

    assert negated_values(text, values_in(text)) == []


def test_a_boundary_said_in_conversation_lasts_and_one_in_a_pasted_document_does_not():
    assert read("Don't overwrite the original file.")["lasting"] is True
    pasted = " ".join(
        ["The report covers the quarter in detail."] * 8 + ["Don't overwrite the original file."]
    )
    found = [
        e.meta["requirement"]
        for e in RuleExtractor().extract([{"role": "user", "content": pasted, "ref": "t1"}])
        if e.meta.get("requirement")
    ]
    assert found and found[0]["type"] == "boundary" and found[0]["lasting"] is False


@pytest.mark.parametrize(
    ("earlier", "later", "sort"),
    [
        ("我用MySQL", "我们团队已经迁到PostgreSQL了", "store"),
        ("Export the deck as PDF.", "Make that PPTX.", "format"),
        ("Only the v2 is approved.", "Work on v3.", "version"),
        ("周二上午10:00开会", "改到周四", "weekday"),
        ("Write it in English.", "用中文回答。", "language"),
    ],
)
def test_values_of_one_sort_are_read_in_both_languages(earlier, later, sort):
    pairs = changed(values_in(earlier), values_in(later))
    assert [was.sort for was, _ in pairs] == [sort]


def test_an_ambiguous_word_counts_as_a_value_only_when_written_as_one():
    assert values_in("Send the notes by email")[0].norm == "email"
    assert values_in("the red tape") == []
    assert [v.norm for v in values_in("Use a red background colour.")] == ["red"]
    # a file's name, not the format asked for
    assert [(v.sort, v.norm) for v in values_in("Save it as report.pdf")] == [("filename", "report.pdf")]


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("Please export deck 42.", []),
        ("Marketing 5 wants the slides.", []),
        ("Send it by Dec 12.", ["12-12"]),
        ("The deadline is December 12th.", ["12-12"]),
        ("12月12日之前发给客户。", ["12-12"]),
        ("Due 2026-12-12.", ["2026-12-12"]),
    ],
)
def test_a_date_is_a_months_name_and_a_day_and_its_spellings_compare_equal(text, dates):
    """ "deck 42" once read as a date (the month pattern matched "dec" inside "deck"), so "Please export deck
    42." became a request with a value; spellings of one day compare equal."""
    assert [v.norm for v in values_in(text) if v.sort == "date"] == dates
    if not dates:
        assert not [
            e for e in RuleExtractor().extract([{"role": "user", "content": text}]) if e.rule == "request"
        ]


@pytest.mark.parametrize(
    ("text", "lasting"),
    [
        # said to whoever serves the user: a person decides whether it lasts
        ("Please don't use title case in the headings.", True),
        ("Also, don't start writing the fourth email yet.", True),
        ("It is important that you always cite the source of every figure.", True),
        ("Do not exceed 70 characters in the title.", True),
        ("We always deploy the web app on Tuesdays.", True),
        ("先别把报价单发给客户。", True),
        ("合同正文一个字都别改。", True),
        # told of oneself or of the world, asked, or a task's own spec: its session's only
        ("I've been trying to write at least five new jokes a week.", False),
        ("I'll make sure to double-check the invoice numbers before I send them.", False),
        ("It should be at least 100 words long and name the product's key features.", False),
        ("I've heard some banks require at least two forms of ID for the report.", False),
        ("What documents are required for the visa report?", False),
        ("我最近尽量每天至少写500字的报告。", False),
        ("我们也都尽量不要在周五发布版本。", False),
    ],
)
def test_only_an_order_said_to_whoever_serves_the_user_waits_in_review(text, lasting):
    found = [
        e.meta["requirement"]
        for e in RuleExtractor().extract([{"role": "user", "content": text, "ref": "t1"}])
        if e.meta.get("requirement")
    ]
    assert bool(found and found[0]["lasting"]) is lasting, found


@pytest.mark.parametrize(
    "text",
    [
        "So what must I ensure I adhere to, to keep my customers' data safe.",
        "in tabular format, what are all of the properties required for the reporting scenario",
        "Now I need you to generate at least 10 tasks within each category.",
        "Required functionality: trainees can answer a survey once at the start of the course.",
        "With a tight deadline, they must be facing some project management challenges.",
    ],
)
def test_a_question_a_tasks_spec_or_a_story_is_no_boundary_to_review(text):
    found = [
        e.meta["requirement"]
        for e in RuleExtractor().extract([{"role": "user", "content": text, "ref": "t1"}])
        if e.meta.get("requirement")
    ]
    assert not [r for r in found if r["lasting"]], found
