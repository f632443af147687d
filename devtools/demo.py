"""The demo workspace: small, but it shows each problem this project exists for.

- demo/slides: the export format changed from PDF to PPTX (revision 2 supersedes 1); two constraints
  in force ("do not overwrite the original file", "do not publish yet"); tool calls with their results.
- demo/payments: "do not refactor" was replaced two weeks later by "refactor allowed, tests first".
- demo/alex: writing preferences that differ by task type (daily report / long article), one in Chinese,
  and a preference that was forgotten (purged: only the tombstone is left).
- demo/brochure: a similar but separate export rule (PDF), which must never leak into the slides.
- candidates and proposals waiting for review, and a history of reinforcements (backdated), so the
  activation curves have a shape.

Everything goes through the services, as a person or agent would, so the audit log and the outbox
tell the same story. Loading twice changes nothing: each memory carries `meta.demo` and is looked up
before it is written; the whole load is one transaction, so a failed load leaves nothing half-written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from governance.models import Memory, Principal, ReinforcementEvent, Role, Scope, Status
from governance.services.memory import (
    MemoryInput,
    memory_confirm,
    memory_forget,
    memory_propose,
    memory_record,
    memory_reinforce,
    memory_supersede,
)
from governance.services.principal import grant_add, principal_ensure, user_ensure
from governance.services.scope import scope_ensure

WORKSPACE = "demo"
DEMO_USER = "demo"
DEMO_PASSWORD = "demo"
AGENT = "demo-agent"
_LOAD_LOCK = 0x6D656D_0D30  # serialises two loaders started at once


@dataclass
class LoadSummary:
    created: int = 0
    existing: int = 0


class _Loader:
    def __init__(self, now: datetime) -> None:
        self.now = now
        self.summary = LoadSummary()
        self.fresh: set[str] = set()  # demo ids created by this run: only they get a reinforcement history

    def ago(self, days: float) -> datetime:
        return self.now - timedelta(days=days)

    def record(self, demo_id: str, scope: Scope, actor: Principal | None, **fields) -> Memory:
        existing = Memory.objects.filter(scope=scope, meta__demo=demo_id).first()
        if existing is not None:
            self.summary.existing += 1
            return existing
        days_ago = fields.pop("days_ago", 0)
        memory = memory_record(
            item=MemoryInput(scope=scope, occurred_at=self.ago(days_ago), meta={"demo": demo_id}, **fields),
            actor=actor,
        )
        self.summary.created += 1
        self.fresh.add(demo_id)
        return memory

    def turn(
        self,
        demo_id: str,
        scope: Scope,
        actor: Principal,
        session: str,
        speaker: str,
        text: str,
        days_ago: float,
        source_kind: str = "user",
        call_id: str = "",
        ref: str = "",
    ) -> Memory:
        return self.record(
            demo_id,
            scope,
            actor,
            kind="episodic",
            text=text,
            source_kind=source_kind,
            session=session,
            speaker=speaker,
            call_id=call_id,
            source_ref=ref or f"{session}#{demo_id}",
            days_ago=days_ago,
        )

    def reinforce(self, demo_id: str, memory: Memory, days_ago: list[float], actor: Principal) -> None:
        if demo_id not in self.fresh:
            return
        for days in sorted(days_ago, reverse=True):  # oldest first: last_reinforced_at ends at the latest
            memory_reinforce(
                memory_ids=[memory.pk],
                weight=1.0,
                reason=ReinforcementEvent.Reason.RECALL,
                actor=actor,
                at=self.ago(days),
            )


def load_demo(*, now: datetime | None = None) -> LoadSummary:
    """Create (or find) the demo workspace, its people, grants and memories. Idempotent."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOAD_LOCK])
        loader = _Loader(now or timezone.now())
        people = _people()
        _slides(loader, people)
        _payments(loader, people)
        _writing(loader, people)
        _brochure(loader, people)
        return loader.summary


