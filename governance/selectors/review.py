"""The review queue: proposals, promotions and conflicts waiting for a person, with what a reviewer needs
to decide (where it came from, who proposed it and why, the supporting episodes, the active memory it
contradicts, approvals so far and needed), filtered and paged by keyset on (created_at, id)."""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from governance.errors import InvalidInput
from governance.models import (
    NEAR_DUPLICATE_OF,
    NEAR_DUPLICATES,
    AuditEvent,
    Kind,
    Memory,
    Principal,
    Relation,
    RelationKind,
    Scope,
    Status,
    Turn,
)
from governance.permissions import (
    Action,
    RoleMap,
    approvals_needed,
    approvers,
    four_eyes_trees,
    governed_scopes,
    memory_readable_scopes,
    under,
)
from governance.runtime import cursor as codec
from governance.runtime import dates
from governance.selectors.session_overrides import session_override_notes

# Age filters the queue offers: "older than" / "newer than" one of these.
AGES: dict[str, timedelta] = {
    "1h": timedelta(hours=1),
    "1d": timedelta(days=1),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
SORTS = ("oldest", "newest")
BAD_AGE = f"Age is one of: {', '.join(AGES)}."
BAD_SORT = "Sort is oldest or newest."
BAD_KIND = f"Kind is one of: {', '.join(Kind.values)}."
BAD_CURSOR = codec.BAD_CURSOR
# Audit actions whose reason is the proposer's own word on why it should be in force.
PROPOSE_ACTIONS = ("memory.propose", "memory.promotion_propose")


@dataclass
class ReviewItem:
    kind: str  # "proposal" | "promotion" | "conflict"
    memory: Memory
    supporting: list[Memory] = field(default_factory=list)
    conflicting: Memory | None = None
    conflicting_all: list[Memory] = field(default_factory=list)
    approvals: list[str] = field(default_factory=list)  # names of the reviewers who approved so far
    approvals_needed: int = 1
    can_confirm: bool = False
    proposer_reason: str = ""  # the proposer's reason (audit), or what the extractor said
    origin_turn_id: int | None = None  # the stored turn of the session just before it was written
    edited_from: Memory | None = None  # the proposal a reviewer edited into this one
    # What confirming it puts in force when it corrects part of a keyed rule (services.review.with_revisions).
    revision: str = ""
    session_override: dict | None = (
        None  # in force in its own session meanwhile (selectors.session_overrides)
    )
    # The memory this proposal repeats (services/near_duplicate.py), and the repeats merged into this one.
    near_duplicate: Memory | None = None
    merged: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class QueueFilter:
    """The queue's filters; `after` is the keyset cursor (created_at, id) of the last item shown."""

    kind: str = ""
    proposer: str = ""
    older: str = ""
    newer: str = ""
    sort: str = "oldest"
    after: tuple[datetime, int] | None = None
    # The disputes listed beside the proposals page on their own (selectors/disputes.py): the last one shown.
    disputes_after: int | None = None

    @classmethod
    def parse(cls, params) -> QueueFilter:
        """From a query string; a bad value is a 400 with the field named, never ignored."""
        kind, older, newer = params.get("kind", ""), params.get("older", ""), params.get("newer", "")
        sort = params.get("sort", "") or "oldest"
        if kind and kind not in Kind.values:
            raise InvalidInput(BAD_KIND, field="kind")
        for name, value in (("older", older), ("newer", newer)):
            if value and value not in AGES:
                raise InvalidInput(BAD_AGE, field=name)
        if sort not in SORTS:
            raise InvalidInput(BAD_SORT, field="sort")
        return cls(
            kind=kind,
            proposer=params.get("proposer", "")[:150],
            older=older,
            newer=newer,
            sort=sort,
            after=decode_cursor(params.get("after", "")),
            disputes_after=codec.decode_id(params.get("disputes_after", ""), "disputes", "disputes_after"),
        )


def encode_cursor(memory: Memory) -> str:
    return codec.encode("review", [memory.created_at.isoformat(), memory.pk])


def decode_cursor(raw: str) -> tuple[datetime, int] | None:
    values = codec.decode(raw, "review", "after", BAD_CURSOR)
    if values is None:
        return None
    if len(values) != 2 or not isinstance(values[0], str) or not values[0]:
        raise InvalidInput(BAD_CURSOR, field="after")
    return (
        dates.parse_instant(values[0], "after", BAD_CURSOR, aware=True),
        codec.id_of(values[1], "after", BAD_CURSOR),
    )


def _confirmable_trees(principal: Principal | None) -> list[str] | None:
    return None if principal is None else RoleMap.of(principal).trees(Action.CONFIRM)


def _under_any(tree: str, roots: list[str] | None) -> bool:
    return roots is None or any(under(tree, r) for r in roots)


def queue_queryset(
    *, principal: Principal | None, scope: Scope | None = None, filters: QueueFilter | None = None
):
    """The proposals the principal governs (in `scope`'s subtree when given) that pass the filters,
    unordered and unpaged: what the queue lists and counts."""
    f = filters or QueueFilter()
    qs = Memory.objects.filter(status=Status.PROPOSED)
    if principal is not None:
        qs = qs.filter(scope__in=governed_scopes(principal))
    if scope is not None:
        qs = qs.filter(scope__tree__descendant_of=scope.tree)
    if f.kind:
        qs = qs.filter(kind=f.kind)
    if f.proposer == "-":  # written by the system (imports, the demo, tasks)
        qs = qs.filter(created_by__isnull=True)
    elif f.proposer:
        qs = qs.filter(created_by__name=f.proposer)
    now = timezone.now()
    if f.older:
        qs = qs.filter(created_at__lte=now - AGES[f.older])
    if f.newer:
        qs = qs.filter(created_at__gte=now - AGES[f.newer])
    return qs


def origin_turn() -> Subquery:
    """The turn a memory (the outer row) was seen in: the last context packet of its session, in its scope,
    before it was written (the index on turn (scope, session, -created_at) answers it per row). Review
    shows it; turn retention keeps it while the memory waits for a person."""
    return Subquery(
        Turn.objects.filter(
            scope_id=OuterRef("scope_id"),
            session=OuterRef("session"),
            created_at__lte=OuterRef("created_at"),
        )
        .exclude(session="")
        .order_by("-created_at")
        .values("pk")[:1]
    )


def _replaces(memory: Memory) -> int | None:
    replaces = ((memory.meta or {}).get("requirement") or {}).get("replaces")
    return replaces.get("memory_id") if isinstance(replaces, dict) else None


def review_queue(
    *,
    principal: Principal | None,
    scope: Scope | None = None,
    limit: int = 200,
    filters: QueueFilter | None = None,
) -> list[ReviewItem]:
    """Everything in status `proposed` the principal governs (in `scope`'s subtree when given) that passes
    `filters`, oldest first (or newest), `limit` of them after the cursor. A fixed number of queries
    whatever the queue length."""
    f = filters or QueueFilter()
    qs = queue_queryset(principal=principal, scope=scope, filters=f)
    if f.after is not None:
        at, pk = f.after
        if f.sort == "newest":
            qs = qs.filter(Q(created_at__lt=at) | Q(created_at=at, pk__lt=pk))
        else:
            qs = qs.filter(Q(created_at__gt=at) | Q(created_at=at, pk__gt=pk))
    order = ("-created_at", "-pk") if f.sort == "newest" else ("created_at", "pk")
    memories = list(
        qs.select_related("scope", "created_by")
        .annotate(origin_turn_id=origin_turn())
        .order_by(*order)[:limit]
    )
    ids = [m.pk for m in memories]
    relations = list(
        Relation.objects.filter(
            source_id__in=ids, kind__in=(RelationKind.DERIVED_FROM, RelationKind.CONTRADICTS)
        )
        .select_related("target", "target__scope")
        .order_by("pk")
    )
    relations = _masked_for(principal, relations)
    supporting: dict[int, list[Memory]] = defaultdict(list)
    conflicting: dict[int, list[Memory]] = defaultdict(list)
    edited_from: dict[int, Memory] = {}
    edits = {m.pk: m.meta.get("edited_from") for m in memories if m.meta.get("edited_from")}
    replaces = {m.pk: _replaces(m) for m in memories}
    for rel in relations:
        if rel.kind == RelationKind.DERIVED_FROM and rel.target_id == edits.get(rel.source_id):
            edited_from[rel.source_id] = rel.target
        elif rel.kind == RelationKind.DERIVED_FROM:
            supporting[rel.source_id].append(rel.target)
        elif rel.target.status == Status.ACTIVE or rel.target_id == replaces.get(rel.source_id):
            # in force, or the user's earlier requirement this one replaces (services/requirements.py)
            conflicting[rel.source_id].append(rel.target)
    reasons = _proposer_reasons(ids)
    approver_ids = {a for m in memories for a in approvers(m)}
    names = (
        dict(Principal.objects.filter(pk__in=approver_ids).values_list("pk", "name")) if approver_ids else {}
    )
    confirm_roots = _confirmable_trees(principal)
    four_eyes = four_eyes_trees({m.scope.tree for m in memories})
    overrides = session_override_notes(memories, conflicting)
    repeated = _repeated(memories)
    items = []
    for m in memories:
        if conflicting[m.pk]:
            kind = "conflict"
        elif m.meta.get("promotion"):
            kind = "promotion"
        else:
            kind = "proposal"
        items.append(
            ReviewItem(
                kind=kind,
                memory=m,
                supporting=supporting[m.pk],
                conflicting=conflicting[m.pk][0] if conflicting[m.pk] else None,
                conflicting_all=conflicting[m.pk],
                approvals=[names.get(a, f"#{a}") for a in approvers(m)],
                # meta.approvals_needed: a mid-term revision of a long-term rule needs two (recorded at the first approval).
                approvals_needed=max(
                    approvals_needed(m, m.scope.tree in four_eyes), int(m.meta.get("approvals_needed") or 1)
                ),
                can_confirm=_under_any(m.scope.tree, confirm_roots),
                proposer_reason=reasons.get(m.pk) or _described_reason(m),
                origin_turn_id=m.origin_turn_id,
                edited_from=edited_from.get(m.pk),
                session_override=overrides.get(m.pk),
                near_duplicate=repeated.get(m.pk),
                merged=list(m.meta.get(NEAR_DUPLICATES) or []),
            )
        )
    return items


def _repeated(memories: list[Memory]) -> dict[int, Memory]:
    """For each proposal that repeats a memory of its own scope (meta near_duplicate_of), that memory
    (same scope, so readable by whoever may review it). One query."""
    wanted = {
        m.pk: (m.meta.get(NEAR_DUPLICATE_OF) or {}).get("memory_id")
        for m in memories
        if m.meta.get(NEAR_DUPLICATE_OF)
    }
    if not wanted:
        return {}
    found = Memory.objects.filter(pk__in=set(wanted.values())).select_related("scope").in_bulk()
    return {pk: found[other] for pk, other in wanted.items() if other in found}


UNREADABLE_TEXT = "(in a scope you cannot read; the text is not shown)"


def _masked_for(principal: Principal | None, relations: list[Relation]) -> list[Relation]:
    """A proposal may link to a memory in a scope the reviewer cannot read (an ancestor's rule is
    readable, a sibling project's is not): that memory's text and key are masked, its existence (a
    conflict, evidence) still shown. One query."""
    if principal is None or not relations:
        return relations
    scope_ids = {rel.target.scope_id for rel in relations}
    readable = set(memory_readable_scopes(principal).filter(pk__in=scope_ids).values_list("pk", flat=True))
    for rel in relations:
        if rel.target.scope_id not in readable:
            masked = copy.copy(rel.target)
            masked.text, masked.key, masked.session, masked.masked = UNREADABLE_TEXT, None, "", True
            rel.target = masked
    return relations


def _proposer_reasons(ids: list[int]) -> dict[int, str]:
    """The latest non-empty reason given when each memory was put in the queue (one query)."""
    if not ids:
        return {}
    rows = (
        AuditEvent.objects.filter(
            target_type="memory", target_id__in=[str(i) for i in ids], action__in=PROPOSE_ACTIONS
        )
        .exclude(reason="")
        .order_by("at", "pk")
        .values_list("target_id", "reason")
    )
    return {int(target): reason for target, reason in rows}


def _described_reason(memory: Memory) -> str:
    meta = memory.meta or {}
    if meta.get("promotion"):
        return f"Seen in {len(meta['promotion'].get('sessions') or [])} sessions; proposed for promotion to a long-term commitment."
    if meta.get("requested_status") == "active":
        return "Written as active by a principal without the confirm right; held for review."
    if meta.get("rule"):
        return f"Extracted from the conversation ({meta.get('extracted_by') or 'extractor'}, rule {meta['rule']})."
    return ""


def queue_proposers(*, principal: Principal | None, scope: Scope | None = None) -> list[str]:
    """Names of the principals with proposals in the principal's queue (the proposer filter's choices)."""
    qs = queue_queryset(principal=principal, scope=scope)
    return sorted({n for n in qs.values_list("created_by__name", flat=True).distinct() if n})


__all__ = [
    "AGES",
    "QueueFilter",
    "ReviewItem",
    "decode_cursor",
    "encode_cursor",
    "origin_turn",
    "queue_proposers",
    "queue_queryset",
    "review_queue",
]
