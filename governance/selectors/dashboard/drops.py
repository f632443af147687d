"""The memories a turn left out, as the reader may see them: a label for each id a stored trace or packet
names (the turn page's and "Try a query"'s stage-by-stage drops). One query, whatever the number of ids."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models.functions import Substr

from governance.models import Memory, Principal
from governance.permissions import memory_readable_scopes
from governance.redaction.masking import withheld

__all__ = ["EXCERPT_CHARS", "DropLabel", "drop_labels"]

EXCERPT_CHARS = 80  # a label's excerpt of an unkeyed memory's text (the page truncates it again)


@dataclass(frozen=True)
class DropLabel:
    """One dropped memory the reader may read: "key rN (scope)" or a short excerpt. A forgotten one keeps
    its id (its page is a tombstone) and nothing else: no key, no words."""

    id: int
    forgotten: bool
    key: str = ""
    revision: int | None = None
    scope: str = ""
    excerpt: str = ""
    status: str = ""


def drop_labels(principal: Principal, ids) -> dict[int, DropLabel]:
    """A label for each of `ids` the principal may read (permissions.memory_readable_scopes, the rule of a
    memory's page); an id outside its grants, or of a row that no longer exists, has none."""
    wanted = {i for i in ids if isinstance(i, int) and not isinstance(i, bool)}
    if not wanted:
        return {}
    rows = (
        Memory.objects.filter(pk__in=wanted, scope__in=memory_readable_scopes(principal))
        .annotate(excerpt=Substr("text", 1, EXCERPT_CHARS + 1))
        .values_list("pk", "status", "purged_at", "key", "revision", "scope__path", "excerpt")
    )
    labels = {}
    for pk, status, purged_at, key, revision, path, excerpt in rows:
        if withheld(status) or purged_at is not None:
            labels[pk] = DropLabel(id=pk, forgotten=True)
        else:
            labels[pk] = DropLabel(pk, False, key or "", revision, path, excerpt or "", status)
    return labels
