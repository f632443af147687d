"""Reads of memories and turns for the API: everything filtered to what the caller may see. A scope is
visible to a principal when it lies in a granted subtree or above one (a read in a scope sees its
ancestors), never in a sibling subtree or another workspace."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q, QuerySet

from governance.errors import NotFound
from governance.models import Memory, Principal, Scope, Status, Turn
from governance.permissions import grants_for
from governance.selectors.search import keyword_match


def visible_scopes(principal: Principal | None) -> QuerySet[Scope]:
    if principal is None:
        return Scope.objects.all()
    trees = list(grants_for(principal).values_list("scope__tree", flat=True))
    if not trees:
        return Scope.objects.none()
    q = Q()
    for tree in trees:
        q |= Q(tree__descendant_of=tree) | Q(tree__ancestor_of=tree)
    return Scope.objects.filter(q)


def scope_visible(principal: Principal | None, path: str) -> Scope:
    """The scope at `path` if the caller can see it; NotFound otherwise (no existence leak)."""
    scope = visible_scopes(principal).filter(path=(path or "").strip().strip("/")).first()
    if scope is None:
        raise NotFound()
    return scope


def memory_list(
    *, principal: Principal | None, scope: Scope | None = None, status: str | None = None,
    kind: str | None = None, key: str | None = None, q: str | None = None,
) -> QuerySet[Memory]:
    """Memories the caller can see, newest first; within `scope`'s subtree when given. Forgotten
    memories only when asked for by status (their text may be purged)."""
    qs = Memory.objects.filter(scope__in=visible_scopes(principal)).select_related("scope")
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
        qs = keyword_match(qs, q)  # the keyword index, not a scan of every text
    # Newest first by id (created_at is auto_now_add, so the same order): the primary key's index gives a
    # page without sorting every visible row, which (created_at, id) cost at 100k memories (docs/api.md).
    return qs.order_by("-id")


def memory_get(*, principal: Principal | None, memory_id: int) -> Memory:
    memory = Memory.objects.select_related("scope").filter(pk=memory_id, scope__in=visible_scopes(principal)).first()
    if memory is None:
        raise NotFound()
    return memory


def turn_get(*, principal: Principal | None, turn_id: int) -> Turn:
    turn = Turn.objects.select_related("scope").filter(pk=turn_id, scope__in=visible_scopes(principal)).first()
    if turn is None:
        raise NotFound()
    return turn


def forgotten_hashes(*, scope: Scope, hashes: Iterable[str]) -> set[str]:
    """Of these content hashes, those of a memory forgotten (soft or hard) in `scope` or above it: promotion
    and extraction never write such a text again; only a person writing it does, and that is audited."""
    wanted = {h for h in hashes if h}
    if not wanted:
        return set()
    return set(
        Memory.objects.filter(scope__tree__ancestor_of=scope.tree, status=Status.FORGOTTEN, content_hash__in=wanted)
        .values_list("content_hash", flat=True)
    )
