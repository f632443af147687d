"""A seeded generator of synthetic long-lived tasks. The same (suite, seed) gives the same tasks on
any machine: every choice comes from a `random.Random` seeded with a string (hashed by SHA-512 in
CPython, so stable across runs and versions). Each task carries realistic noise: unrelated turns in
other sessions, paraphrased questions, and near-duplicate memories in a sibling scope and in another
workspace that must never reach the packet."""

from __future__ import annotations

import random
from collections.abc import Callable

from devtools.evaluation import vocab
from devtools.evaluation.agent_only import agent_only
from devtools.evaluation.suite import (
    CATEGORIES,
    ActionSpec,
    EvalTask,
    EventSpec,
    Expect,
    MemorySpec,
    Suite,
    TurnSpec,
)

DAY = 24 * 60
LANGS = ("en", "zh")
# Tasks per (category, language).
SUITES: dict[str, int] = {"smoke": 1, "standard": 15, "large": 50}
# Task ids start with the category's first four letters; where two categories share them, a prefix of
# its own (a task's draws are seeded by its id, so ids must be unique).
TASK_PREFIX = {"stale_episode": "sepi"}
UNKNOWN_SUITE = "Unknown suite; choose one of: " + ", ".join(SUITES) + "."
UNKNOWN_CATEGORY = "Unknown category; choose from: " + ", ".join(CATEGORIES) + "."


def generate(
    name: str = "standard",
    seed: int = 0,
    per_cell: int | None = None,
    categories: tuple[str, ...] | None = None,
) -> Suite:
    """All categories (or the given ones) × both languages, `per_cell` tasks each (the suite's size by
    default). A task depends only on (suite, seed, its id), so a subset draws the same tasks as the whole."""
    unknown = set(categories or ()) - set(CATEGORIES)
    if unknown:
        raise ValueError(UNKNOWN_CATEGORY)
    if per_cell is None:
        if name not in SUITES:
            raise ValueError(UNKNOWN_SUITE)
        per_cell = SUITES[name]
    tasks = []
    for category in CATEGORIES:
        if categories and category not in categories:
            continue
        for lang in LANGS:
            for i in range(per_cell):
                tid = f"{TASK_PREFIX.get(category, category[:4])}-{lang}-{i:03d}"
                rng = random.Random(f"{name}:{seed}:{tid}")
                tasks.append(BUILDERS[category](_Ctx(rng, lang, tid)))
    return Suite(name=name, seed=seed, tasks=tuple(tasks))


class _Ctx:
    """Draws for one task: a topic, distinct values, noise turns and cross-scope near-duplicates."""

    def __init__(self, rng: random.Random, lang: str, tid: str):
        self.rng, self.lang, self.tid = rng, lang, tid
        self.topics = rng.sample(vocab.TOPICS, 2)
        self.topic = self.topics[0]
        self.values = rng.sample(range(len(self.topic.values[lang])), 4)

    def value(self, i: int, topic: vocab.Topic | None = None) -> str:
        topic = topic or self.topic
        return topic.values[self.lang][self.values[i] % len(topic.values[self.lang])]

    def state(self, i: int, topic: vocab.Topic | None = None) -> str:
        topic = topic or self.topic
        return self.rng.choice(topic.states[self.lang]).format(v=self.value(i, topic))

    def ask(self, topic: vocab.Topic | None = None) -> str:
        return self.rng.choice((topic or self.topic).asks[self.lang])

    def ref(self, name: str) -> str:
        return f"{self.tid}-{name}"

    def statement_event(self, name: str, text: str, ago: int, session: str = "s-early") -> EventSpec:
        return EventSpec(
            session=session,
            ago_min=ago,
            turns=(
                TurnSpec("user", text, self.ref(name)),
                TurnSpec("assistant", vocab.ACK[self.lang], self.ref(name + "-ack")),
            ),
        )

    def noise(self, lo: int, hi: int, newest_ago: int = 5, oldest_ago: int = 6 * DAY) -> list[EventSpec]:
        """Unrelated turns spread over the task's history, a few sessions of small talk."""
        count = self.rng.randint(lo, hi)
        bank = vocab.NOISE[self.lang]
        agos = sorted((self.rng.randint(newest_ago, oldest_ago) for _ in range(count)), reverse=True)
        return [
            EventSpec(
                session=f"s-noise-{j // 6}",
                ago_min=ago,
                turns=(TurnSpec("user", self.rng.choice(bank), self.ref(f"n{j}")),),
            )
            for j, ago in enumerate(agos)
        ]

    def duplicates(self, value_index: int = 3) -> list[MemorySpec]:
        """The same requirement with another value, in a sibling scope and in another workspace."""
        return [
            MemorySpec(
                label=f"dup-{place}",
                place=place,
                kind="convention",
                key=self.topic.key,
                text=self.state(value_index),
                source_kind="user",
                source_ref=self.ref(f"dup-{place}"),
                tier="long",
                ago_min=self.rng.randint(10, 3 * DAY),
            )
            for place in ("sibling", "foreign")
        ]

    def rule(self, label: str, value_index: int, ago: int, **kw) -> MemorySpec:
        return MemorySpec(
            label=label,
            place="task",
            kind="convention",
            key=self.topic.key,
            text=self.state(value_index),
            source_kind="user",
            source_ref=self.ref(label + "-turn"),
            tier="long",
            ago_min=ago,
            importance=0.7,
            confidence=0.9,
            **kw,
        )

    def task(self, category: str, query: str, session: str = "", **kw) -> EvalTask:
        goal = {"en": "Prepare the next deliverable", "zh": "准备下一份交付物"}[self.lang]
        # The question continues the latest conversation, so `recent` sees its last turns (a fair baseline).
        latest = min(kw.get("events", ()), key=lambda e: e.ago_min, default=None)
        return EvalTask(
            id=self.tid,
            category=category,
            lang=self.lang,
            query=query,
            goal=goal,
            session=session or (latest.session if latest else "s-now"),
            **kw,
        )


