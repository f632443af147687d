"""A scope's stored summary as the dashboard shows it: its lines with the memories they cite (status
today, readable or not), masked where a cited memory was forgotten since, and its staleness."""

from __future__ import annotations

from dataclasses import dataclass, field

from governance.models import Memory, Principal, Scope, Summary
from governance.permissions import memory_readable_scopes
from governance.redaction.masking import FORGOTTEN_TEXT, GONE, withheld
from governance.summaries.builder import SECTION_TITLES, SECTIONS
from governance.summaries.writers import replaced_by


@dataclass
class CitedMemory:
    id: int
    status: str  # today's status, or masking.GONE when the row no longer exists
    label: str  # key and revision, or "#id"
    readable: bool
    key: str | None = None
    revision: int | None = None
    scope_path: str = ""  # only for a readable memory: the label's scope (memoryui/labels.py)


@dataclass
class SummaryLineView:
    section: str
    title: str
    text: str
    cited: list[CitedMemory] = field(default_factory=list)
    masked: bool = False


@dataclass
class SummaryView:
    summary: Summary
    lines: list[SummaryLineView]
    cites_forgotten: bool

    @property
    def stale(self) -> bool:
        return self.summary.stale or self.cites_forgotten


def scope_summary(principal: Principal, scope: Scope) -> SummaryView | None:
    """The stored summary of `scope` (None before its first build), never rebuilt here: a page read makes
    no write. A line citing a memory forgotten (or deleted) since shows no text. Three queries."""
    summary = Summary.objects.select_related("built_by").filter(scope=scope).first()
    if summary is None:
        return None
    ids = {int(i) for line in summary.lines for i in line.get("memory_ids", [])}
    rows = {
        m["pk"]: m
        for m in Memory.objects.filter(pk__in=ids).values("pk", "status", "key", "revision", "scope_id")
    }
    readable = dict(
        memory_readable_scopes(principal)
        .filter(pk__in={r["scope_id"] for r in rows.values()})
        .values_list("pk", "path")
    )
    lines, cites_forgotten = [], False
    for line in summary.lines:
        cited = []
        for i in line.get("memory_ids", []):
            row = rows.get(int(i))
            status = row["status"] if row else GONE
            label = f"{row['key']} r{row['revision']}" if row and row["key"] else f"#{i}"
            cited.append(
                CitedMemory(
                    id=int(i),
                    status=status,
                    label=label,
                    readable=bool(row) and row["scope_id"] in readable,
                    key=row["key"] if row else None,
                    revision=row["revision"] if row else None,
                    scope_path=readable.get(row["scope_id"], "") if row else "",
                )
            )
        masked = any(withheld(c.status) for c in cited)
        cites_forgotten = cites_forgotten or masked
        section = line.get("section", "")
        lines.append(
            SummaryLineView(
                section=section,
                title=SECTION_TITLES.get(section, section),
                cited=cited,
                masked=masked,
                # A corrected requirement's replacement is a member of its own (the builder's replaced_by).
                text=FORGOTTEN_TEXT
                if masked
                else line.get("text", "") + replaced_by(line.get("replaced_by")),
            )
        )
    order = {s: n for n, s in enumerate(SECTIONS)}
    lines.sort(key=lambda v: order.get(v.section, len(order)))
    return SummaryView(summary=summary, lines=lines, cites_forgotten=cites_forgotten)
