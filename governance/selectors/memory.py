"""Reads of memories and turns for the API: everything filtered to what the caller may see, as
governance.permissions decides (memories: the granted subtrees and the scopes above them; turns: the
granted subtrees only)."""

from __future__ import annotations

from django.db.models import QuerySet

from governance.errors import NotFound
from governance.models import Memory, Principal, Scope, Status, Turn
from governance.permissions import memory_readable_scopes, turn_readable_scopes, visible_scope


def scope_visible(principal: Principal | None, path: str) -> Scope:
    """The scope at `path` if the caller can see it; NotFound otherwise (no existence leak)."""
    return visible_scope(principal, path)


def memory_list(
    *, principal: Principal | None, scope: Scope | None = None, status: str | None = None,
    kind: str | None = None, key: str | None = None, q: str | None = None,
) -> QuerySet[Memory]:
    """Memories the caller can see, newest first; within `scope`'s subtree when given. Forgotten
    memories only when asked for by status (their text may be purged)."""
    qs = Memory.objects.filter(scope__in=memory_readable_scopes(principal)).select_related("scope")
    if scope is not None:
        qs = qs.filter(scope__tree__descendant_of=scope.tree)
    if status:
        qs = qs.filter(status=status)
    else:
        qs = qs.exclude(status=Status.FORGOTTEN)
    if kind:
        qs = qs.filter(kind=kind)
    if key:
        qs = qs.filter(key=key)
    if q:
        qs = qs.filter(text__icontains=q)
    return qs.order_by("-created_at", "-id")


def memory_get(*, principal: Principal | None, memory_id: int) -> Memory:
    memory = (Memory.objects.select_related("scope")
              .filter(pk=memory_id, scope__in=memory_readable_scopes(principal)).first())
    if memory is None:
        raise NotFound()
    return memory


def turn_get(*, principal: Principal | None, turn_id: int) -> Turn:
    """A turn the caller may read: the same rule as the dashboard's (permissions.turn_readable_scopes)."""
    turn = Turn.objects.select_related("scope").filter(pk=turn_id, scope__in=turn_readable_scopes(principal)).first()
    if turn is None:
        raise NotFound()
    return turn
