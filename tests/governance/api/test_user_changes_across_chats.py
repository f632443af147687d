"""The user changes their mind in a later conversation, relayed by an agent alone: "先别动数据库的表结构。" one
week, "数据库表结构现在可以改了,记得先备份。" the next. In the third week's packet the earlier word is set aside
as replaced by the later one (neither is in force outside its session until a person decides; both wait in
the review queue, linked), and it is not offered as evidence beside it. A later word about another thing
("the reporting module") sets nothing aside. English and Chinese (services/correction.py,
rules_corrected_by_meaning, reads the user's own earlier requirements as it reads the rules in force)."""

from __future__ import annotations

import pytest

from governance.models import Memory, Relation
from governance.propagation import embed_memories
from tests.governance.api.test_session_requirements import ask, pinned

SCOPE = "acme/slides"
LOG = "pytest: 112 passed, 0 failed in 14.2s; coverage 81%\n" * 8


def _week(client, session: str, text: str, lang: str) -> None:
    turns = [{"role": "user", "content": text, "ref": f"{session}-u"}]
    for r in range(2):
        turns += [
            {"role": "assistant", "content": "好的。" if lang == "zh" else "OK.", "ref": f"{session}-a{r}"},
            {
                "role": "tool_call",
                "content": "pytest",
                "call_id": f"{session}-c{r}",
                "ref": f"{session}-c{r}",
            },
            {"role": "tool_result", "content": LOG, "call_id": f"{session}-c{r}", "ref": f"{session}-r{r}"},
        ]
    sent = client.post("/api/v1/events", {"scope": SCOPE, "session": session, "turns": turns}, format="json")
    assert sent.status_code == 201, sent.json()


CHANGED = [
    ("zh", "先别动数据库的表结构。", "数据库表结构现在可以改了,记得先备份。", "帮我改一下数据库的表结构。"),
    ("zh", "周报不要抄送给老板。", "周报可以抄送给老板了。", "周报发给谁?"),
    (
        "zh",
        "支付模块风险太高,暂时不要重构。",
        "支付模块可以重构了,但必须先补测试。",
        "帮我优化一下支付模块。",
    ),
    (
        "en",
        "Don't upgrade the database driver yet, it's fragile.",
        "You can upgrade the database driver now, we have tests for it.",
        "Upgrade the database driver.",
    ),
    (
        "en",
        "The payment module is too risky, don't refactor it for now.",
        "You can refactor the payment module now, but add tests first.",
        "Please optimise the payment module.",
    ),
    # The later word gives leave with another verb than the one the earlier one forbade.
    (
        "en",
        "Don't touch the legacy importer, finance still runs it.",
        "You can clean up the legacy importer now, finance moved off it.",
        "Tidy the importer code.",
    ),
    (
        "zh",
        "先别碰老的导入脚本,财务还在用。",
        "老的导入脚本现在可以删掉了,财务不用了。",
        "清理一下导入脚本。",
    ),
]


def _texts(body: dict, *slots: str) -> list[str]:
    return [b["text"] for slot in slots for b in body["packet"][slot]]


@pytest.mark.parametrize(("lang", "before", "after", "question"), CHANGED)
def test_the_users_later_word_sets_their_earlier_one_aside_in_every_chat(
    client_for, agent, project_scope, lang, before, after, question
):
    client = client_for(agent)
    _week(client, "week1", before, lang)
    _week(client, "week2", after, lang)
    embed_memories(list(Memory.objects.filter(embedding__isnull=True).values_list("pk", flat=True)))
    body = ask(client, question, session="week3")
    assert before in _texts(body, "negative"), body["text"]
    assert before not in _texts(body, "constraints", "evidence", "preferences", "recent")
    gone = body["text"].split("## No longer in force", 1)[1].split("\n## ", 1)[0]
    assert after in gone  # says by what
    # Nothing is in force in week 3: no person decided, and neither was said in this conversation.
    assert before not in pinned(body) and after not in pinned(body)
    # Both wait for a person, linked, so the reviewer decides with both in view.
    earlier = Memory.objects.exclude(kind="episodic").get(text=before)
    later = Memory.objects.exclude(kind="episodic").get(text=after)
    assert (earlier.status, later.status) == ("proposed", "proposed")
    assert Relation.objects.filter(source=later, target=earlier, kind="contradicts").exists()


UNRELATED = [
    (
        "en",
        "The payment module is too risky, don't refactor it for now.",
        "You can refactor the reporting module now, but add tests first.",
        "Please optimise the payment module.",
    ),
    # Another verb on the same words that go on to name another thing (the importer's docs).
    (
        "en",
        "Don't touch the legacy importer.",
        "Please review the legacy importer docs.",
        "Tidy the importer.",
    ),
    # One shared word, another thing done to another thing.
    ("en", "Never deploy billing on Fridays.", "You can restart the billing service now.", "Deploy billing."),
    ("zh", "先别碰老的导入脚本。", "新的导出脚本可以删掉了。", "清理一下导入脚本。"),
    # The user speaking of their own life in a later chat, in the words of the earlier rule (a scope holds
    # many such sentences: LongMemEval's haystacks set aside 25 requirements in ten conversations so).
    (
        "en",
        "Don't use Zoom for the client call.",
        "I think I'll use Zoom to call my mom tonight.",
        "Set up the call.",
    ),
    ("zh", "周报不要用 Excel 做。", "我打算用 Excel 记一下家里的开销。", "周报怎么做?"),
]


@pytest.mark.parametrize(("lang", "before", "after", "question"), UNRELATED)
def test_a_later_word_about_another_thing_sets_nothing_aside(
    client_for, agent, project_scope, lang, before, after, question
):
    client = client_for(agent)
    _week(client, "week1", before, lang)
    _week(client, "week2", after, lang)
    embed_memories(list(Memory.objects.filter(embedding__isnull=True).values_list("pk", flat=True)))
    body = ask(client, question, session="week3")
    assert before not in _texts(body, "negative"), body["text"]
    assert not Relation.objects.filter(kind="contradicts").exists()