def _delayed_recall(c: _Ctx) -> EvalTask:
    ago = c.rng.randint(6 * DAY, 9 * DAY)
    rule = c.rule("rule", 0, ago)
    events = [c.statement_event("rule-turn", rule.text, ago), *c.noise(30, 50)]
    return c.task(
        "delayed_recall",
        c.ask(),
        events=tuple(events),
        memories=(rule, *c.duplicates()),
        expect=Expect(
            include=("rule",),
            constraints=("rule",),
            evidence=("rule",),
            absent=("dup-sibling", "dup-foreign"),
        ),
    )


def _scope_boundary(c: _Ctx) -> EvalTask:
    other = c.topics[1]
    fact = c.rule("fact", 0, c.rng.randint(DAY, 3 * DAY))
    parent = MemorySpec(
        label="parent-rule",
        place="parent",
        kind="convention",
        key=other.key,
        text=c.state(0, other),
        source_kind="user",
        source_ref=c.ref("parent-turn"),
        tier="long",
        ago_min=c.rng.randint(3 * DAY, 5 * DAY),
        importance=0.7,
        confidence=0.9,
    )
    # Near-duplicates: same wording, other values, one scope over and one workspace over.
    dups = c.duplicates(1) + [
        MemorySpec(
            label="dup-sibling-2",
            place="sibling",
            kind="convention",
            key=other.key,
            text=c.state(2, other),
            source_kind="user",
            source_ref=c.ref("dup-sib2"),
            tier="long",
            ago_min=30,
        )
    ]
    query = f"{c.ask()} {c.ask(other)}"
    return c.task(
        "scope_boundary",
        query,
        events=tuple(c.noise(8, 16)),
        memories=(fact, parent, *dups),
        expect=Expect(
            include=("fact", "parent-rule"),
            constraints=("fact", "parent-rule"),
            evidence=("fact", "parent-rule"),
            absent=("dup-sibling", "dup-foreign", "dup-sibling-2"),
        ),
    )


