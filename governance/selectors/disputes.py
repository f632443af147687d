"""Proposed contradictions (Dispute) for review: the ones in a scope's subtree that the caller may read,
for the API (`disputes_for_reader`, newest first) and the dashboard's review queue (`dispute_queue`, in the
queue's order and with its filters), both paged by a keyset cursor on the id. The deciding is
governance/services/dispute.py."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q, QuerySet
from django.utils import timezone

from governance.models import Dispute, DisputeState, Principal, Scope
from governance.permissions import (
    ACTION_ROLES,
    Action,
    RoleMap,
    governed_scopes,
    memory_readable_scopes,
    role_rank,
    under,
)
from governance.redaction.masking import masked_text, withheld
from governance.runtime import cursor as codec
from governance.selectors.review import AGES, QueueFilter

MAX_LIST = 200
QUEUE_SHOWN = 50


def _listed(qs: QuerySet[Dispute]) -> QuerySet[Dispute]:
    return qs.select_related("newer__scope", "older__scope", "holds", "decided_by").defer(
        "newer__embedding", "older__embedding"
    )


CURSOR = "disputes"  # the keyset cursor of both lists (governance/runtime/cursor.py): the last id shown


def encode_cursor(dispute: Dispute) -> str:
    return codec.encode_id(CURSOR, dispute.pk)


def _paged(qs: QuerySet[Dispute], after: int | None, newest: bool, limit: int) -> QuerySet[Dispute]:
    """Keyset paging by id (a dispute's id follows its creation): `limit` of them after the cursor."""
    if after is not None:
        qs = qs.filter(pk__lt=after) if newest else qs.filter(pk__gt=after)
    return _listed(qs).order_by("-id" if newest else "id")[: max(1, min(limit, MAX_LIST))]


def disputes_for_reader(
    *,
    actor: Principal | None,
    scope: Scope,
    state: str = DisputeState.PROPOSED,
    limit: int = 50,
    after: int | None = None,
) -> QuerySet[Dispute]:
    """Disputes of `state` whose memories lie in `scope`'s subtree and both of which `actor` may read,
    newest first, `limit` of them older than the cursor `after` (a dispute id)."""
    readable = memory_readable_scopes(actor)
    qs = Dispute.objects.filter(state=state, newer__scope__tree__descendant_of=scope.tree).filter(
        newer__scope__in=readable, older__scope__in=readable
    )
    return _paged(qs, after, True, limit)


@dataclass
class DisputeSide:
    memory_id: int
    text: str  # masked once the memory is forgotten (governance.redaction.masking)
    withheld: bool
    status: str
    kind: str
    at: object  # when it was said (occurred_at, else created_at)


@dataclass
class DisputeItem:
    dispute: Dispute
    newer: DisputeSide
    older: DisputeSide
    can_confirm: bool  # the supersede right on the scope (governance.permissions)
    can_dismiss: bool  # the confirm right on the scope

    @property
    def sides(self) -> list[tuple[DisputeSide, str]]:
        return [(self.newer, "Newer"), (self.older, "Older")]


def _side(memory) -> DisputeSide:
    return DisputeSide(
        memory_id=memory.pk,
        text=masked_text(memory.status, memory.text),
        withheld=withheld(memory.status),
        status=memory.status,
        kind=memory.kind,
        at=memory.occurred_at or memory.created_at,
    )


def _roles(action: Action) -> list[str]:
    return sorted(ACTION_ROLES[action], key=role_rank)


DECIDERS = {"confirm": _roles(Action.SUPERSEDE), "dismiss": _roles(Action.CONFIRM)}


def dispute_queue_queryset(
    *, principal: Principal | None, scope: Scope | None = None, filters: QueueFilter | None = None
) -> QuerySet[Dispute]:
    """The open disputes the review queue lists beside the proposals, unordered and unpaged (what it lists
    and counts): their newer memory in a scope the principal governs (in `scope`'s subtree when given),
    both memories readable, passing the queue's filters as they apply to a dispute: the kind of either
    memory, the proposer (the system proposes every dispute: "-" keeps them, a person's name none), and
    the age of the proposal."""
    f = filters or QueueFilter()
    qs = Dispute.objects.filter(state=DisputeState.PROPOSED)
    if principal is not None:
        qs = qs.filter(
            newer__scope__in=governed_scopes(principal), older__scope__in=memory_readable_scopes(principal)
        )
    if scope is not None:
        qs = qs.filter(newer__scope__tree__descendant_of=scope.tree)
    if f.kind:
        qs = qs.filter(Q(newer__kind=f.kind) | Q(older__kind=f.kind))
    if f.proposer and f.proposer != "-":
        qs = qs.none()
    now = timezone.now()
    if f.older:
        qs = qs.filter(created_at__lte=now - AGES[f.older])
    if f.newer:
        qs = qs.filter(created_at__gte=now - AGES[f.newer])
    return qs


def dispute_queue(
    *,
    principal: Principal | None,
    scope: Scope | None = None,
    limit: int = QUEUE_SHOWN,
    filters: QueueFilter | None = None,
) -> list[DisputeItem]:
    """A page of dispute_queue_queryset in the queue's order (oldest first, or newest), after the filters'
    `disputes_after` cursor; each with what the principal may do. Two queries whatever the number (the
    grants and the disputes)."""
    f = filters or QueueFilter()
    qs = dispute_queue_queryset(principal=principal, scope=scope, filters=f)
    roles = RoleMap.of(principal) if principal is not None else None
    confirm_roots = roles.trees(Action.SUPERSEDE) if roles else None
    dismiss_roots = roles.trees(Action.CONFIRM) if roles else None

    def allowed(tree: str, roots: list[str] | None) -> bool:
        return roots is None or any(under(tree, r) for r in roots)

    return [
        DisputeItem(
            dispute=d,
            newer=_side(d.newer),
            older=_side(d.older),
            can_confirm=allowed(d.newer.scope.tree, confirm_roots),
            can_dismiss=allowed(d.newer.scope.tree, dismiss_roots),
        )
        for d in _paged(qs, f.disputes_after, f.sort == "newest", limit)
    ]
