"""What the user says about their own task counts in their session at once, through the public API with an
agent's token only (issue 48): requests with a value, boundaries and corrections (elliptical ones too) are
pinned for the session, labelled as the user's, a later correction sets the earlier requirement aside there,
the lasting ones reach the review queue, a flood of tool logs never pushes the user's words out, and a new
chat neither pins the old requirement nor loses the pending correction. In Chinese and in English, for the
seeds' slide deck and for projects of other sorts."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from governance.models import Memory
from governance.propagation import embed_memories

LOG = (
    "render_log page={page}: warning: font fallback; "
    + "Noto Sans CJK not found, using fallback font; glyph missing U+4E2D; " * 12
)
LOG_ZH = (
    "render_log page={page}: 警告: 字体回退; "
    + "Noto Sans CJK 未找到, 使用 fallback 字体; glyph 缺失 U+4E2D; " * 12
)


@dataclass(frozen=True)
class Story:
    """A conversation: the user's turns by round; every other round is a layout request with a render log."""

    said: dict[int, str]
    filler: str  # a layout request, "{page}" in it
    log: str
    reply: str
    done: str  # the assistant's answer after a tool call, "{page}" in it


SLIDES_ZH = Story(
    said={
        1: "帮我做一份演示文稿,最后导出 PDF。",
        5: "改成 PPTX,后面还要编辑。",
        12: "只处理我确认的 v3,别覆盖原文件,也先不要发布。",
        30: "现在可以导出了吗?",
    },
    filler="第{page}页的标题字号太大,帮我调小一点。",
    log=LOG_ZH,
    reply="好的。",
    done="好的,已调整第{page}页的版式。",
)
SLIDES_EN = Story(
    said={
        1: "Please make a slide deck for me, and export it as PDF at the end.",
        5: "Change it to PPTX, I still need to edit it later.",
        12: "Only work on the v3 I confirmed, don't overwrite the original file, and don't publish yet.",
        30: "Can we export it now?",
    },
    filler="The title on page {page} is too big, please make it smaller.",
    log=LOG,
    reply="Sure.",
    done="Done, page {page} is adjusted.",
)


def play(client, story: Story, *, session: str = "s1", rounds: int = 30, scope: str = "acme/slides") -> dict:
    """Relay the conversation round by round as an agent does, asking for context every round (budget 1,500);
    returns the last packet."""
    body = None
    for r in range(1, rounds + 1):
        text = story.said.get(r) or story.filler.format(page=r)
        turns = [{"role": "user", "content": text, "ref": f"t{r}"}]
        if r not in story.said:
            turns += [
                {"role": "tool_call", "content": f"render(page={r})", "call_id": f"call-{r}", "ref": f"c{r}"},
                {
                    "role": "tool_result",
                    "content": story.log.format(page=r),
                    "call_id": f"call-{r}",
                    "ref": f"r{r}",
                },
                {"role": "assistant", "content": story.done.format(page=r), "ref": f"a{r}"},
            ]
        else:
            turns.append({"role": "assistant", "content": story.reply, "ref": f"a{r}"})
        sent = client.post(
            "/api/v1/events", {"scope": scope, "session": session, "turns": turns}, format="json"
        )
        assert sent.status_code == 201, sent.json()
        if r == rounds:  # the worker's part; the earlier rounds are found by their words meanwhile
            embed_memories(list(Memory.objects.filter(embedding__isnull=True).values_list("pk", flat=True)))
        asked = client.post(
            "/api/v1/context",
            {"scope": scope, "session": session, "query": text, "budget_tokens": 1500},
            format="json",
        )
        assert asked.status_code == 200, asked.json()
        body = asked.json()
    return body


def ask(client, query: str, *, session: str, scope: str = "acme/slides", budget: int | None = 1500) -> dict:
    payload = {"scope": scope, "session": session, "query": query}
    if budget is not None:
        payload["budget_tokens"] = budget
    asked = client.post("/api/v1/context", payload, format="json")
    assert asked.status_code == 200, asked.json()
    return asked.json()


def say(client, text: str, *, session: str, ref: str, scope: str = "acme/slides", role: str = "user") -> None:
    sent = client.post(
        "/api/v1/events",
        {"scope": scope, "session": session, "turns": [{"role": role, "content": text, "ref": ref}]},
        format="json",
    )
    assert sent.status_code == 201, sent.json()
    embed_memories(list(Memory.objects.filter(embedding__isnull=True).values_list("pk", flat=True)))