def _source_distinction(c: _Ctx) -> EvalTask:
    n = c.rng.randint(3, 97)
    tool_text, tool_ask = c.rng.choice(vocab.TOOL_FACTS[c.lang])
    doc_text, doc_ask = c.rng.choice(vocab.DOC_FACTS[c.lang])
    user = c.rule("user-fact", 0, c.rng.randint(2 * DAY, 4 * DAY))
    call = f"call-{c.tid}"
    url = f"https://docs.example.com/{c.tid}/policy"
    tool_event = EventSpec(
        session="s-work",
        ago_min=c.rng.randint(60, DAY),
        turns=(
            TurnSpec(
                "assistant", {"en": "Let me check.", "zh": "我查一下。"}[c.lang], c.ref("ask-tool"), call
            ),
            TurnSpec("tool", tool_text.format(n=n), c.ref("tool-result"), call),
        ),
    )
    doc = MemorySpec(
        label="doc-fact",
        place="task",
        kind="external",
        text=doc_text.format(n=n + 1),
        source_kind="external_document",
        source_ref=url,
        ago_min=c.rng.randint(DAY, 5 * DAY),
    )
    proposal = MemorySpec(
        label="proposal",
        place="task",
        kind="semantic",
        status="candidate",
        text=vocab.PROPOSAL_PREFIX[c.lang] + c.state(1),
        source_kind="assistant",
        source_ref=c.ref("proposal-turn"),
        ago_min=c.rng.randint(30, 600),
        confidence=0.3,
    )
    query = f"{c.ask()} {tool_ask} {doc_ask}"
    return c.task(
        "source_distinction",
        query,
        events=(tool_event, *c.noise(8, 16)),
        memories=(user, doc, proposal, *c.duplicates()),
        expect=Expect(
            include=("user-fact", "tool-result", "doc-fact"),
            slots=(("doc-fact", "external"),),
            sources=(
                ("user-fact", "user", (user.source_ref,)),
                ("tool-result", "tool_result", (call, c.ref("tool-result"))),
                ("doc-fact", "external_document", (url,)),
            ),
            proposals=("proposal",),
            constraints=("user-fact",),
            evidence=("user-fact", "tool-result", "doc-fact"),
            absent=("dup-sibling", "dup-foreign"),
        ),
    )


def _revision(c: _Ctx) -> EvalTask:
    old_ago = c.rng.randint(3 * DAY, 6 * DAY)
    fix_ago = c.rng.randint(60, 2 * DAY)
    old = c.rule("v1", 0, old_ago)
    fix_text = c.rng.choice(c.topic.corrections[c.lang]).format(v=c.value(1))
    events = [
        c.statement_event("v1-turn", old.text, old_ago),
        c.statement_event("fix-turn", fix_text, fix_ago, session="s-later"),
        *c.noise(10, 25),
    ]
    supersede = ActionSpec(
        op="supersede",
        target="v1",
        label="v2",
        text=c.state(1),
        source_kind="user",
        source_ref=c.ref("fix-turn"),
        reason={"en": "the user corrected it", "zh": "用户更正了"}[c.lang],
    )
    return c.task(
        "revision",
        c.ask(),
        events=tuple(events),
        memories=(old, *c.duplicates(2)),
        actions=(supersede,),
        expect=Expect(
            include=("v2",),
            constraints=("v2",),
            negative=(("v1", "v2"),),
            not_in_force=("v1",),
            stale=("v1",),
            evidence=("v2",),
            absent=("dup-sibling", "dup-foreign"),
        ),
    )


def _stale_suppression(c: _Ctx) -> EvalTask:
    v1 = c.rule("v1", 0, c.rng.randint(5 * DAY, 8 * DAY))
    reason = {"en": "requirement changed", "zh": "要求变了"}[c.lang]
    actions = (
        ActionSpec(op="supersede", target="v1", label="v2", text=c.state(1), reason=reason),
        ActionSpec(op="supersede", target="v2", label="v3", text=c.state(2), reason=reason),
        ActionSpec(op="retire", target="retired", reason=reason),
        ActionSpec(op="forget", target="forgotten", reason=reason),
    )
    retired = MemorySpec(
        label="retired",
        place="task",
        kind="convention",
        text=c.state(3),
        source_kind="user",
        source_ref=c.ref("retired-turn"),
        ago_min=c.rng.randint(2 * DAY, 4 * DAY),
    )
    forgotten = MemorySpec(
        label="forgotten",
        place="task",
        kind="episodic",
        text=c.state(3),
        source_kind="user",
        source_ref=c.ref("forgotten-turn"),
        ago_min=c.rng.randint(60, DAY),
    )
    # The question quotes the oldest wording: the stale rule is the closest match by similarity.
    query = vocab.STALE_ASK[c.lang].format(s=v1.text)
    return c.task(
        "stale_suppression",
        query,
        events=tuple(c.noise(10, 20)),
        memories=(v1, retired, forgotten, *c.duplicates(0)),
        actions=actions,
        expect=Expect(
            include=("v3",),
            constraints=("v3",),
            not_in_force=("v1", "v2"),
            absent=("retired", "forgotten", "dup-sibling", "dup-foreign"),
            stale=("v1", "v2", "retired", "forgotten"),
            evidence=("v3",),
        ),
    )


