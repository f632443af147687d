"""The user says yes to what the assistant offered, relayed by an agent alone: "要不要改成 PPTX,方便你后面编辑?" —
"好的。", "Should I export it as PPTX instead?" — "Yes please.". The user's turn names nothing; with the offer
just before it, it asks for what the offer names, and in its session the earlier request is set aside. A no,
a yes to an offer of nothing, a yes to a statement, or an offer the user never answered change nothing
(services/acceptance.py)."""

from __future__ import annotations

import pytest

from governance.models import Memory, Status
from governance.propagation import embed_memories
from tests.governance.api.test_elliptical_choices import LOGS, SCOPE, SLIDES_EN, SLIDES_ZH
from tests.governance.api.test_session_requirements import ask, pinned, set_aside


def _relay(client, lang: str, rounds: list[tuple[str | None, str]], *, session: str = "s1") -> None:
    """Each round: the assistant's turn (if any), then the user's, then a tool call and its long log; one event a
    round, so the user's answer opens its event and the offer it answers was stored with the round before."""
    for n, (assistant, user) in enumerate(rounds, start=1):
        turns = []
        if n > 1 and assistant:
            # the assistant's offer ends the round before, in its own event
            sent = client.post(
                "/api/v1/events",
                {
                    "scope": SCOPE,
                    "session": session,
                    "turns": [{"role": "assistant", "content": assistant, "ref": f"{session}-q{n}"}],
                },
                format="json",
            )
            assert sent.status_code == 201, sent.json()
        turns.append({"role": "user", "content": user, "ref": f"{session}-u{n}"})
        turns += [
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


ACCEPTED = [
    ("zh", "摘要控制在 200 字以内。", "需要我把字数控制在 100 字以内吗?", "需要。"),
    ("zh", "销售数据用柱状图。", "要不要换成折线图?", "换吧。"),
    ("en", "Sort the table by date.", "How about sorting by price?", "Good idea."),
    ("en", SLIDES_EN, "I can export it as PPTX instead if you prefer.", "Yep, go for it."),
    ("zh", SLIDES_ZH, "要不要改成 PPTX,方便你后面编辑?", "好的。"),
    ("zh", SLIDES_ZH, "要不要改成 PPTX,方便你后面编辑?", "行,就这么办。"),
    ("zh", "摘要控制在 200 字以内。", "建议放宽到 300 字,内容比较多。", "可以。"),
    ("zh", "报告发给张伟。", "张伟在休假,我发给李娜可以吗?", "好啊。"),
    ("en", SLIDES_EN, "Should I export it as PPTX instead, so you can keep editing?", "Yes please."),
    ("en", SLIDES_EN, "Would you like me to switch the export to PPTX?", "Sure, go ahead."),
    ("en", "Limit the summary to 200 words.", "Should I cap it at 100 words instead?", "Sounds good."),
    (
        "en",
        "Sort the table by date.",
        "I suggest sorting it by price, it's easier to compare.",
        "OK, do that.",
    ),
]


@pytest.mark.parametrize(("lang", "request_", "offer", "yes"), ACCEPTED)
def test_a_yes_to_the_assistants_offer_replaces_the_request_in_its_session(
    client_for, agent, project_scope, lang, request_, offer, yes
):
    client = client_for(agent)
    _relay(client, lang, [(None, request_), (offer, yes)])
    body = ask(client, "Go on.", session="s1")
    assert request_ not in pinned(body), body["text"]
    assert request_ in set_aside(body)
    accepted = Memory.objects.exclude(kind="episodic").get(meta__has_key="accepts")
    assert accepted.text.startswith(yes) and accepted.meta["accepts"]["text"] in offer
    assert (
        accepted.source_kind == "user" and accepted.status == Status.PROPOSED
    )  # a correction: a person hears
    assert accepted.text in pinned(body)
    other = ask(client, "Go on.", session="s2")
    assert accepted.text not in pinned(other) and request_ not in pinned(other)


NOTHING = [
    ("en", SLIDES_EN, "Should I export it as PPTX instead?", "No, keep the PDF."),
    ("zh", SLIDES_ZH, "要不要改成 PPTX?", "不用了。"),
    ("en", SLIDES_EN, "Should I continue with the next slide?", "Yes."),  # an offer of no value
    ("zh", SLIDES_ZH, "已经导出 PPTX 的预览了。", "好的。"),  # a statement, not an offer
    ("en", SLIDES_EN, "Should I export it as PPTX instead?", "Make the title bigger first."),  # not answered
]


@pytest.mark.parametrize(("lang", "request_", "offer", "answer"), NOTHING)
def test_a_no_or_a_yes_to_nothing_changes_nothing(
    client_for, agent, project_scope, lang, request_, offer, answer
):
    client = client_for(agent)
    _relay(client, lang, [(None, request_), (offer, answer)])
    body = ask(client, "Go on.", session="s1")
    assert request_ in pinned(body), body["text"]
    assert set_aside(body) == []
    assert not Memory.objects.filter(meta__has_key="accepts").exists()


def test_a_yes_in_another_session_accepts_nothing_offered_here(client_for, agent, project_scope):
    client = client_for(agent)
    _relay(
        client,
        "en",
        [(None, SLIDES_EN), ("Should I export it as PPTX instead?", "Let me think.")],
        session="s1",
    )
    _relay(client, "en", [(None, "Yes please.")], session="s2")
    assert not Memory.objects.filter(meta__has_key="accepts").exists()
    assert SLIDES_EN in pinned(ask(client, "Go on.", session="s1"))


def test_a_yes_to_an_offer_a_person_forgot_accepts_nothing(client_for, owner, agent, project_scope):
    """The offer's turn was forgotten before the user answered: the answer does not read the forgotten text."""
    client = client_for(agent)
    _relay(client, "zh", [(None, SLIDES_ZH)])
    sent = client.post(
        "/api/v1/events",
        {
            "scope": SCOPE,
            "session": "s1",
            "turns": [{"role": "assistant", "content": "要不要改成 PPTX?", "ref": "q"}],
        },
        format="json",
    )
    assert sent.status_code == 201, sent.json()
    offer = Memory.objects.get(kind="episodic", source_ref="q")
    forgot = client_for(owner).post(
        f"/api/v1/memories/{offer.pk}/forget", {"reason": "wrong offer", "mode": "soft"}, format="json"
    )
    assert forgot.status_code == 202, forgot.content
    said = client.post(
        "/api/v1/events",
        {"scope": SCOPE, "session": "s1", "turns": [{"role": "user", "content": "好的。", "ref": "u-yes"}]},
        format="json",
    )
    assert said.status_code == 201, said.json()
    assert not Memory.objects.filter(meta__has_key="accepts").exists()
    assert SLIDES_ZH in pinned(ask(client, "继续。", session="s1"))


# A pick of one of the alternatives the assistant's question offers: the first or the last of them.
PICKS = [
    ("zh", SLIDES_ZH, "最后导出 PDF 还是 PPTX?", "后者。", "PPTX"),
    ("zh", SLIDES_ZH, "导出成 PPTX 还是 PDF?", "前者吧", "PPTX"),
    ("zh", "报告用英文写。", "报告用英文还是中文写?", "第二个", "中文"),
    ("en", SLIDES_EN, "Should the export be PDF or PPTX?", "The latter, please.", "PPTX"),
    (
        "en",
        "Schedule the review for Tuesday.",
        "Would Thursday or Friday work better?",
        "The first one.",
        "Thursday",
    ),
]


@pytest.mark.parametrize(("lang", "request_", "question", "pick", "value"), PICKS)
def test_a_pick_of_the_assistants_alternatives_replaces_the_request(
    client_for, agent, project_scope, lang, request_, question, pick, value
):
    client = client_for(agent)
    _relay(client, lang, [(None, request_), (question, pick)])
    body = ask(client, "Go on.", session="s1")
    assert request_ not in pinned(body) and request_ in set_aside(body), body["text"]
    accepted = Memory.objects.exclude(kind="episodic").get(meta__has_key="accepts")
    assert accepted.text == f"{pick} ({value})" and accepted.text in pinned(body)


NO_PICK = [
    ("zh", SLIDES_ZH, "要我把标题改大吗?", "后者。"),  # no alternatives
    ("en", SLIDES_EN, "PDF or PPTX are both fine for the client.", "The latter."),  # not a question
    ("en", SLIDES_EN, "Should I send it to Dana or export it as PPTX?", "The second one."),  # of two sorts
    ("zh", SLIDES_ZH, "最后导出 PDF 还是 PPTX?", "后者的字体有问题,先看看。"),  # says something of its own
]


@pytest.mark.parametrize(("lang", "request_", "question", "answer"), NO_PICK)
def test_a_pick_of_no_alternatives_changes_nothing(
    client_for, agent, project_scope, lang, request_, question, answer
):
    client = client_for(agent)
    _relay(client, lang, [(None, request_), (question, answer)])
    body = ask(client, "Go on.", session="s1")
    assert request_ in pinned(body), body["text"]
    assert not Memory.objects.filter(meta__has_key="accepts").exists()