def section(text: str, title: str) -> str:
    if f"## {title}" not in text:
        return ""
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def pinned(body: dict) -> list[str]:
    return [b["text"] for b in body["packet"]["constraints"]]


def set_aside(body: dict) -> list[str]:
    return [b["text"] for b in body["packet"]["negative"] if b.get("set_aside")]


def set_aside_in_part_or_whole(body: dict) -> list[str]:
    """The requirements set aside, each by its whole text also when a later one took only part of it."""
    return [(b.get("part_of") or b)["text"] for b in body["packet"]["negative"] if b.get("set_aside")]


@pytest.mark.parametrize("story", [SLIDES_ZH, SLIDES_EN], ids=["zh", "en"])
def test_round_30_pins_the_correction_and_both_boundaries_and_sets_the_first_format_aside(
    client_for, agent, reviewer, project_scope, story
):
    body = play(client_for(agent), story)
    text = body["text"]
    constraints = section(text, "Constraints in force")
    assert "PPTX" in constraints and "PDF" not in constraints
    assert story.said[12] in pinned(body)  # both boundaries, and v3
    assert "v3" in constraints
    # Set aside: the whole request, or (when the deck is asked for in a clause of its own) its format's clause.
    assert story.said[1] in set_aside_in_part_or_whole(body)
    gone = section(text, "No longer in force")
    assert "PDF" in gone and "PPTX" in gone  # what was set aside, and by what
    # The first request is no evidence any more, and every pinned requirement says it is the user's.
    assert "PDF" not in section(text, "Evidence")
    for block in body["packet"]["constraints"]:
        note = block["session_requirement"]
        assert note["told_by"] == "agent" and note["session"] == "s1" and note["turn"].startswith("t")
        assert "in force for this session" in block["reason"] or "in force here" in block["reason"]
    # The logs cost digests, not the user's words: the latest request is there and so is the round before.
    recent = section(text, "Recent interaction")
    assert story.said[30] in recent
    assert story.filler.format(page=29) in recent
    logs = [
        b for b in body["packet"]["recent"] if b.get("said_by") == "tool" and b.get("role") == "tool_result"
    ]
    assert logs and all(b.get("digest", {}).get("memory_id") == b["memory_id"] for b in logs)
    assert all(len(b["text"]) < len(story.log.format(page=1)) for b in logs)
    assert body["budget"]["used"] <= 1500


@pytest.mark.parametrize("story", [SLIDES_ZH, SLIDES_EN], ids=["zh", "en"])
def test_the_review_queue_hears_of_the_correction_and_the_boundaries_not_of_the_layout_requests(
    client_for, agent, reviewer, project_scope, story
):
    play(client_for(agent), story, rounds=13)
    queue = client_for(reviewer).get("/api/v1/review", {"scope": "acme/slides"}).json()
    items = queue["results"] if isinstance(queue, dict) else queue
    texts = {i["memory"]["text"]: i for i in items}
    assert set(texts) == {story.said[5], story.said[12]}
    correction = texts[story.said[5]]
    # What it would replace, and the turn it came from.
    assert correction["conflicting"]["text"] == story.said[1]
    assert [e["text"] for e in correction["supporting_episodes"]] == [story.said[5]]
    assert correction["requirement"]["type"] == "correction"
    assert correction["requirement"]["session"] == "s1" and correction["requirement"]["turn"] == "t5"


@pytest.mark.parametrize("story", [SLIDES_ZH, SLIDES_EN], ids=["zh", "en"])
def test_a_new_chat_does_not_pin_the_old_format_and_mentions_the_pending_correction(
    client_for, agent, project_scope, story
):
    client = client_for(agent)
    play(client, story, rounds=13)
    body = ask(client, story.said[30], session="s2")
    assert not [b for b in body["packet"]["constraints"] if "PDF" in b["text"]]
    text = body["text"]
    assert "PPTX" in text
    if "PDF" in text:  # the old request may be recalled: never as evidence standing alone
        assert "PDF" not in section(text, "Evidence")
        assert "PPTX" in section(text, "No longer in force")


