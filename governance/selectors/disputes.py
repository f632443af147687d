"""Proposed contradictions (Dispute) for review: the ones in a scope's subtree that the caller may read,
newest first. The deciding is governance/services/dispute.py."""

from __future__ import annotations

from django.db.models import QuerySet

from governance.models import Dispute, DisputeState, Principal, Scope
from governance.permissions import memory_readable_scopes

MAX_LIST = 200


def disputes_for_reader(
    *, actor: Principal | None, scope: Scope, state: str = DisputeState.PROPOSED, limit: int = 50
) -> QuerySet[Dispute]:
    """Disputes of `state` whose memories lie in `scope`'s subtree and both of which `actor` may read."""
    readable = memory_readable_scopes(actor)
    return (
        Dispute.objects.filter(state=state, newer__scope__tree__descendant_of=scope.tree)
        .filter(newer__scope__in=readable, older__scope__in=readable)
        .select_related("newer__scope", "older", "holds", "decided_by")
        .defer("newer__embedding", "older__embedding")
        .order_by("-id")[: max(1, min(limit, MAX_LIST))]
    )
