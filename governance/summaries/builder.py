"""The hand-off of a task scope, section by section: the one selector behind the dashboard's summary and
the packet's `handoff` slot. Every line cites the ids it was built from, so a change to any of them marks
the stored summary stale and a rebuild reflects it; a line's text is only its own memory's (what replaced
it travels in `replaced_by`, a member of its own id), so a forget redacts exactly what it must.

The six sections follow the hand-off the articles ask for: goal and scope; constraints confirmed by a person,
with their keys and revisions; actions done with where each result came from (tool results, never the
user's requests or the assistant's guesses); corrected or void requirements; open problems, failures and
tool calls still waiting for their result, proposals awaiting a person, disputes and unverified guesses;
the next step and its preconditions. Each line says what it is (`nature`): a fact observed by a tool, a
guess nobody checked, a proposal awaiting a person, an authorisation (confirmed by a person), a request,
or void."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime

from django.db.models import Q
from django.db.models.functions import Coalesce

from governance.models import (
    Dispute,
    DisputeState,
    Kind,
    Memory,
    Relation,
    RelationKind,
    Scope,
    SourceKind,
    Status,
)
from governance.redaction.masking import masked_text, withheld

SECTIONS = ("goal", "constraints", "done", "superseded", "open_questions", "next_step")
SECTION_TITLES = {
    "goal": "Goal and scope",
    "constraints": "Constraints in force (confirmed)",
    "done": "Done, with the source of each result",
    "superseded": "Corrected or void",
    "open_questions": "Open: problems, failures, pending calls",
    "next_step": "Next step and its preconditions",
}
NATURES = ("fact", "guess", "proposal", "authorisation", "request", "pending", "void", "")
MAX_LINES = 10
MAX_CHARS = 240
GOAL_KEYS = ("goal", "task.goal")
NEXT_KEYS = ("next_step", "task.next_step")
PRECONDITION_PREFIXES = ("precondition", "next_step.precondition", "task.precondition")
OPEN_PREFIX = "open_question"
CONSTRAINT_KINDS = (Kind.CONVENTION, Kind.PREFERENCE, Kind.METHOD, Kind.SEMANTIC)
# A tool result that reports a failure is an open problem, not something done.
FAILURE = re.compile(
    r"\b(?:error|errors|failed|failure|fails|exception|traceback|timed? ?out|denied|refused|not found)\b"
    r"|失败|报错|错误|异常|超时|拒绝",
    re.IGNORECASE,
)


@dataclass
class SummaryLine:
    section: str
    text: str
    memory_ids: list[int] = field(default_factory=list)
    nature: str = ""
    # For a corrected requirement: what replaced it, as {"memory_id", "text"} (the text masked once forgotten).
    replaced_by: dict | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def _source(m: Memory) -> str:
    call = f" of call {m.call_id}" if m.call_id else ""
    return f"{m.source_kind}{call}{': ' + m.source_ref if m.source_ref else ''}"


def _label(m: Memory) -> str:
    return f"{m.key} r{m.revision}" if m.key else f"memory {m.pk}"


def _role(m: Memory) -> str:
    return (m.meta or {}).get("role", "")


def _said_by(qs, as_of: datetime):
    """The rows of `qs` that had been said by `as_of` (when it happened, else when it was written)."""
    return qs.annotate(said_at=Coalesce("occurred_at", "created_at")).filter(said_at__lte=as_of)


def _in_force_then(visible, as_of: datetime) -> set[int]:
    """Superseded memories whose every replacement was said after `as_of`: at that time, still in force."""
    replaced = Relation.objects.filter(
        kind=RelationKind.SUPERSEDES, target__in=visible.filter(status=Status.SUPERSEDED)
    ).annotate(replaced_at=Coalesce("source__occurred_at", "source__created_at"))
    already = replaced.filter(replaced_at__lte=as_of).values("target_id")
    return set(
        replaced.filter(replaced_at__gt=as_of)
        .exclude(target_id__in=already)
        .values_list("target_id", flat=True)
    )


def build_lines(
    scope: Scope, *, scope_ids: list[int] | tuple[int, ...] | None = None, as_of: datetime | None = None
) -> list[SummaryLine]:
    """The cited lines of `scope`'s hand-off: its own memories, and what it inherits from the scopes above it
    (`scope_ids`: exactly the scopes the reader may see, for a packet; default the scope and its ancestors).
    `as_of` (a packet's replay): only what had been said by then, and a rule replaced since in force again,
    as it was; a dispute proposed since is left out, one decided since is still open."""
    visible = (
        Memory.objects.filter(scope_id__in=list(scope_ids))
        if scope_ids is not None
        else Memory.objects.filter(scope__tree__ancestor_of=scope.tree)
    ).filter(purged_at__isnull=True)
    own = Memory.objects.filter(scope=scope, purged_at__isnull=True)
    then: set[int] = set()
    if as_of is not None:
        visible, own = _said_by(visible, as_of), _said_by(own, as_of)
        then = _in_force_then(visible, as_of)
    active = visible.filter(Q(status=Status.ACTIVE) | Q(pk__in=then))
    # In force means confirmed by a person (docs/governance.md): an active row no one confirmed is not.
    in_force = active.filter(confirmed_at__isnull=False).select_related("confirmed_by")
    lines: list[SummaryLine] = []

    goal = in_force.filter(key__in=GOAL_KEYS).order_by("-revision", "-pk").first()
    lines.append(
        SummaryLine("goal", f"{_clip(goal.text)} (scope: {scope.path})", [goal.pk], "authorisation")
        if goal
        else SummaryLine("goal", f"None recorded (scope: {scope.path}).")
    )

    special = Q(key__in=GOAL_KEYS + NEXT_KEYS) | Q(key__startswith=OPEN_PREFIX)
    for prefix in PRECONDITION_PREFIXES:
        special |= Q(key__startswith=prefix)
    for m in (
        in_force.filter(kind__in=CONSTRAINT_KINDS).exclude(special).order_by("-importance", "-pk")[:MAX_LINES]
    ):
        who = f", confirmed by {m.confirmed_by.name}" if m.confirmed_by_id else ""
        lines.append(
            SummaryLine("constraints", f"{_clip(m.text)} [{_label(m)}{who}]", [m.pk], "authorisation")
        )

    lines += _stages(own)
    turns = own.filter(kind=Kind.EPISODIC, status=Status.ACTIVE)
    results = list(
        turns.filter(source_kind=SourceKind.TOOL_RESULT).order_by("-occurred_at", "-pk")[: 2 * MAX_LINES]
    )
    failures = [m for m in results if FAILURE.search(m.text)]
    for m in [m for m in results if m not in failures][:MAX_LINES]:
        lines.append(SummaryLine("done", f"{_clip(m.text)} (source: {_source(m)})", [m.pk], "fact"))

    lines += _void(own.exclude(pk__in=then))
    pending = _pending_calls(turns, visible)
    lines += _open(own, visible, failures, pending, as_of)
    lines += _next(in_force, own, pending)
    return lines


def _requirements(own) -> list[Memory]:
    """The user's requirements of the scope's conversations still waiting for a person (newest first)."""
    return list(
        own.filter(status__in=(Status.CANDIDATE, Status.PROPOSED), meta__has_key="requirement")
        .exclude(kind=Kind.EPISODIC)
        .order_by("-pk")[: 5 * MAX_LINES]
    )


def _stages(own) -> list[SummaryLine]:
    """Stage facts the conversation established ("只处理我确认的 v3", "v3 is the final version"): the user's
    word, not confirmed by a person (nature: request), under the goal and scope."""
    out = []
    for m in _requirements(own):
        requirement = m.meta["requirement"]
        if requirement.get("replaced_by") or not (requirement.get("stage") or m.kind == Kind.STAGE_FACT):
            continue
        named = ", ".join(f"{s['text']} ({s['state']})" for s in requirement.get("stage") or ()) or "stage"
        said = f"session {m.session}, turn {m.source_ref}" if m.session else "the user"
        out.append(
            SummaryLine(
                "goal", f"Stage the user stated: {named}: {_clip(m.text)} ({said})", [m.pk], "request"
            )
        )
        if len(out) >= MAX_LINES:
            break
    return out


def _void(own) -> list[SummaryLine]:
    superseded = list(own.filter(status=Status.SUPERSEDED).order_by("-pk")[:MAX_LINES])
    successors = {
        r.target_id: r.source
        for r in Relation.objects.filter(target__in=superseded, kind=RelationKind.SUPERSEDES)
        .select_related("source")
        .filter(source__purged_at__isnull=True)
    }
    out = []
    for m in superseded:
        new = successors.get(m.pk)
        replaced = None
        if new is not None:
            # The newer version may itself be forgotten since (soft: its text is still stored): masked, and
            # not cited (a summary citing a forgotten memory is rebuilt on read).
            replaced = {"memory_id": new.pk, "text": _clip(masked_text(new.status, new.text))}
        ids = [m.pk] if new is None or withheld(new.status) else [m.pk, new.pk]
        out.append(SummaryLine("superseded", f"{_clip(m.text)} [{_label(m)}]", ids, "void", replaced))
    for m in own.filter(status=Status.RETIRED).exclude(kind=Kind.EPISODIC).order_by("-pk")[:MAX_LINES]:
        out.append(SummaryLine("superseded", f"Withdrawn: {_clip(m.text)} [{_label(m)}]", [m.pk], "void"))
    # What the user asked for and later replaced in the conversation (services/requirements.py): void for
    # the work, with what replaced it (which may still wait for a person).
    replaced = [
        m for m in _requirements(own) if (m.meta["requirement"].get("replaced_by") or {}).get("memory_id")
    ]
    later = {
        n.pk: n
        for n in Memory.objects.filter(
            pk__in=[m.meta["requirement"]["replaced_by"]["memory_id"] for m in replaced],
            purged_at__isnull=True,
        )
    }
    for m in replaced[:MAX_LINES]:
        new = later.get(m.meta["requirement"]["replaced_by"]["memory_id"])
        if new is None or new.status not in (Status.CANDIDATE, Status.PROPOSED, Status.ACTIVE):
            continue
        waiting = "" if new.status == Status.ACTIVE else ", awaiting a person"
        out.append(
            SummaryLine(
                "superseded",
                f"Replaced by the user later{waiting}: {_clip(m.text)}",
                [m.pk, new.pk],
                "void",
                {"memory_id": new.pk, "text": _clip(masked_text(new.status, new.text))},
            )
        )
    return out


def _pending_calls(turns, visible) -> list[Memory]:
    """Tool calls of the scope whose result no visible turn holds (the same call id), newest first."""
    calls = list(
        turns.filter(meta__role="tool_call").exclude(call_id="").order_by("-occurred_at", "-pk")[:50]
    )
    answered = set(
        visible.filter(
            kind=Kind.EPISODIC, call_id__in=[c.call_id for c in calls], meta__role="tool_result"
        ).values_list("call_id", flat=True)
    )
    return [c for c in calls if c.call_id not in answered][:MAX_LINES]


def _open(own, visible, failures: list[Memory], pending: list[Memory], as_of=None) -> list[SummaryLine]:
    out = [
        SummaryLine(
            "open_questions", f"Waiting for its result: {_clip(m.text)} (call {m.call_id})", [m.pk], "pending"
        )
        for m in pending
    ]
    out += [
        SummaryLine("open_questions", f"Failed: {_clip(m.text)} (source: {_source(m)})", [m.pk], "fact")
        for m in failures[:MAX_LINES]
    ]
    for m in own.filter(status=Status.ACTIVE, key__startswith=OPEN_PREFIX).order_by("pk")[:MAX_LINES]:
        out.append(SummaryLine("open_questions", _clip(m.text), [m.pk], "request"))
    for m in (
        own.filter(status__in=(Status.PROPOSED, Status.CANDIDATE))
        .exclude(kind=Kind.EPISODIC)
        .order_by("pk")[:MAX_LINES]
    ):
        if m.source_kind == SourceKind.MODEL_INFERENCE:
            continue  # a guess: below
        prefix = "Awaiting review" if m.status == Status.PROPOSED else "Proposed, not confirmed"
        out.append(SummaryLine("open_questions", f"{prefix}: {_clip(m.text)}", [m.pk], "proposal"))
    guesses = own.filter(
        source_kind=SourceKind.MODEL_INFERENCE, status__in=(Status.ACTIVE, Status.CANDIDATE, Status.PROPOSED)
    )
    for m in guesses.filter(confirmed_at__isnull=True).order_by("-pk")[:MAX_LINES]:
        out.append(SummaryLine("open_questions", f"Unverified guess: {_clip(m.text)}", [m.pk], "guess"))
    disputes = Dispute.objects.filter(newer__in=own, older__in=visible).select_related("newer", "older")
    if as_of is None:
        disputes = disputes.filter(state=DisputeState.PROPOSED)
    else:  # open then: proposed by that time, and not yet decided
        disputes = disputes.filter(created_at__lte=as_of).filter(
            Q(state=DisputeState.PROPOSED) | Q(decided_at__gt=as_of)
        )
    for d in disputes.order_by("-pk")[:MAX_LINES]:
        # One line per side (each its own memory's text), so a forget of either redacts exactly its line.
        out.append(
            SummaryLine(
                "open_questions", f"In dispute (newer): {_clip(d.newer.text)}", [d.newer_id], "proposal"
            )
        )
        out.append(
            SummaryLine(
                "open_questions", f"In dispute (older): {_clip(d.older.text)}", [d.older_id], "proposal"
            )
        )
    return out


def _next(in_force, own, pending: list[Memory]) -> list[SummaryLine]:
    nxt = in_force.filter(key__in=NEXT_KEYS).order_by("-revision", "-pk").first()
    out = [
        SummaryLine("next_step", _clip(nxt.text), [nxt.pk], "authorisation")
        if nxt
        else SummaryLine("next_step", "None recorded.")
    ]
    pre = Q()
    for prefix in PRECONDITION_PREFIXES:
        pre |= Q(key__startswith=prefix)
    for m in in_force.filter(pre).order_by("pk")[:MAX_LINES]:
        out.append(SummaryLine("next_step", f"Precondition: {_clip(m.text)}", [m.pk], "authorisation"))
    waiting = list(
        own.filter(status=Status.PROPOSED)
        .exclude(kind=Kind.EPISODIC)
        .values_list("pk", flat=True)[:MAX_LINES]
    )
    if pending or waiting:
        parts = []
        if pending:
            parts.append(f"{len(pending)} pending tool call(s) must return")
        if waiting:
            parts.append(f"{len(waiting)} proposal(s) need a person's decision")
        out.append(
            SummaryLine(
                "next_step",
                "Before it: " + "; ".join(parts) + ".",
                [m.pk for m in pending] + waiting,
                "pending",
            )
        )
    return out