def _evidence_attribution(c: _Ctx) -> EvalTask:
    n = c.rng.randint(3, 97)
    events: list[EventSpec] = []
    memories: list[MemorySpec] = []
    if c.rng.random() < 0.5:
        facts = c.rng.sample(vocab.TOOL_FACTS[c.lang], 3)
        for j, (text, _) in enumerate(facts):
            call = f"call-{c.tid}-{j}"
            events.append(
                EventSpec(
                    session=f"s-tools-{j}",
                    ago_min=c.rng.randint(30, 4 * DAY),
                    turns=(
                        TurnSpec(
                            "assistant",
                            {"en": "Running the tool.", "zh": "调用工具。"}[c.lang],
                            c.ref(f"call{j}"),
                            call,
                        ),
                        TurnSpec("tool", text.format(n=n + j), c.ref(f"fact{j}"), call),
                    ),
                )
            )
        label, kind, refs, question = "fact0", "tool_result", (f"call-{c.tid}-0", c.ref("fact0")), facts[0][1]
    else:
        facts = c.rng.sample(vocab.DOC_FACTS[c.lang], 3)
        for j, (text, _) in enumerate(facts):
            memories.append(
                MemorySpec(
                    label=f"fact{j}",
                    place="task",
                    kind="external",
                    text=text.format(n=n + j),
                    source_kind="external_document",
                    source_ref=f"https://docs.example.com/{c.tid}/{j}",
                    ago_min=c.rng.randint(30, 6 * DAY),
                )
            )
        label, kind, refs, question = (
            "fact0",
            "external_document",
            (f"https://docs.example.com/{c.tid}/0",),
            facts[0][1],
        )
    # Near-duplicates of the answer with other numbers, one scope over and one workspace over.
    dups = [
        MemorySpec(
            label=f"dup-{place}",
            place=place,
            kind="episodic" if kind == "tool_result" else "external",
            text=facts[0][0].format(n=n + 40 + i),
            source_kind=kind,
            source_ref=c.ref(f"dup-{place}"),
            ago_min=c.rng.randint(10, 3 * DAY),
        )
        for i, place in enumerate(("sibling", "foreign"))
    ]
    return c.task(
        "evidence_attribution",
        question,
        events=(*events, *c.noise(10, 25)),
        memories=(*memories, *dups),
        expect=Expect(
            include=(label,),
            sources=((label, kind, refs),),
            evidence=(label,),
            absent=("dup-sibling", "dup-foreign"),
        ),
    )


def _conflict_handling(c: _Ctx) -> EvalTask:
    winner = c.rule("winner", 0, c.rng.randint(DAY, 3 * DAY))
    loser = MemorySpec(
        label="loser",
        place="task",
        kind="external",
        text=vocab.CONFLICT_DOC[c.lang].format(s=c.state(1)),
        source_kind="external_document",
        source_ref=f"https://docs.example.com/{c.tid}/old-style",
        ago_min=c.rng.randint(5 * DAY, 9 * DAY),
        confidence=0.4,
    )
    reason = {"en": "the user's instruction overrides the old style sheet", "zh": "用户的指示优先于旧版规范"}[
        c.lang
    ]
    return c.task(
        "conflict_handling",
        c.ask(),
        events=tuple(c.noise(8, 20)),
        memories=(winner, loser, *c.duplicates(2)),
        actions=(ActionSpec(op="contradict", target="loser", label="winner", reason=reason),),
        expect=Expect(
            include=("winner",),
            constraints=("winner",),
            conflicts=(("winner", "loser"),),
            evidence=("winner",),
            absent=("dup-sibling", "dup-foreign"),
        ),
    )


def _temporal_commitment(c: _Ctx) -> EvalTask:
    commitment = c.rule("commitment", 0, c.rng.randint(4 * DAY, 8 * DAY))
    temp_text, temp_ask = c.rng.choice(vocab.TEMPORARY[c.lang])
    trace_ago = c.rng.randint(2 * DAY, 4 * DAY)
    trace = MemorySpec(
        label="trace",
        place="task",
        kind="working",
        text=temp_text,
        source_kind="user",
        source_ref=c.ref("trace-turn"),
        tier="short",
        ago_min=trace_ago,
        session="s-old",
    )
    expired = MemorySpec(
        label="expired",
        place="task",
        kind="stage_fact",
        text=c.rng.choice(vocab.EXPIRED[c.lang]),
        source_kind="user",
        source_ref=c.ref("expired-turn"),
        tier="short",
        ago_min=c.rng.randint(5 * DAY, 7 * DAY),
        expired_ago_min=c.rng.randint(60, DAY),
    )
    query = f"{temp_ask} {c.ask()}"
    return c.task(
        "temporal_commitment",
        query,
        events=tuple(c.noise(8, 20)),
        memories=(commitment, trace, expired, *c.duplicates()),
        expect=Expect(
            include=("commitment",),
            constraints=("commitment",),
            not_in_force=("trace",),
            absent=("expired", "dup-sibling", "dup-foreign"),
            stale=("trace", "expired"),
            evidence=("commitment",),
        ),
    )


