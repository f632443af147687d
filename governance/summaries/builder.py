"""The deterministic part of a summary: which memories say what, section by section. Every line cites the
ids it was built from, so a change to any of them marks the summary stale and a rebuild reflects it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from django.db.models import Q

from governance.models import Kind, Memory, Relation, RelationKind, Scope, Status
from governance.redaction.masking import masked_text, withheld

SECTIONS = ("goal", "constraints", "done", "superseded", "open_questions", "next_step")
SECTION_TITLES = {
    "goal": "Goal",
    "constraints": "Constraints in force",
    "done": "What was done",
    "superseded": "No longer in force",
    "open_questions": "Open questions",
    "next_step": "Next step",
}
MAX_LINES = 10
MAX_CHARS = 240
GOAL_KEYS = ("goal", "task.goal")
NEXT_KEYS = ("next_step", "task.next_step")
CONSTRAINT_KINDS = (Kind.CONVENTION, Kind.PREFERENCE, Kind.METHOD, Kind.SEMANTIC)


@dataclass
class SummaryLine:
    section: str
    text: str
    memory_ids: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def _source(m: Memory) -> str:
    return f"{m.source_kind}{': ' + m.source_ref if m.source_ref else ''}"


def build_lines(scope: Scope) -> list[SummaryLine]:
    """Read the scope (and what it inherits from its ancestors) and produce the cited lines."""
    visible = Memory.objects.filter(scope__tree__ancestor_of=scope.tree, purged_at__isnull=True)
    active = visible.filter(status=Status.ACTIVE)
    # In force means confirmed by a person (docs/governance.md): an active row no one confirmed is not.
    in_force = active.filter(confirmed_at__isnull=False)
    lines: list[SummaryLine] = []

    goal = in_force.filter(key__in=GOAL_KEYS).order_by("-revision", "-pk").first()
    lines.append(
        SummaryLine("goal", _clip(goal.text), [goal.pk]) if goal else SummaryLine("goal", "None recorded.")
    )

    for m in (
        in_force.filter(kind__in=CONSTRAINT_KINDS)
        .exclude(key__in=GOAL_KEYS + NEXT_KEYS)
        .order_by("-importance", "-pk")[:MAX_LINES]
    ):
        lines.append(SummaryLine("constraints", _clip(m.text), [m.pk]))

    own = Memory.objects.filter(scope=scope, purged_at__isnull=True)
    for m in own.filter(kind=Kind.EPISODIC, status=Status.ACTIVE).order_by("-occurred_at", "-pk")[:MAX_LINES]:
        lines.append(SummaryLine("done", f"{_clip(m.text)} (source: {_source(m)})", [m.pk]))

    superseded = list(own.filter(status=Status.SUPERSEDED).order_by("-pk")[:MAX_LINES])
    successors = {
        r.target_id: r.source
        for r in Relation.objects.filter(target__in=superseded, kind=RelationKind.SUPERSEDES)
        .select_related("source")
        .filter(source__purged_at__isnull=True)
    }
    for m in superseded:
        new = successors.get(m.pk)
        if new is not None:
            # The newer version may itself be forgotten since (soft: its text is still stored): masked, and
            # not cited (a summary citing a forgotten memory is rebuilt on read).
            lines.append(
                SummaryLine(
                    "superseded",
                    f"{_clip(m.text)} → replaced by: {_clip(masked_text(new.status, new.text))}",
                    [m.pk] if withheld(new.status) else [m.pk, new.pk],
                )
            )
        else:
            lines.append(SummaryLine("superseded", _clip(m.text), [m.pk]))

    questions = own.filter(
        Q(status=Status.PROPOSED) | Q(status=Status.ACTIVE, key__startswith="open_question")
    ).order_by("pk")[:MAX_LINES]
    for m in questions:
        prefix = "Awaiting review: " if m.status == Status.PROPOSED else ""
        lines.append(SummaryLine("open_questions", prefix + _clip(m.text), [m.pk]))

    nxt = in_force.filter(key__in=NEXT_KEYS).order_by("-revision", "-pk").first()
    lines.append(
        SummaryLine("next_step", _clip(nxt.text), [nxt.pk])
        if nxt
        else SummaryLine("next_step", "None recorded.")
    )
    return lines
