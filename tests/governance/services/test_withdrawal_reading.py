"""How a sentence that takes something back is read (services/retraction.py): which clause withdraws, and whether
its words name a given request, by a value, by the request's own words or by the name of the setting."""

from __future__ import annotations

import pytest

from governance.services import subject
from governance.services.retraction import withdrawn_words, withdraws
from governance.services.values import values_in

SLIDES_ZH = "帮我做一份演示文稿,最后导出 PDF。"
SLIDES_EN = "Help me make a slide deck, and export it as PDF at the end."


@pytest.mark.parametrize(
    ("said", "request_", "strength"),
    [
        ("PDF 不用导了。", SLIDES_ZH, 3),  # the value, and the request's verb said short
        ("不用导出了,我直接在线看。", SLIDES_ZH, 2),  # the request's own verb
        ("字数不用限制了。", "摘要控制在 200 字以内。", 2),  # the setting's name
        ("Never mind the word limit.", "Limit the summary to 200 words.", 3),
        ("Don't send it to anyone yet.", "Email the invoice to Dana.", 2),  # a recipient is sent to
        ("No need to sort it.", "Sort the table by date.", 2),
        ("Skip staging.", "Deploy to the staging server first.", 3),
        ("预发就跳过吧。", "先部署到预发环境。", 3),
        ("不用翻译了。", "发布说明翻译成法语。", 2),  # a word the segmenter cut otherwise in the request
        ("PDF 不用压缩了。", SLIDES_ZH, 0),  # another act on the PDF: the PDF stays
        ("Skip the tests for now.", "Sort the table by date.", 0),  # names something else
        ("Never mind.", "Sort the table by date.", 0),  # names nothing
        ("不用谢。", "表格按日期排序。", 0),
    ],
)
def test_a_withdrawal_names_what_it_withdraws(said, request_, strength):
    words = withdrawn_words(said)
    assert words is not None
    assert withdraws(words, request_, values_in(request_)) == strength


@pytest.mark.parametrize(
    "said",
    [
        "排序不用太复杂。",  # how, not whether
        "他昨天跳过了预发。",  # what someone did
        "I skipped staging last time.",
        "They skipped staging last time and it broke.",
        "Don't forget the PDF.",  # a reminder asks for it
        "别忘了最后导出 PDF。",
        "不用导出了吗?",  # a question
        "Is there no need to translate the appendix?",
        "别担心,一切都会好的。",  # encouragement
        "Don't worry about the typo.",
        "Export it as PDF.",
    ],
)
def test_no_clause_withdraws_anything(said):
    assert withdrawn_words(said) is None


@pytest.mark.parametrize(
    ("said", "negated"),
    [
        ("give me more examples that have not been provided yet", False),  # what the examples are
        ("Make sure that you don't overwrite the original.", True),
        ("Don't forget the PDF at the end.", False),  # a reminder
        ("要不要重构支付模块?", False),  # an A-not-A question
        ("Never mind the word limit.", False),
        ("暂时不要重构。", True),
    ],
)
def test_what_counts_as_negated(said, negated):
    assert subject.negated(said) is negated