def test_a_reviewers_confirmation_makes_the_correction_the_scopes_rule_in_every_session(
    client_for, agent, reviewer, project_scope
):
    client = client_for(agent)
    play(client, SLIDES_EN, rounds=6)
    correction = Memory.objects.exclude(kind="episodic").get(text=SLIDES_EN.said[5])
    answer = client_for(reviewer).post(
        f"/api/v1/memories/{correction.pk}/confirm", {"reason": "ok"}, format="json"
    )
    assert answer.status_code == 200 and answer.json()["status"] == "active", answer.json()
    for session in ("s1", "s2"):
        body = ask(client, "export the deck now", session=session)
        rules = [b for b in body["packet"]["constraints"] if b["memory_id"] == correction.pk]
        assert rules and "session_requirement" not in rules[0], session
        assert not [b for b in body["packet"]["constraints"] if "PDF" in b["text"]], session


def test_a_rejected_correction_ends_in_the_session_and_the_earlier_requirement_holds_again(
    client_for, agent, reviewer, project_scope
):
    client = client_for(agent)
    play(client, SLIDES_ZH, rounds=6)
    correction = Memory.objects.exclude(kind="episodic").get(text=SLIDES_ZH.said[5])
    answer = client_for(reviewer).post(
        f"/api/v1/memories/{correction.pk}/reject", {"reason": "客户合同要求 PDF"}, format="json"
    )
    assert answer.status_code == 200, answer.json()
    body = ask(client, "现在可以导出了吗?", session="s1")
    assert SLIDES_ZH.said[1] in pinned(body)
    assert SLIDES_ZH.said[5] not in pinned(body)
    first = next(b for b in body["packet"]["constraints"] if b["text"] == SLIDES_ZH.said[1])
    assert first["session_requirement"]["correction_rejected"]["memory_id"] == correction.pk
    assert "rejected by a reviewer" in body["text"]


@pytest.mark.parametrize(
    ("first", "second", "correction", "value", "old"),
    [
        (
            "Export the slides as PDF.",
            "Send the data tables as CSV.",
            "Make that Markdown.",
            "Markdown",
            None,
        ),
        ("幻灯片导出成 PDF。", "数据表用 CSV 格式发给我。", "改成 Markdown。", "Markdown", None),
    ],
    ids=["en", "zh"],
)
def test_an_elliptical_correction_that_fits_two_requirements_is_said_to_be_ambiguous(
    client_for, agent, project_scope, first, second, correction, value, old
):
    client = client_for(agent)
    say(client, first, session="s1", ref="t1")
    say(client, second, session="s1", ref="t2")
    # The round just before names neither: "that" could be either one.
    say(
        client,
        "Thanks, that looks good so far." if first.isascii() else "谢谢,目前看起来不错。",
        session="s1",
        ref="t3",
    )
    say(client, correction, session="s1", ref="t4")
    body = ask(client, "what format?", session="s1")
    assert set(pinned(body)) == {first, second, correction}
    block = next(b for b in body["packet"]["constraints"] if b["text"] == correction)
    assert {a["text"] for a in block["session_requirement"]["ambiguous"]} == {first, second}
    assert not set_aside(body)
    assert "AMBIGUOUS" in body["text"]


@pytest.mark.parametrize(
    ("turns", "correction", "kept", "replaced"),
    [
        (
            [
                ("user", "Export the slides as PDF."),
                ("user", "Send the data tables as CSV."),
                ("assistant", "The data tables are ready; shall I attach them as CSV files?"),
            ],
            "Make that Markdown.",
            "Export the slides as PDF.",
            "Send the data tables as CSV.",
        ),
        (
            [
                ("user", "幻灯片导出成 PDF。"),
                ("user", "数据表用 CSV 格式发给我。"),
                ("assistant", "幻灯片已经准备好了,要现在导出 PDF 吗?"),
            ],
            "改成 Markdown。",
            "数据表用 CSV 格式发给我。",
            "幻灯片导出成 PDF。",
        ),
    ],
    ids=["en", "zh"],
)
def test_an_elliptical_correction_is_read_against_what_the_conversation_is_about(
    client_for, agent, project_scope, turns, correction, kept, replaced
):
    client = client_for(agent)
    for n, (role, text) in enumerate(turns, start=1):
        say(client, text, session="s1", ref=f"t{n}", role=role)
    say(client, correction, session="s1", ref="t9")
    body = ask(client, "go on", session="s1")
    assert set(pinned(body)) == {kept, correction}
    assert set_aside(body) == [replaced]


