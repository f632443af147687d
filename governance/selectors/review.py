"""The review queue: proposals, promotions and conflicts waiting for a person, with what a reviewer needs
to decide (the supporting episodes, the active memory it contradicts, approvals so far and needed)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from governance.models import Memory, Principal, Relation, RelationKind, Scope, Status
from governance.permissions import (
    Action,
    RoleMap,
    approvals_needed,
    approvers,
    four_eyes_trees,
    governed_scopes,
    under,
)


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


def _confirmable_trees(principal: Principal | None) -> list[str] | None:
    return None if principal is None else RoleMap.of(principal).trees(Action.CONFIRM)


def _under_any(tree: str, roots: list[str] | None) -> bool:
    return roots is None or any(under(tree, r) for r in roots)


def review_queue(*, principal: Principal | None, scope: Scope | None = None, limit: int = 200) -> list[ReviewItem]:
    """Everything in status `proposed` the principal may read (in `scope`'s subtree when given), oldest first.
    A fixed number of queries whatever the queue length."""
    qs = Memory.objects.filter(status=Status.PROPOSED).select_related("scope")
    if principal is not None:
        qs = qs.filter(scope__in=governed_scopes(principal))
    if scope is not None:
        qs = qs.filter(scope__tree__descendant_of=scope.tree)
    memories = list(qs.order_by("created_at", "pk")[:limit])
    ids = [m.pk for m in memories]
    relations = list(
        Relation.objects.filter(source_id__in=ids, kind__in=(RelationKind.DERIVED_FROM, RelationKind.CONTRADICTS))
        .select_related("target", "target__scope")
        .order_by("pk")
    )
    supporting: dict[int, list[Memory]] = defaultdict(list)
    conflicting: dict[int, list[Memory]] = defaultdict(list)
    for rel in relations:
        if rel.kind == RelationKind.DERIVED_FROM:
            supporting[rel.source_id].append(rel.target)
        elif rel.target.status == Status.ACTIVE:
            conflicting[rel.source_id].append(rel.target)
    approver_ids = {a for m in memories for a in approvers(m)}
    names = dict(Principal.objects.filter(pk__in=approver_ids).values_list("pk", "name"))
    confirm_roots = _confirmable_trees(principal)
    four_eyes = four_eyes_trees({m.scope.tree for m in memories})
    items = []
    for m in memories:
        if conflicting[m.pk]:
            kind = "conflict"
        elif m.meta.get("promotion"):
            kind = "promotion"
        else:
            kind = "proposal"
        items.append(ReviewItem(
            kind=kind, memory=m, supporting=supporting[m.pk],
            conflicting=conflicting[m.pk][0] if conflicting[m.pk] else None, conflicting_all=conflicting[m.pk],
            approvals=[names.get(a, f"#{a}") for a in approvers(m)],
            # meta.approvals_needed: a mid-term revision of a long-term rule needs two (recorded at the first approval).
            approvals_needed=max(approvals_needed(m, m.scope.tree in four_eyes), int(m.meta.get("approvals_needed") or 1)),
            can_confirm=_under_any(m.scope.tree, confirm_roots),
        ))
    return items


__all__ = ["ReviewItem", "review_queue"]