def _stale_episode(c: _Ctx) -> EvalTask:
    """The user's message that taught a rule, after the rule was superseded: the message is still a
    close match for the question, and must come back as outdated (naming the new rule), not as evidence."""
    old_ago = c.rng.randint(4 * DAY, 8 * DAY)
    fix_ago = c.rng.randint(60, 2 * DAY)
    old = c.rule("v1", 0, old_ago)  # recorded by a curator, citing the turn (source_ref = the turn's ref)
    fix_text = c.rng.choice(c.topic.corrections[c.lang]).format(v=c.value(1))
    events = [
        c.statement_event("v1-turn", vocab.REQUEST[c.lang].format(s=old.text), old_ago),
        c.statement_event("fix-turn", fix_text, fix_ago, session="s-later"),
        *c.noise(10, 25),
    ]
    supersede = ActionSpec(
        op="supersede",
        target="v1",
        label="v2",
        text=c.state(1),
        source_kind="user",
        source_ref=c.ref("fix-turn"),
        reason={"en": "the user corrected it", "zh": "用户更正了"}[c.lang],
    )
    return c.task(
        "stale_episode",
        c.ask(),
        events=tuple(events),
        memories=(old, *c.duplicates(2)),
        actions=(supersede,),
        expect=Expect(
            include=("v2",),
            constraints=("v2",),
            negative=(("v1-turn", "v2"),),
            not_in_force=("v1", "v1-turn"),
            stale=("v1", "v1-turn"),
            evidence=("v2",),
            absent=("dup-sibling", "dup-foreign"),
        ),
    )


def _episode_correction(c: _Ctx) -> EvalTask:
    """Two messages, no rule recorded: the later one corrects the earlier, and a curator linked them
    (`supersedes`). The earlier message must come back as outdated naming the later one."""
    old_ago = c.rng.randint(3 * DAY, 7 * DAY)
    fix_ago = c.rng.randint(60, 2 * DAY)
    first = vocab.REQUEST[c.lang].format(s=c.state(0))
    fix_text = c.rng.choice(c.topic.corrections[c.lang]).format(v=c.value(1))
    events = [
        c.statement_event("first", first, old_ago),
        c.statement_event("later", fix_text, fix_ago, session="s-later"),
        *c.noise(10, 25),
    ]
    replace = ActionSpec(
        op="replace",
        target="first",
        label="later",
        reason={"en": "the user changed their mind", "zh": "用户改主意了"}[c.lang],
    )
    # The same message in a sibling project and another workspace, where nothing corrected it.
    dups = tuple(
        MemorySpec(
            label=f"dup-{place}",
            place=place,
            kind="episodic",
            text=first,
            source_kind="user",
            source_ref=c.ref(f"dup-{place}"),
            ago_min=c.rng.randint(60, 3 * DAY),
        )
        for place in ("sibling", "foreign")
    )
    return c.task(
        "episode_correction",
        c.ask(),
        events=tuple(events),
        memories=dups,
        actions=(replace,),
        expect=Expect(
            include=("later",),
            negative=(("first", "later"),),
            not_in_force=("first",),
            stale=("first",),
            evidence=("later",),
            absent=("dup-sibling", "dup-foreign"),
        ),
    )


def _exact_term(c: _Ctx) -> EvalTask:
    """An identifier (error code or file name) asked for by name: the one tool log holding it exactly, and
    20 short notes about near-identical identifiers phrased like the question."""
    line, note, ask, kind = c.rng.choice(vocab.EXACT[c.lang])
    if kind == "code":
        exact = f"E{c.rng.randint(1000, 9999)}"
        near = [exact + ch for ch in "0123456789ABCDEFGHJK"]
    else:
        exact = f"ledger_{c.rng.randint(2019, 2026)}_q{c.rng.randint(1, 4)}.xlsx"
        near = [exact.replace(".xlsx", f"{ch}.xlsx") for ch in "abcdefghijklmnopqrst"]
    lines = [t.format(n=c.rng.randint(2, 99)) for t in c.rng.sample(vocab.LOG_LINES[c.lang], 7)]
    lines.insert(c.rng.randint(2, 5), line.format(id=exact))
    log = vocab.LOG_SEPARATOR[c.lang].join(lines)
    log_ago = c.rng.randint(DAY, 3 * DAY)
    target = MemorySpec(
        label="log",
        place="task",
        kind="episodic",
        text=log,
        source_kind="tool_result",
        source_ref=c.ref("log"),
        ago_min=log_ago,
        session="s-ops",
    )
    notes = [
        MemorySpec(
            label=f"near{j}",
            place="task",
            kind="episodic",
            text=note.format(id=ident, n=c.rng.randint(2, 40)),
            source_kind="tool_result",
            source_ref=c.ref(f"near{j}"),
            ago_min=c.rng.randint(60, log_ago),
            session="s-ops",
        )
        for j, ident in enumerate(near)
    ]
    # The same log in a sibling project and another workspace: the exact identifier must not leak across.
    dups = [
        MemorySpec(
            label=f"dup-{place}",
            place=place,
            kind="episodic",
            text=log,
            source_kind="tool_result",
            source_ref=c.ref(f"dup-{place}"),
            ago_min=c.rng.randint(60, 3 * DAY),
            session="s-ops",
        )
        for place in ("sibling", "foreign")
    ]
    return c.task(
        "exact_term",
        ask.format(id=exact),
        events=tuple(c.noise(8, 16)),
        memories=(target, *notes, *dups),
        expect=Expect(include=("log",), evidence=("log",), absent=("dup-sibling", "dup-foreign")),
    )