@pytest.mark.parametrize(
    ("turns", "query", "in_force", "aside"),
    [
        (
            [
                "Write the quarterly report in English.",
                "Don't send it to the client before Friday.",
                "Actually, make that German.",
            ],
            "is the report ready to go out?",
            {"Actually, make that German.", "Don't send it to the client before Friday."},
            ["Write the quarterly report in English."],
        ),
        (
            ["数据用 CSV 格式交付。", "不要删除原始数据。", "换成 JSON。"],
            "数据可以交付了吗?",
            {"换成 JSON。", "不要删除原始数据。"},
            ["数据用 CSV 格式交付。"],
        ),
        (
            ["Set the team sync for Tuesday at 10:00.", "Move it to Thursday instead."],
            "when is the team sync?",
            {"Move it to Thursday instead."},
            ["Set the team sync for Tuesday at 10:00."],
        ),
        (
            ["周五前把报告发给客户。", "不要抄送财务。", "改到下周一。"],
            "报告什么时候发?",
            {"改到下周一。", "不要抄送财务。"},
            ["周五前把报告发给客户。"],
        ),
    ],
    ids=["report-en", "data-zh", "meeting-en", "deadline-zh"],
)
def test_other_projects_requirements_hold_in_their_session(
    client_for, agent, project_scope, turns, query, in_force, aside
):
    client = client_for(agent)
    for n, text in enumerate(turns, start=1):
        say(client, text, session="s1", ref=f"t{n}")
    body = ask(client, query, session="s1")
    assert in_force <= set(pinned(body))
    assert set_aside(body) == aside


@pytest.mark.parametrize(
    ("user", "assistant"),
    [
        ("Please make a slide deck for me.", "I suggest we export it as PDF instead; don't publish it yet."),
        ("帮我做一份演示文稿。", "建议改成 PDF 导出,先不要发布。"),
    ],
    ids=["en", "zh"],
)
def test_an_assistants_suggestion_never_counts_as_the_users(
    client_for, agent, project_scope, user, assistant
):
    client = client_for(agent)
    sent = client.post(
        "/api/v1/events",
        {
            "scope": "acme/slides",
            "session": "s1",
            "turns": [
                {"role": "user", "content": user, "ref": "t1"},
                {"role": "assistant", "content": assistant, "ref": "a1"},
            ],
        },
        format="json",
    )
    assert sent.status_code == 201
    body = ask(client, "export the deck", session="s1")
    assert not [b for b in body["packet"]["constraints"] if b.get("session_requirement")]
    said = [b for s in ("recent", "evidence") for b in body["packet"][s] if b["text"] == assistant]
    assert said and all(b["said_by"] == "assistant" for b in said)


def test_another_agent_using_the_same_session_name_does_not_get_the_requirements(
    client_for, agent, project_scope
):
    from governance.models import Role
    from governance.services.principal import grant_add, principal_ensure

    other = principal_ensure(name="other-agent", kind="agent", actor=None)
    grant_add(principal=other, scope=project_scope, role=Role.AGENT, actor=None)
    play(client_for(agent), SLIDES_EN, rounds=13)
    body = ask(client_for(other), SLIDES_EN.said[30], session="s1")
    assert not [b for b in body["packet"]["constraints"] if b.get("session_requirement")]


def test_a_request_without_a_budget_gets_the_documented_default(client_for, agent, project_scope):
    from governance.recall.pack import DEFAULT_BUDGET_TOKENS

    client = client_for(agent)
    say(client, "Export the slides as PDF.", session="s1", ref="t1")
    body = ask(client, "export", session="s1", budget=None)
    assert body["budget"]["limit"] == DEFAULT_BUDGET_TOKENS


@pytest.mark.parametrize("story", [SLIDES_ZH, SLIDES_EN], ids=["zh", "en"])
def test_the_hand_off_holds_the_stage_the_user_established_and_what_they_replaced(
    client_for, agent, project_scope, story
):
    client = client_for(agent)
    play(client, story, rounds=13)
    asked = client.post(
        "/api/v1/context",
        {"scope": "acme/slides", "session": "s2", "query": story.said[30], "include": ["handoff"]},
        format="json",
    )
    assert asked.status_code == 200, asked.json()
    lines = asked.json()["packet"]["handoff"]
    stage = [b for b in lines if b["section"] == "goal" and "v3" in b["text"]]
    assert stage and stage[0]["nature"] == "request"
    replaced = [b for b in lines if b["section"] == "superseded" and b["text"].endswith(story.said[1])]
    assert replaced and replaced[0]["replaced_by"]["text"] == story.said[5]