# Turns the demo agent "asked" for, so the turns page shows stored packets from the first minute:
# (scope, session, query, task type).
DEMO_TURNS = [
    (
        "slides",
        "slides-3",
        "Export the Q3 review deck for the client and tell me where the file is.",
        "continue",
    ),
    ("payments", "pay-8", "Can I clean up the payment module now?", "planning"),
    ("alex", "alex-3", "Write today's daily report about the deck export.", "daily_report"),
]


def store_demo_turns(*, budget_tokens: int = 600) -> int:
    """Assemble and store one context packet per DEMO_TURNS entry, once. Kept apart from load_demo: it
    runs the whole read path (the query embedder included), and the memories stand on their own if it
    cannot. Returns how many turns were stored."""
    from governance.models import Turn
    from governance.recall import assemble_context

    agent = Principal.objects.get(name=AGENT)
    stored = 0
    for scope_name, session, query, task_type in DEMO_TURNS:
        scope = Scope.objects.get(path=f"{WORKSPACE}/{scope_name}")
        if Turn.objects.filter(scope=scope, session=session).exists():
            continue
        with transaction.atomic():
            assemble_context(
                principal=agent,
                scope=scope,
                query=query,
                budget_tokens=budget_tokens,
                task={"goal": query, "type": task_type},
                session=session,
            )
        stored += 1
    return stored


def ensure_demo_user() -> Principal:
    """The `demo`/`demo` sign-in, owner of the demo workspace. Only `runstack` calls this: a known
    password must never appear on a deployed instance."""
    principal = user_ensure(username=DEMO_USER, password=DEMO_PASSWORD, actor=None)
    grant_add(
        principal=principal, scope=scope_ensure(path=WORKSPACE, actor=None), role=Role.OWNER, actor=None
    )
    return principal


def _people() -> dict[str, Principal]:
    workspace = scope_ensure(path=WORKSPACE, actor=None)
    maya = user_ensure(username="maya", actor=None)  # no password: a name in the audit log, not a sign-in
    sam = user_ensure(username="sam", actor=None)
    agent = principal_ensure(name=AGENT, kind="agent", actor=None)
    grant_add(principal=maya, scope=workspace, role=Role.OWNER, actor=None)
    grant_add(
        principal=sam,
        scope=scope_ensure(path=f"{WORKSPACE}/slides", actor=maya),
        role=Role.REVIEWER,
        actor=maya,
    )
    grant_add(principal=agent, scope=workspace, role=Role.AGENT, actor=maya)
    return {"maya": maya, "sam": sam, "agent": agent}


