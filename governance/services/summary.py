"""Writes of derived summaries: build (or rebuild) a scope's summary, mark summaries stale, redact.
A summary is derived data, rebuilt in place: after a source is forgotten the rebuild leaves it out, so
no copy of the forgotten text survives in the summary table."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from governance.models import Memory, Outbox, Principal, Scope, Status, Summary
from governance.permissions import Action, require
from governance.propagation.stores import handler, outbox_memory_ids, repair
from governance.services.audit import AuditEntry, audit_record
from governance.summaries.builder import build_lines
from governance.summaries.writers import get_writer


def summary_build(*, scope: Scope, actor: Principal | None, reason: str = "") -> Summary:
    """Build the scope's summary from its current memories and store it (one row per scope)."""
    require(actor, scope, Action.READ)
    lines = build_lines(scope)
    writer = get_writer()
    text = writer.write(scope_path=scope.path, lines=lines)
    cited = sorted({i for line in lines for i in line.memory_ids})
    with transaction.atomic():
        summary, created = Summary.objects.select_for_update().get_or_create(
            scope=scope, defaults={"built_at": timezone.now()}
        )
        summary.lines = [line.as_dict() for line in lines]
        summary.text = text
        summary.cited_ids = cited
        summary.writer = writer.name
        summary.stale = False
        summary.stale_reason = ""
        summary.built_at = timezone.now()
        summary.built_by = actor
        summary.save(
            update_fields=[
                "lines",
                "text",
                "cited_ids",
                "writer",
                "stale",
                "stale_reason",
                "built_at",
                "built_by",
            ]
        )
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "summary.build",
                "summary",
                str(summary.pk),
                scope.path,
                "",
                "built",
                reason,
                {"lines": len(lines), "cites": len(cited), "writer": writer.name},
            ),
        )
    return summary


def summaries_affected(memory_ids: list[int]) -> QuerySet[Summary]:  # noqa: F821
    """Summaries that cite any of the memories, or whose scope sees them (the memory's scope or below)."""
    trees = set(Memory.objects.filter(pk__in=memory_ids).values_list("scope__tree", flat=True))
    q = Q(cited_ids__overlap=list(memory_ids))
    for tree in trees:
        q |= Q(scope__tree__descendant_of=tree)
    return Summary.objects.filter(q)


def summaries_mark_stale(*, memory_ids: list[int], reason: str) -> int:
    """Derived-store bookkeeping (no audit: no domain state changes); the next read or beat rebuilds."""
    return summaries_affected(memory_ids).filter(stale=False).update(stale=True, stale_reason=reason[:200])


@repair("summaries_redact")
def summaries_redact(*, memory_ids: list[int]) -> int:
    """Rebuild now every summary citing a forgotten memory (the rebuild leaves it out). Returns how many."""
    count = 0
    for summary in Summary.objects.filter(cited_ids__overlap=list(memory_ids)).select_related("scope"):
        summary_build(scope=summary.scope, actor=None, reason="a cited memory was forgotten")
        count += 1
    return count


def summary_get(*, scope: Scope, actor: Principal | None) -> Summary:
    """The scope's summary, rebuilt first when missing or stale (reads never show a stale hand-off)."""
    require(actor, scope, Action.READ)
    summary = Summary.objects.filter(scope=scope).first()
    if summary is None or summary.stale or _cites_forgotten(summary):
        summary = summary_build(scope=scope, actor=actor, reason="stale" if summary else "first build")
    return summary


def _cites_forgotten(summary: Summary) -> bool:
    """A cited memory forgotten since the build, before the worker marked the summary stale: the read
    rebuilds rather than show its text (reads never wait for propagation)."""
    return (
        bool(summary.cited_ids)
        and Memory.objects.filter(pk__in=summary.cited_ids, status=Status.FORGOTTEN).exists()
    )


def rebuild_stale_summaries(*, limit: int = 100) -> int:
    scopes = list(Scope.objects.filter(summary__stale=True)[:limit])
    for scope in scopes:
        summary_build(scope=scope, actor=None, reason="stale")
    return len(scopes)


@handler("summaries")
def summaries_store(outbox: Outbox) -> None:
    """The summaries' derived-store handler (registered in governance.propagation.stores)."""
    if outbox.topic == "scope.changed":
        # Renamed or moved: the subtree's summaries name the old path and (after a move) cover other
        # ancestors; the next read rebuilds them.
        scope = Scope.objects.filter(pk=outbox.payload.get("scope_id")).first()
        if scope is not None:
            Summary.objects.filter(scope__tree__descendant_of=scope.tree, stale=False).update(
                stale=True, stale_reason="scope renamed, moved or reconfigured"
            )
        return
    ids = outbox_memory_ids(outbox)
    if not ids:
        return
    if outbox.topic == "memory.forgotten":
        # Rebuilt now, not marked stale: a forgotten source must not wait for a reader. A summary that did
        # not cite it cannot contain it, and its other lines are unchanged.
        summaries_redact(memory_ids=ids)
        return
    summaries_mark_stale(memory_ids=ids, reason=outbox.topic)