# Reviews in a support_chain task: more than a search path brings back (recall.CANDIDATES_PER_PATH), as in
# a team wiki, so the linked one is not in the pool by chance.
REVIEWS = 40


def _support_chain(c: _Ctx) -> EvalTask:
    """A rule in force and the review behind it, linked by a curator (`supports`). The review shares no
    words with the question and sits among other reviews of the same shape; only following the link from
    the recalled rule brings it in, marked as what supports the rule."""
    ago = c.rng.randint(2 * DAY, 6 * DAY)
    rule = c.rule("rule", 0, ago)
    templates = vocab.RATIONALE[c.lang]
    reviews = [
        MemorySpec(
            label="why" if j == 0 else f"other-review{j}",
            place="task",
            kind="external",
            text=templates[j % len(templates)].format(n=c.rng.randint(100, 999)),
            source_kind="external_document",
            source_ref=f"https://wiki.example.com/{c.tid}/review-{j}",
            ago_min=c.rng.randint(ago, ago + 2 * DAY),
            confidence=0.8,
        )
        for j in range(REVIEWS)
    ]
    support = ActionSpec(
        op="support",
        target="rule",
        label="why",
        reason={"en": "the review that led to the rule", "zh": "促成这条规定的复盘"}[c.lang],
    )
    return c.task(
        "support_chain",
        c.ask(),
        events=(c.statement_event("rule-turn", rule.text, ago), *c.noise(10, 25)),
        memories=(rule, *reviews, *c.duplicates()),
        actions=(support,),
        expect=Expect(
            include=("rule", "why"),
            constraints=("rule",),
            supports=(("why", "rule"),),
            evidence=("rule", "why"),
            absent=("dup-sibling", "dup-foreign"),
        ),
    )


# The cases of correction_in_conversation, one per task in turn (English and Chinese start apart, so the
# one-task smoke suite holds two of them).
CONVERSATION_CASES = ("same_key", "unkeyed", "binding", "rejected", "second_session")
CASE_START = {"en": 0, "zh": 3}


