"""What sets aside the user's own earlier requirement from another conversation (services/correction.py,
`_replaces_users_word`): the opposite of it, or another value said as a change, said to the agent about the
work. A scope holds many of the user's words about their own day; a later choice in one of them ("I think
I'll go with the Snake Plant.") is another value of "the same subject" for the one opposition test, and on ten
LongMemEval haystacks it set aside 25 earlier requirements, none rightly. English and Chinese, no database."""

from __future__ import annotations

import pytest

from governance.services.correction import _replaces_users_word

REPLACES = [
    ("先别动数据库的表结构。", "数据库表结构现在可以改了,记得先备份。"),
    ("支付模块风险太高,暂时不要重构。", "支付模块可以重构了,但必须先补测试。"),
    ("先别碰老的导入脚本,财务还在用。", "老的导入脚本现在可以删掉了,财务不用了。"),
    ("Don't upgrade the database driver yet, it's fragile.", "You can upgrade the database driver now."),
    ("Don't touch the legacy importer, finance still runs it.", "You can clean up the legacy importer now."),
]
KEEPS = [
    # the user's own choices about their life, chat after chat (LongMemEval's haystacks)
    ("I think I'll go with the Italian Garden Salad.", "I think I'll go with the Snake Plant."),
    ("I think I'll go with the Italian Garden Salad.", "I'll try Yelp, thanks."),
    ("Send the report as PDF.", "I think I'll print my boarding pass as PDF instead."),
    ("周报不要用 Excel 做。", "我现在可以用 Excel 记家里的开销了。"),
    ("Don't book the offsite venue yet.", "So good."),
    # a mention of the subject, split from its question or leading into a quote
    ("Never use the text in the 'Answer example' to rate the answer.", "Here's an example:"),
    ("Write a summary no longer than 200 words for an example business.", "For example"),
    # a reply of the user's life or thanks, not of the work, said with a "no"
    (
        "I will provide some information about a web app, and it will be your job to come up with an "
        "architecture and code for it.",
        "No, that's all good.",
    ),
]
# A short Chinese reply leaves its object out: the opposite of the earlier word's act is about the same work.
REPLIES_ZH = [("先别发布。", "可以发了"), ("先别发布。", "发吧,没问题了")]


@pytest.mark.parametrize(("earlier", "later"), REPLIES_ZH)
def test_a_short_chinese_reply_that_lifts_the_act_replaces_it(earlier, later):
    assert _replaces_users_word(earlier, later)


@pytest.mark.parametrize(("earlier", "later"), REPLACES)
def test_the_opposite_said_to_the_agent_about_the_work_replaces_it(earlier, later):
    assert _replaces_users_word(earlier, later)


@pytest.mark.parametrize(("earlier", "later"), KEEPS)
def test_the_user_speaking_of_their_own_life_replaces_nothing(earlier, later):
    assert not _replaces_users_word(earlier, later)
