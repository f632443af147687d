"""The replay suite's `agent_only` category: what the user says about their task reaches the service only as
turns an agent relays (`POST /api/v1/events`, the agent's token), between long tool logs, often elliptical,
in English or Chinese; no person wrote a rule, except where the case says so. Five cases, one per task in
turn (English and Chinese start apart, so the one-task smoke suite holds two of them):

- buried: a request with a value, then its elliptical correction ("Make that Markdown.", "改成 Markdown 吧。"),
  both under rounds of render logs: the correction is pinned for the session, the request set aside naming it.
- boundary: a boundary said once ("Don't overwrite …", "先不要发给客户。"), then rounds of logs: still pinned.
- english_key: a person confirmed a rule under an English key; the user corrects it in other words (in
  Chinese, for the Chinese tasks): the correction overrides it in the session.
- new_chat: a request and its correction said in another conversation: the old request is not in force here.
- assistant: the assistant suggests another value than the user's request: the user's request stays pinned.

Each memory the extractor writes from a turn is known by the turn's label and ":said" (devtools/evaluation/
loader.py)."""

from __future__ import annotations

from dataclasses import replace

from devtools.evaluation.suite import EventSpec, Expect, MemorySpec, TurnSpec

DAY = 24 * 60
CASES = ("buried", "boundary", "english_key", "new_chat", "assistant")
CASE_START = {"en": 0, "zh": 3}

# (the request with {v}, pairs of values of one sort (asked, corrected to), the elliptical correction with {v},
# the question asked at the end)
REQUESTS = {
    "en": (
        (
            "Please put together the quarterly sales summary and export it as {v} when it's done.",
            (("PDF", "Markdown"), ("PDF", "DOCX"), ("XLSX", "CSV")),
            "Make that {v}.",
            "Is the summary ready to export?",
        ),
        (
            "Draft the onboarding guide for new hires and deliver it as {v}.",
            (("DOCX", "PDF"), ("HTML", "Markdown")),
            "Actually, change it to {v}.",
            "Can you deliver the onboarding guide now?",
        ),
        (
            "Translate the release notes into {v} for the partner team.",
            (("French", "German"), ("Japanese", "Korean"), ("Spanish", "Portuguese")),
            "Switch it to {v} instead.",
            "Are the release notes finished?",
        ),
    ),
    "zh": (
        (
            "帮我整理一下季度销售总结,最后导出成{v}。",
            (("PDF", "Markdown"), ("PDF", "Word文档"), ("Excel表格", "CSV")),
            "改成{v}吧。",
            "销售总结现在可以导出了吗?",
        ),
        (
            "把新员工入职手册写好,用{v}交付。",
            (("Word文档", "PDF"), ("HTML", "Markdown")),
            "还是换成{v}。",
            "入职手册能交付了吗?",
        ),
        (
            "把发布说明翻译成{v},给合作方团队用。",
            (("法语", "德语"), ("日语", "韩语")),
            "改成{v}。",
            "发布说明翻译完了吗?",
        ),
    ),
}
# (the boundary, the question that tests it)
BOUNDARIES = {
    "en": (
        (
            "Don't overwrite the original spreadsheet, save the changes as a copy.",
            "Can I save the spreadsheet now?",
        ),
        ("Do not send anything to the client yet.", "Should I send the draft to the client?"),
        (
            "Only touch the appendix, never edit the signed contract text.",
            "Can I fix the typo in the contract?",
        ),
    ),
    "zh": (
        ("别覆盖原始表格,改动另存一份。", "表格现在可以保存了吗?"),
        ("先不要把任何东西发给客户。", "草稿可以发给客户了吗?"),
        ("只改附录,签好的合同正文一个字都别动。", "合同里的错别字可以改吗?"),
    ),
}
# (key, the rule a person confirmed, the user's correction in other words, the question)
KEYED_RULES = {
    "en": (
        (
            "release_policy",
            "Never deploy the billing service on Fridays.",
            "Deploying the billing service on Fridays is fine now, as long as someone is on call.",
            "Can I deploy the billing service today? It's Friday.",
        ),
        (
            "finance_copies",
            "Always copy the finance team on supplier invoices.",
            "Supplier invoices no longer need to be copied to the finance team.",
            "Who should I copy on this supplier invoice?",
        ),
    ),
    "zh": (
        (
            "release_policy",
            "周五不要发布计费服务。",
            "计费服务周五也可以发布了,只要有人值班。",
            "今天周五,计费服务能发布吗?",
        ),
        (
            "finance_copies",
            "供应商发票一律抄送财务部。",
            "以后供应商发票不用抄送财务部了。",
            "这张供应商发票要抄送给谁?",
        ),
    ),
}
# (the user's request, the assistant's suggestion of another value, the question)
SUGGESTIONS = {
    "en": (
        (
            "Export the deck as PPTX, the client edits it in PowerPoint.",
            "I would suggest PDF instead, it is easier to share. Shall I switch to PDF?",
            "Go ahead and export the deck.",
        ),
        (
            "Write the summary in English.",
            "It might read better in French for this audience. Want me to switch to French?",
            "Please finish the summary.",
        ),
    ),
    "zh": (
        (
            "演示文稿导出成PPTX,客户要在PowerPoint里改。",
            "我建议改成PDF,更方便分享。要不要改成PDF?",
            "可以导出演示文稿了。",
        ),
        (
            "总结用中文写。",
            "面向这批读者,用英文可能更合适。要不要改用英文?",
            "把总结写完吧。",
        ),
    ),
}
FILLER = {
    "en": "The heading on page {n} is too large, shrink it a little.",
    "zh": "第{n}页的标题字号太大,帮我调小一点。",
}
LOG = {
    "en": "render_log page={n}: warning: font fallback; " + "glyph missing, using fallback font; " * 14,
    "zh": "render_log page={n}: 警告: 字体回退; " + "缺少字形, 使用备用字体; " * 14,
}
DONE = {"en": "Done, page {n} is adjusted.", "zh": "好的,第{n}页已调整。"}
ACK = {"en": "Sure.", "zh": "好的。"}