def _correction_in_conversation(c: _Ctx) -> EvalTask:
    """The user corrects a rule in force in the conversation (the agent relays it as the user's word, with
    the session). In that session it is in force at once, the rule set aside there; except when the rule is
    binding (the rule holds, the packet says the user asked), when a reviewer rejected it (the rule again,
    said), and in another session (the rule, naming the pending change)."""
    index = int(c.tid.rsplit("-", 1)[1])
    case = CONVERSATION_CASES[(index + CASE_START[c.lang]) % len(CONVERSATION_CASES)]
    said_in = "s-other" if case == "second_session" else "s-now"
    ago = c.rng.randint(2 * DAY, 6 * DAY)
    if case == "unkeyed":
        rule_text, fix_text, query = c.rng.choice(vocab.UNKEYED_RULES[c.lang])
        rule = MemorySpec(
            label="rule",
            place="task",
            kind="convention",
            text=rule_text,
            source_kind="user",
            source_ref=c.ref("rule-turn"),
            tier="long",
            ago_min=ago,
            importance=0.7,
            confidence=0.9,
        )
        key = None
    else:
        rule = c.rule("rule", 0, ago)
        fix_text = c.rng.choice(c.topic.corrections[c.lang]).format(v=c.value(1))
        query, key = c.ask(), c.topic.key
    turn = EventSpec(
        session=said_in,
        ago_min=c.rng.randint(1, 4),
        turns=(
            TurnSpec("user", fix_text, c.ref("fix-turn")),
            TurnSpec("assistant", vocab.ACK_CORRECTION[c.lang], c.ref("fix-ack")),
        ),
    )
    # What the agent writes for the user's turn: the user's word, in its session, with the key it corrects.
    fix = MemorySpec(
        label="fix",
        place="task",
        kind="convention",
        key=key,
        text=fix_text,
        source_kind="user",
        source_ref=c.ref("fix-turn"),
        status="candidate",
        session=said_in,
        by="agent",
        ago_min=1,
    )
    actions: tuple[ActionSpec, ...] = ()
    how = {
        "same_key": "overrides",
        "unkeyed": "overrides",
        "binding": "binding",
        "rejected": "rejected",
        "second_session": "pending",
    }[case]
    if case == "binding":
        actions = (
            ActionSpec(
                op="binding", target="rule", reason={"en": "a contract term", "zh": "合同条款"}[c.lang]
            ),
        )
    elif case == "rejected":
        actions = (
            ActionSpec(
                op="reject",
                target="fix",
                reason={"en": "the client contract says otherwise", "zh": "客户合同另有规定"}[c.lang],
            ),
        )
    if how == "overrides":
        expect = Expect(
            include=("fix",),
            slots=(("fix", "constraints"),),
            negative=(("rule", "fix"),),
            not_in_force=("rule",),
            session=(("fix", "rule", how),),
            constraints=("fix",),
            absent=("dup-sibling", "dup-foreign"),
        )
    else:
        expect = Expect(
            include=("rule",),
            slots=(("rule", "constraints"),),
            session=(("fix", "rule", how),),
            constraints=("rule",),
            absent=("dup-sibling", "dup-foreign"),
        )
    # The same correction said in a session of the same name one scope over and one workspace over: an
    # override never reaches another scope. (Keyed cases: the requirement with another value there.)
    dups = (
        c.duplicates()
        if key
        else [
            MemorySpec(
                label=f"dup-{place}",
                place=place,
                kind="convention",
                text=fix_text,
                source_kind="user",
                source_ref=c.ref(f"dup-{place}"),
                status="candidate",
                session="s-now",
                by="agent",
                ago_min=2,
            )
            for place in ("sibling", "foreign")
        ]
    )
    return c.task(
        "correction_in_conversation",
        query,
        session="s-now",
        events=(c.statement_event("rule-turn", rule.text, ago), turn, *c.noise(8, 16)),
        memories=(rule, fix, *dups),
        actions=actions,
        expect=expect,
    )


def _repeated(text: str, lang: str) -> str:
    """The same statement said again with less: without its first word (character, in Chinese), its
    final stop and its capitals. Every content word of it is in the original (services/near_duplicate.py)."""
    if lang == "zh":
        return text.rstrip("。")[1:]
    return " ".join(text.rstrip(".").split()[1:]).lower()


def _near_duplicate(c: _Ctx) -> EvalTask:
    """The agent relays a statement already stored in the scope, in fewer words. A fact (case `fact`) is
    reinforced, not stored again; a rule (case `rule`) becomes a proposal of its next revision, never in
    force by itself. A statement with another value, and the same words one scope and one workspace over,
    stay apart."""
    index = int(c.tid.rsplit("-", 1)[1])
    case = ("fact", "rule")[(index + {"en": 0, "zh": 1}[c.lang]) % 2]
    ago = c.rng.randint(2 * DAY, 6 * DAY)
    if case == "rule":
        original = c.rule("original", 0, ago)
        kind = "convention"
    else:
        original = MemorySpec(
            label="original",
            place="task",
            kind="semantic",
            text=c.state(0),
            source_kind="user",
            source_ref=c.ref("original-turn"),
            ago_min=ago,
            importance=0.7,
            confidence=0.9,
        )
        kind = "semantic"
    said_again = _repeated(original.text, c.lang)

    def relayed(label: str, text: str, place: str = "task") -> MemorySpec:
        return MemorySpec(
            label=label,
            place=place,
            kind=kind,
            text=text,
            source_kind="user",
            source_ref=c.ref(label + "-turn"),
            status="candidate",
            session="s-now",
            by="agent",
            ago_min=c.rng.randint(2, 60),
        )

    repeat = relayed("repeat", said_again)
    other = relayed("other", c.state(1)) if case == "fact" else None
    elsewhere = [relayed(f"dup-{place}", said_again, place=place) for place in ("sibling", "foreign")]
    decision = "reinforced" if case == "fact" else "proposed"
    expect = Expect(
        include=("original",),
        slots=(("original", "constraints"),) if case == "rule" else (),
        proposals=("repeat",) if case == "rule" else (),
        constraints=("original",) if case == "rule" else (),
        evidence=("original",),
        repeats=(
            ("repeat", "original", decision),
            ("dup-sibling", "original", "separate"),
            ("dup-foreign", "original", "separate"),
            *((("other", "original", "separate"),) if other else ()),
        ),
        absent=("dup-sibling", "dup-foreign"),
    )
    return c.task(
        "near_duplicate",
        c.ask(),
        session="s-now",
        events=(c.statement_event("original-turn", original.text, ago), *c.noise(8, 16)),
        memories=(original, repeat, *((other,) if other else ()), *elsewhere),
        expect=expect,
    )


