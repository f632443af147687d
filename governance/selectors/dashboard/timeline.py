"""The timeline's memory picker: memories found by words or by id, and the chosen ones, among the
memories (not forgotten) of the scopes the reader governs, the set the timeline's top list ranks from."""

from __future__ import annotations

from django.utils import timezone

from governance.errors import NotFound
from governance.models import Memory, Principal, Scope
from governance.selectors.dashboard.common import governed_scope_ids

PICK_LIMIT = 20


def timeline_choices(
    principal: Principal, scope: Scope | None, q: str, limit: int = PICK_LIMIT
) -> list[Memory]:
    """Memories (not forgotten) matching `q`: the keyword index's terms, or a memory's number; newest first."""
    qs = Memory.objects.filter(scope_id__in=governed_scope_ids(principal, scope)).not_forgotten()
    q = q.strip().lstrip("#")
    qs = qs.filter(pk=int(q)) if q.isdigit() else qs.keyword(q)
    return list(qs.select_related("scope").light().order_by("-pk")[:limit])


def timeline_memories(principal: Principal, scope: Scope | None, ids: list[int]) -> list[Memory]:
    """The chosen memories, in the order given, with their activation now; an id that is not a memory of
    the reader's scopes, or is forgotten, is a NotFound (the same answer as for one that does not exist)."""
    qs = Memory.objects.filter(pk__in=ids, scope_id__in=governed_scope_ids(principal, scope))
    qs = qs.not_forgotten().with_activation(timezone.now()).light().select_related("scope")
    rows = {m.pk: m for m in qs}
    if set(ids) - rows.keys():
        raise NotFound()
    return [rows[pk] for pk in ids]


def forgotten_picks(principal: Principal, scope: Scope | None, ids: list[int]) -> list[Memory]:
    """The forgotten memories among `ids` in the scopes the reader governs (the timeline's own set), in the
    order given, without their text: the timeline shows their tombstones instead of a NotFound."""
    if not ids:
        return []
    qs = Memory.objects.filter(
        pk__in=ids, scope_id__in=governed_scope_ids(principal, scope), status="forgotten"
    )
    rows = {m.pk: m for m in qs.only("pk", "key", "revision", "kind", "status", "purged_at", "scope_id")}
    return [rows[pk] for pk in ids if pk in rows]