def said(label: str) -> str:
    """The label of what the extractor wrote from the turn labelled `label`."""
    return f"{label}:said"


def _user(c, name: str, text: str, reply: str, ago: int, session: str) -> EventSpec:
    return EventSpec(
        session=session,
        ago_min=ago,
        turns=(TurnSpec("user", text, c.ref(name)), TurnSpec("assistant", reply, c.ref(name + "-a"))),
    )


def _log_round(c, n: int, ago: int, session: str) -> EventSpec:
    call = f"call-{n}"
    return EventSpec(
        session=session,
        ago_min=ago,
        turns=(
            TurnSpec("user", FILLER[c.lang].format(n=n), c.ref(f"f{n}")),
            TurnSpec("tool_call", f"render(page={n})", c.ref(f"c{n}"), call_id=call),
            TurnSpec("tool_result", LOG[c.lang].format(n=n), c.ref(f"l{n}"), call_id=call),
            TurnSpec("assistant", DONE[c.lang].format(n=n), c.ref(f"d{n}")),
        ),
    )


def _rounds(c, start: int, count: int, first_ago: int, session: str = "s-now") -> list[EventSpec]:
    return [_log_round(c, start + i, first_ago - i, session) for i in range(count)]


def agent_only(c) -> object:
    index = int(c.tid.rsplit("-", 1)[1])
    case = CASES[(index + CASE_START[c.lang]) % len(CASES)]
    lang = c.lang
    noise = c.noise(8, 12, newest_ago=200, oldest_ago=3 * DAY)
    memories: tuple[MemorySpec, ...] = ()
    session = "s-now"
    if case in ("buried", "new_chat"):
        request, pairs, fix, query = c.rng.choice(REQUESTS[lang])
        old, new = c.rng.choice(pairs)
        where = "s-other" if case == "new_chat" else "s-now"
        rounds = c.rng.randint(6, 10)
        events = [
            _user(c, "ask", request.format(v=old), ACK[lang], 120, where),
            *_rounds(c, 2, 3, 110, where),
            _user(c, "fix", fix.format(v=new), ACK[lang], 100, where),
            *_rounds(c, 6, rounds, 90, where),
        ]
        if case == "buried":
            expect = Expect(
                include=(said("fix"),),
                slots=((said("fix"), "constraints"),),
                negative=((said("ask"), said("fix")),),
                not_in_force=(said("ask"),),
                constraints=(said("fix"),),
            )
        else:
            expect = Expect(not_in_force=(said("ask"),))
    elif case == "boundary":
        boundary, query = c.rng.choice(BOUNDARIES[lang])
        events = [
            _user(c, "edge", boundary, ACK[lang], 120, session),
            *_rounds(c, 2, c.rng.randint(8, 12), 110),
        ]
        expect = Expect(
            include=(said("edge"),), slots=((said("edge"), "constraints"),), constraints=(said("edge"),)
        )
    elif case == "english_key":
        key, rule_text, fix, query = c.rng.choice(KEYED_RULES[lang])
        memories = (
            MemorySpec(
                label="rule",
                place="task",
                kind="convention",
                key=key,
                text=rule_text,
                source_kind="user",
                source_ref=c.ref("rule-turn"),
                tier="mid",
                ago_min=3 * DAY,
                importance=0.7,
                confidence=0.9,
                first=True,
            ),
        )
        events = [
            *_rounds(c, 2, 3, 130),
            _user(c, "fix", fix, ACK[lang], 100, session),
            *_rounds(c, 6, 4, 90),
        ]
        expect = Expect(
            include=(said("fix"),),
            slots=((said("fix"), "constraints"),),
            negative=(("rule", said("fix")),),
            session=((said("fix"), "rule", "overrides"),),
            constraints=(said("fix"),),
        )
    else:  # assistant
        request, suggestion, query = c.rng.choice(SUGGESTIONS[lang])
        events = [
            EventSpec(
                session=session,
                ago_min=60,
                turns=(
                    TurnSpec("user", request, c.ref("ask")),
                    TurnSpec("assistant", suggestion, c.ref("suggest")),
                ),
            ),
            *_rounds(c, 2, 3, 50),
        ]
        expect = Expect(
            include=(said("ask"),), slots=((said("ask"), "constraints"),), constraints=(said("ask"),)
        )
    # What the user said, relayed in a session of the same name one scope over and one workspace over: a
    # requirement never reaches another scope.
    key_turn = next(t for e in events for t in e.turns if t.role == "user")
    dups = tuple(
        MemorySpec(
            label=f"dup-{place}",
            place=place,
            kind="convention",
            text=key_turn.content,
            source_kind="user",
            source_ref=c.ref(f"dup-{place}"),
            status="candidate",
            session=session,
            by="agent",
            ago_min=2,
        )
        for place in ("sibling", "foreign")
    )
    expect = replace(expect, absent=(*expect.absent, "dup-sibling", "dup-foreign"))
    return c.task(
        "agent_only",
        query,
        session=session,
        events=(*noise, *events),
        memories=(*memories, *dups),
        expect=expect,
        budget_tokens=1500,
    )
