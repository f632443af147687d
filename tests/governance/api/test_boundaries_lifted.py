"""A user lifts a limit they set, relayed by an agent alone between rounds of tool logs: "Don't publish yet." then
"You can publish it now." / "Feel free to publish.", "别覆盖原文件。" then "原文件可以覆盖了。", "Only work on the v3 I
confirmed." then "Move on to v4 now.". In its session the limit is set aside, naming the permission; a
question, a story or what the user does themselves lifts nothing (services/opposite.py: a permission and a
prohibition on the same act, the words of the permission and of time aside; services/orders.py: a permission is
said to whoever does the work)."""

from __future__ import annotations

import pytest

from tests.governance.api.test_elliptical_choices import _relay
from tests.governance.api.test_session_requirements import ask, pinned, set_aside

LIFTED = [
    ("zh", "先不要发布。", "现在可以发布了。"),
    ("en", "Don't publish yet.", "You can publish it now."),
    ("en", "Don't publish yet.", "Feel free to publish."),
    ("zh", "别覆盖原文件。", "原文件可以覆盖了。"),
    ("en", "Don't overwrite the original file.", "Go ahead and overwrite the original."),
    ("zh", "先别发给客户。", "可以发给客户了。"),
    ("en", "Don't send it to the client before Friday.", "It's fine to send it to the client today."),
    ("zh", "暂时不要合并到主分支。", "可以合并了。"),
    ("en", "Don't merge into main yet.", "OK, merge it."),
    ("zh", "只处理我确认的 v3。", "现在开始处理 v4。"),
    ("en", "Only work on the v3 I confirmed.", "Move on to v4 now."),
]


@pytest.mark.parametrize(("lang", "limit", "permission"), LIFTED)
def test_a_permission_lifts_the_limit_in_its_session(
    client_for, agent, project_scope, lang, limit, permission
):
    client = client_for(agent)
    _relay(client, lang, [limit, permission])
    body = ask(client, "Go on." if lang == "en" else "继续。", session="s1")
    assert limit not in pinned(body), body["text"]
    assert limit in set_aside(body)
    assert permission in pinned(body)


KEPT = [
    ("en", "Don't publish yet.", "Can we publish it now?"),
    ("zh", "先不要发布。", "现在可以发布了吗?"),
    ("en", "Don't publish yet.", "They published their post yesterday."),
    ("zh", "别覆盖原文件。", "他昨天把原文件覆盖了。"),
    ("en", "Don't merge into main yet.", "Merging is always painful on this repo."),
    ("zh", "支付模块暂时不要重构。", "支付模块要不要重构,你怎么看?"),
]


@pytest.mark.parametrize(("lang", "limit", "remark"), KEPT)
def test_a_question_or_a_story_lifts_nothing(client_for, agent, project_scope, lang, limit, remark):
    client = client_for(agent)
    _relay(client, lang, [limit, remark])
    body = ask(client, "Go on." if lang == "en" else "继续。", session="s1")
    assert limit in pinned(body), body["text"]
    assert set_aside(body) == []