def _slides(d: _Loader, p: dict[str, Principal]) -> None:
    scope = scope_ensure(path=f"{WORKSPACE}/slides", actor=p["maya"])
    agent, maya = p["agent"], p["maya"]
    d.turn(
        "slides-t1",
        scope,
        agent,
        "slides-1",
        "alex",
        "Please export the Q3 review deck as PDF when it is ready.",
        12,
    )
    r1 = d.record(
        "slides-export",
        scope,
        maya,
        kind="convention",
        key="export_format",
        status=Status.ACTIVE,
        text="Export the Q3 review deck as PDF.",
        source_kind="user",
        source_ref="slides-1#slides-t1",
        importance=0.8,
        confidence=0.9,
        days_ago=12,
    )
    keep = d.record(
        "slides-keep-original",
        scope,
        maya,
        kind="convention",
        key="overwrite_original",
        status=Status.ACTIVE,
        importance=0.9,
        confidence=0.95,
        source_kind="user",
        days_ago=12,
        text="Do not overwrite the original file: save every export as a new file next to it.",
    )
    hold = d.record(
        "slides-no-publish",
        scope,
        maya,
        kind="stage_fact",
        key="publish_status",
        status=Status.ACTIVE,
        importance=0.9,
        confidence=0.95,
        source_kind="user",
        days_ago=5,
        text="Do not publish the deck yet: it waits for legal review.",
    )
    d.turn(
        "slides-call1",
        scope,
        agent,
        "slides-1",
        "assistant",
        source_kind="assistant",
        call_id="call_exp_01",
        text="Calling export_deck(path='q3-review.key', format='pdf', output='q3-review.pdf')",
        days_ago=11.9,
    )
    d.turn(
        "slides-result1",
        scope,
        agent,
        "slides-1",
        "tool",
        source_kind="tool_result",
        call_id="call_exp_01",
        ref="tool:export_deck",
        days_ago=11.9,
        text="export_deck: wrote q3-review.pdf (24 slides, 3.1 MB); q3-review.key left unchanged.",
    )
    d.turn(
        "slides-t2",
        scope,
        agent,
        "slides-2",
        "alex",
        days_ago=3,
        text="The client wants to edit the slides themselves, so send PPTX from now on, not PDF.",
    )
    r1.refresh_from_db()
    r2 = Memory.objects.filter(scope=scope, key="export_format", revision=2).first()
    if r2 is None:
        r2 = memory_supersede(
            memory_id=r1.pk,
            text="Export the Q3 review deck as PPTX (the client edits it in PowerPoint).",
            reason="Alex changed the export format (session slides-2).",
            source_kind="user",
            source_ref="slides-2#slides-t2",
            actor=maya,
        )
        d.fresh.add("slides-export-r2")
        d.summary.created += 1
    else:
        d.summary.existing += 1
    d.turn(
        "slides-call2",
        scope,
        agent,
        "slides-2",
        "assistant",
        source_kind="assistant",
        call_id="call_exp_02",
        text="Calling export_deck(path='q3-review.key', format='pptx', output='q3-review-v2.pptx')",
        days_ago=2.9,
    )
    d.turn(
        "slides-result2",
        scope,
        agent,
        "slides-2",
        "tool",
        source_kind="tool_result",
        call_id="call_exp_02",
        ref="tool:export_deck",
        days_ago=2.9,
        text="export_deck: wrote q3-review-v2.pptx (24 slides, 5.4 MB); q3-review.key left unchanged.",
    )
    guess = d.record(
        "slides-dark-guess",
        scope,
        agent,
        kind="preference",
        source_kind="model_inference",
        text="The client seems to prefer dark slide backgrounds.",
        confidence=0.4,
        days_ago=2,
    )
    if "slides-dark-guess" in d.fresh:
        memory_propose(memory_id=guess.pk, actor=agent, reason="Seen in two of the client's comments.")
    d.reinforce("slides-export", r1, [11.9, 10, 8], agent)
    d.reinforce("slides-export-r2", r2, [2.9, 1.5, 0.5, 0.1], agent)
    d.reinforce("slides-keep-original", keep, [11.9, 10, 6, 2.9, 1], agent)
    d.reinforce("slides-no-publish", hold, [4, 2], agent)


def _payments(d: _Loader, p: dict[str, Principal]) -> None:
    scope = scope_ensure(path=f"{WORKSPACE}/payments", actor=p["maya"])
    agent, maya = p["agent"], p["maya"]
    old = d.record(
        "pay-refactor",
        scope,
        maya,
        kind="convention",
        key="refactoring_policy",
        status=Status.ACTIVE,
        source_kind="user",
        importance=0.9,
        confidence=0.95,
        days_ago=16,
        text="Do not refactor the payment module: it is frozen until the PCI audit is over.",
    )
    d.reinforce("pay-refactor", old, [15, 12, 9, 6], agent)
    d.turn(
        "pay-t1",
        scope,
        agent,
        "pay-7",
        "alex",
        days_ago=2,
        text="The audit is done. You can refactor the payment module now, but write the tests first.",
    )
    # The new rule arrives as a candidate with its real (backdated) time; a reviewer's confirmation
    # supersedes the old revision, exactly as it would in use.
    new = d.record(
        "pay-refactor-2",
        scope,
        agent,
        kind="convention",
        key="refactoring_policy",
        status=Status.CANDIDATE,
        source_kind="user",
        source_ref="pay-7#pay-t1",
        importance=0.9,
        confidence=0.9,
        days_ago=2,
        text="Refactoring the payment module is allowed, but tests first.",
    )
    if "pay-refactor-2" in d.fresh:
        memory_confirm(memory_id=new.pk, actor=maya, reason="The PCI audit is over (session pay-7).")
    d.reinforce("pay-refactor-2", new, [1.5, 0.3], agent)
    d.record(
        "pay-layout",
        scope,
        maya,
        kind="semantic",
        status=Status.ACTIVE,
        source_kind="tool_result",
        source_ref="tool:repo_stats",
        days_ago=9,
        text="The payment module lives in services/payments and is covered by 212 tests.",
    )
    refunds = d.record(
        "pay-refunds-guess",
        scope,
        agent,
        kind="method",
        source_kind="model_inference",
        confidence=0.6,
        days_ago=1,
        text="Refunds go through the refunds service API; never edit payment rows by hand.",
    )
    if "pay-refunds-guess" in d.fresh:
        memory_propose(memory_id=refunds.pk, actor=agent, reason="Inferred from the refunds incident review.")