def _unkeyed_contradiction(c: _Ctx) -> EvalTask:
    """A fact said plainly, and days later a message saying it changed, with no key between them ("We use
    MySQL." / "The team has moved to PostgreSQL."); beside them the same subject said again with no change
    and a change of something else. Cases in turn: nobody has decided (both are evidence, marked in dispute,
    the newer named), or a curator confirmed the newer one (the older is no longer in force, replaced by it).
    The dispute must be proposed by the system after embedding (the loader runs it as the worker does)."""
    fact = vocab.FACTS[c.rng.randrange(len(vocab.FACTS))]
    old_value, new_value = c.rng.sample(fact.values, 2)
    said = c.rng.choice(fact.said[c.lang]).format(v=old_value)
    changed = c.rng.choice(fact.changed[c.lang]).format(w=new_value)
    old_ago = c.rng.randint(8 * DAY, 14 * DAY)
    events = [
        c.statement_event("said", said, old_ago),
        c.statement_event("aside", fact.aside[c.lang], c.rng.randint(4 * DAY, 7 * DAY), session="s-mid"),
        c.statement_event(
            "other", vocab.OTHER_CHANGE[c.lang], c.rng.randint(2 * DAY, 4 * DAY), session="s-mid"
        ),
        c.statement_event("changed", changed, c.rng.randint(60, 2 * DAY), session="s-later"),
        *c.noise(8, 16),
    ]
    # In turn, and English and Chinese apart, so the smoke suite (one task each) holds both cases.
    settled = (int(c.tid.rsplit("-", 1)[1]) + (c.lang == "zh")) % 2 == 1
    actions = (
        (ActionSpec(op="settle", target="said", label="changed", reason=vocab.SETTLE_REASON[c.lang]),)
        if settled
        else ()
    )
    expect = (
        Expect(
            include=("changed",),
            negative=(("said", "changed"),),
            not_in_force=("said",),
            stale=("said",),
            undisputed=("aside", "other"),
            evidence=("changed",),
            absent=("dup-sibling", "dup-foreign"),
        )
        if settled
        else Expect(
            include=("said", "changed"),
            disputes=(("changed", "said"),),
            undisputed=("aside", "other"),
            evidence=("changed",),
            absent=("dup-sibling", "dup-foreign"),
        )
    )
    # The old statement in a sibling project and another workspace, where nothing changed it.
    dups = tuple(
        MemorySpec(
            label=f"dup-{place}",
            place=place,
            kind="episodic",
            text=said,
            source_kind="user",
            source_ref=c.ref(f"dup-{place}"),
            ago_min=c.rng.randint(60, 3 * DAY),
        )
        for place in ("sibling", "foreign")
    )
    return c.task(
        "unkeyed_contradiction",
        c.rng.choice(fact.asks[c.lang]),
        events=tuple(events),
        memories=dups,
        actions=actions,
        expect=expect,
    )


BUILDERS: dict[str, Callable[[_Ctx], EvalTask]] = {
    "delayed_recall": _delayed_recall,
    "scope_boundary": _scope_boundary,
    "source_distinction": _source_distinction,
    "revision": _revision,
    "stale_suppression": _stale_suppression,
    "evidence_attribution": _evidence_attribution,
    "conflict_handling": _conflict_handling,
    "temporal_commitment": _temporal_commitment,
    "stale_episode": _stale_episode,
    "episode_correction": _episode_correction,
    "exact_term": _exact_term,
    "support_chain": _support_chain,
    "correction_in_conversation": _correction_in_conversation,
    "near_duplicate": _near_duplicate,
    "unkeyed_contradiction": _unkeyed_contradiction,
    "agent_only": agent_only,
}
assert set(BUILDERS) == set(CATEGORIES)
