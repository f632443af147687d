"""Reads of memories and turns for the API: everything filtered to what the caller may see, as
governance.permissions decides (memories: the granted subtrees and the scopes above them; turns: the
granted subtrees only)."""

from __future__ import annotations

from django.db.models import QuerySet

from governance.models import Memory, Principal, Scope, Turn, content_hash
from governance.permissions import memory_for_reader, memory_readable_scopes, scope_by_path, turn_for_reader


def scope_visible(principal: Principal | None, path: str) -> Scope:
    """The scope at `path` if the caller can see it; NotFound otherwise (no existence leak)."""
    return scope_by_path(principal, path, reading=True)


def memory_list(
    *,
    principal: Principal | None,
    scope: Scope | None = None,
    status: str | None = None,
    kind: str | None = None,
    key: str | None = None,
    q: str | None = None,
) -> QuerySet[Memory]:
    """Memories the caller can see, newest first; within `scope`'s subtree when given. Forgotten
    memories only when asked for by status (their text may be purged)."""
    qs = Memory.objects.filter(scope__in=memory_readable_scopes(principal)).select_related("scope")
    if scope is not None:
        qs = qs.filter(scope__tree__descendant_of=scope.tree)
    if status:
        qs = qs.filter(status=status)
    else:
        qs = qs.not_forgotten()
    if kind:
        qs = qs.filter(kind=kind)
    if key:
        qs = qs.filter(key=key)
    if q:
        qs = qs.keyword(q)  # the keyword index, not a scan of every text
    # Newest first by id (created_at is auto_now_add, so the same order): the primary key's index gives a
    # page without sorting every visible row, which (created_at, id) cost at 100k memories (docs/api.md).
    return qs.order_by("-id")


def memory_get(*, principal: Principal | None, memory_id: int) -> Memory:
    """A memory the caller may read by id (the resolver: permissions.memory_for_reader)."""
    return memory_for_reader(principal, memory_id)


def turn_get(*, principal: Principal | None, turn_id: int) -> Turn:
    """A turn the caller may read: the same rule as the dashboard's (permissions.turn_for_reader)."""
    return turn_for_reader(principal, turn_id)


def repeats_purged_text(text: str, scope: Scope) -> bool:
    """Whether `text` is exactly the text of a memory hard-forgotten in `scope` or a scope above it (by the
    keyed content hash its tombstone keeps; index memory_purged_hash). A context request in `scope` that
    sends such a text again is stored with it redacted (recall/packet.py): the forget removed it, and the
    turn log must not take it back in. Only the forgets of the scopes the turn reads count, which are the
    forgets that govern it: one in a sibling (or another workspace) the caller may not read would make the
    turn log an oracle for whether that text was forgotten there."""
    return Memory.objects.filter(
        purged_at__isnull=False, content_hash=content_hash(text), scope__tree__ancestor_of=scope.tree
    ).exists()