def _writing(d: _Loader, p: dict[str, Principal]) -> None:
    scope = scope_ensure(path=f"{WORKSPACE}/alex", actor=p["maya"])
    agent, maya = p["agent"], p["maya"]
    daily = d.record(
        "style-daily",
        scope,
        maya,
        kind="preference",
        key="style.daily_report",
        task_type="daily_report",
        status=Status.ACTIVE,
        source_kind="user",
        days_ago=14,
        text="Daily reports: at most five bullet points, plain language, no headings.",
    )
    article = d.record(
        "style-article",
        scope,
        maya,
        kind="preference",
        key="style.long_article",
        task_type="long_article",
        status=Status.ACTIVE,
        source_kind="user",
        days_ago=14,
        text="Long articles: full paragraphs with section headings, and the sources listed at the end.",
    )
    zh = d.record(
        "style-daily-zh",
        scope,
        maya,
        kind="preference",
        key="style.daily_report.language",
        task_type="daily_report",
        status=Status.ACTIVE,
        source_kind="user",
        days_ago=7,
        text="日报用中文写，英文技术术语保留原文。",
    )
    quote = d.record(
        "style-quote",
        scope,
        maya,
        kind="preference",
        status=Status.ACTIVE,
        source_kind="user",
        days_ago=20,
        text="Start every report with a motivational quote.",
    )
    if "style-quote" in d.fresh:
        memory_forget(
            memory_id=quote.pk, actor=maya, hard=True, reason="Alex asked to forget this preference."
        )
    d.record(
        "style-british",
        scope,
        agent,
        kind="preference",
        source_kind="model_inference",
        task_type="long_article",
        confidence=0.5,
        days_ago=1,
        text="Prefers British spelling (colour, organise) in long articles.",
    )
    d.reinforce("style-daily", daily, [13, 11, 9, 7, 5, 3, 1], agent)
    d.reinforce("style-article", article, [13], agent)
    d.reinforce("style-daily-zh", zh, [6, 3, 1], agent)


def _brochure(d: _Loader, p: dict[str, Principal]) -> None:
    scope = scope_ensure(path=f"{WORKSPACE}/brochure", actor=p["maya"])
    agent, maya = p["agent"], p["maya"]
    d.turn(
        "bro-t1",
        scope,
        agent,
        "bro-1",
        "alex",
        days_ago=8,
        text="For the brochure, the printer needs a PDF with crop marks.",
    )
    rule = d.record(
        "bro-export",
        scope,
        maya,
        kind="convention",
        key="export_format",
        status=Status.ACTIVE,
        source_kind="user",
        source_ref="bro-1#bro-t1",
        importance=0.7,
        days_ago=8,
        text="Export the product brochure as print-ready PDF with crop marks.",
    )
    d.reinforce("bro-export", rule, [7, 4], agent)
