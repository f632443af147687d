"""What awaits one person's decision: the proposals they may confirm or reject and the disputes they may
settle or dismiss, in a scope's subtree and under the review queue's filters. The queue's heading, the
overview and the menu's badge read it; who may decide is governance.permissions' answer."""

from __future__ import annotations

from dataclasses import dataclass

from governance.models import Principal, Scope
from governance.permissions import Action, deciding_scopes
from governance.selectors.disputes import dispute_queue_queryset
from governance.selectors.review import QueueFilter, queue_queryset


@dataclass(frozen=True)
class Awaiting:
    proposals: int
    disputes: int

    @property
    def total(self) -> int:
        return self.proposals + self.disputes


NOTHING = Awaiting(0, 0)


def awaiting_decision(
    *, principal: Principal | None, scope: Scope | None = None, filters: QueueFilter | None = None
) -> Awaiting:
    """Proposals and disputes of the queue (`queue_queryset`, `dispute_queue_queryset`) that `principal`
    may decide: in scopes where it holds the confirm right (a reviewer may dismiss a dispute, so every
    dispute it may act on is counted), without the proposals it already approved (four-eyes: the second
    approval is someone else's). The grants and two COUNT queries; the grants alone when it may decide
    nothing. Nobody (None, the system) is not a person and has nothing awaiting it."""
    if principal is None:
        return NOTHING
    deciding = deciding_scopes(principal, Action.CONFIRM)
    # The queue's querysets without their own grant filters (principal=None): `deciding` is narrower than
    # the governed and the readable scopes they would ask for, and asking for them costs a query each.
    proposals = (
        queue_queryset(principal=None, scope=scope, filters=filters)
        .filter(scope__in=deciding)
        .exclude(meta__contains={"approvals": [principal.pk]})
    )
    disputes = dispute_queue_queryset(principal=None, scope=scope, filters=filters).filter(
        newer__scope__in=deciding, older__scope__in=deciding
    )
    return Awaiting(proposals=proposals.count(), disputes=disputes.count())
