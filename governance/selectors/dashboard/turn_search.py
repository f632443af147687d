"""Finding stored turns: by words of the query (full text, migration 0032's index), agent, session, date
range, a memory used or skipped, and strategy, in keyset pages on the id (a turn's id grows with its
time), so page 1,000 of 10,000s of turns costs what page 1 does. Only turns of the reader's governed
scopes (`governed_scope_ids`, governance.permissions); a query that is the text of a memory forgotten
since is masked, never listed for the words it held (governance.redaction.masking's rule: a string equal to a
withheld memory's text)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef, Q
from django.db.models.expressions import RawSQL

from governance.errors import NotFound
from governance.models import Memory, Principal, Scope, Status, Turn, TurnMemory, content_hash, fulltext
from governance.permissions import can_read_memory
from governance.redaction.masking import FORGOTTEN_TEXT, withheld
from governance.runtime import cursor as codec
from governance.selectors.dashboard.common import PAGE_SIZE, governed_scope_ids

__all__ = [
    "TurnFilters",
    "TurnPage",
    "turn_search",
    "turn_cursor",
    "turn_cursor_id",
    "turn_agents",
    "TURN_USED",
    "readable_memory",
    "why_not_choices",
    "WHY_NOT_CHOICES",
]

TURN_USED = ("", "used", "skipped")


@dataclass
class TurnFilters:
    q: str = ""
    agent: str = ""
    session: str = ""
    strategy: str = ""
    since: datetime | None = None  # inclusive
    until: datetime | None = None  # exclusive
    memory_id: int | None = None
    used: str = ""  # "" any, "used", "skipped"

    def any(self) -> bool:
        return any([self.q, self.agent, self.session, self.strategy, self.since, self.until, self.memory_id])


@dataclass
class TurnPage:
    """Newest first; `older` is the `before=` of the next page, `newer` the `after=` of the previous."""

    object_list: list[Turn]
    older: int | None
    newer: int | None

    def __iter__(self):
        return iter(self.object_list)


def readable_memory(principal: Principal, memory_id: int) -> Memory:
    """A memory the reader may read by id (else NotFound, the same answer as an unknown id)."""
    memory = Memory.objects.select_related("scope").filter(pk=memory_id).first()
    if memory is None or not can_read_memory(principal, memory):
        raise NotFound()
    return memory


def _queryset(principal: Principal, scope: Scope | None, f: TurnFilters):
    qs = Turn.objects.filter(scope_id__in=governed_scope_ids(principal, scope))
    if f.q.strip():
        # The expression of index turn_query_fts (migration 0032), so the planner can use it.
        qs = qs.filter(
            pk__in=RawSQL(
                "SELECT id FROM governance_turn WHERE "
                + fulltext.turn_query_matches(fulltext.websearch_to_tsquery()),
                (f.q.strip(),),
            )
        )
    if f.agent:
        qs = qs.filter(principal__name=f.agent)
    if f.session:
        qs = qs.filter(session=f.session)
    if f.strategy:
        qs = qs.filter(strategy=f.strategy)
    if f.since is not None:
        qs = qs.filter(created_at__gte=f.since)
    if f.until is not None:
        qs = qs.filter(created_at__lt=f.until)
    if f.memory_id is not None:
        cited = TurnMemory.objects.filter(turn_id=OuterRef("pk"), memory_id=f.memory_id)
        if f.used == "used":
            cited = cited.filter(included=True).exclude(slot="negative")
        elif f.used == "skipped":
            cited = cited.filter(included=False)
        qs = qs.filter(Exists(cited))
    return qs


def _mask_queries(turns: list[Turn]) -> None:
    """Mark each turn whose query is the text of a memory it cites that is forgotten (or gone): one query."""
    if not turns:
        return
    rows = (
        TurnMemory.objects.filter(turn_id__in=[t.pk for t in turns])
        .filter(Q(memory__status=Status.FORGOTTEN) | Q(memory__purged_at__isnull=False))
        .values_list("turn_id", "memory__content_hash", "memory__status")
    )
    hashes: dict[int, set[str]] = {}
    for turn_id, digest, status in rows:
        if withheld(status) and digest:
            hashes.setdefault(turn_id, set()).add(digest)
    for t in turns:
        t.query_masked = bool(hashes.get(t.pk)) and content_hash(t.query) in hashes[t.pk]
        if t.query_masked:
            t.query = FORGOTTEN_TEXT


def turn_cursor(pk: int) -> str:
    """A turn page link's `before=` / `after=`: the turn id, through the one cursor codec."""
    return codec.encode_id("turns", pk)


def turn_cursor_id(raw: str, field: str) -> int | None:
    """The turn id of a `turn_cursor`, None when `raw` is empty; a 400 naming the field otherwise."""
    return codec.decode_id(raw, "turns", field)


def turn_search(
    principal: Principal,
    scope: Scope | None,
    filters: TurnFilters,
    *,
    before: int | None = None,
    after: int | None = None,
    per_page: int = PAGE_SIZE,
) -> TurnPage:
    """One page of turns, newest first. Two queries (the page; the forgotten memories it cites)."""
    qs = (
        _queryset(principal, scope, filters)
        .select_related("scope", "principal")
        .only(
            "pk",
            "created_at",
            "query",
            "session",
            "strategy",
            "budget_used",
            "budget_limit",
            "scope__path",
            "principal__name",
            "principal__kind",
        )
    )
    if after is not None:
        rows = list(qs.filter(pk__gt=after).order_by("pk")[: per_page + 1])
        more_newer = len(rows) > per_page
        rows = rows[:per_page][::-1]
        older, newer = (rows[-1].pk if rows else None), (rows[0].pk if rows and more_newer else None)
    else:
        if before is not None:
            qs = qs.filter(pk__lt=before)
        rows = list(qs.order_by("-pk")[: per_page + 1])
        more_older = len(rows) > per_page
        rows = rows[:per_page]
        older, newer = (
            (rows[-1].pk if rows and more_older else None),
            (rows[0].pk if rows and before else None),
        )
    _mask_queries(rows)
    if filters.q.strip():
        # A masked query is not found by the words it held: the row is left out (the cursors stay right).
        rows = [t for t in rows if not t.query_masked]
    return TurnPage(rows, older=older, newer=newer)


def turn_agents(principal: Principal, scope: Scope | None, limit: int = 200) -> list[str]:
    """Names of the principals that asked for turns here (the agent filter's choices)."""
    asked = Turn.objects.filter(
        principal_id=OuterRef("pk"), scope_id__in=governed_scope_ids(principal, scope)
    )
    return list(
        Principal.objects.filter(Exists(asked)).order_by("name").values_list("name", flat=True)[:limit]
    )


WHY_NOT_CHOICES = 20


def why_not_choices(principal: Principal, turn: Turn, q: str, limit: int = WHY_NOT_CHOICES) -> list[Memory]:
    """The "why not…?" picker by `#id` or by words (the keyword index): memories of the turn's workspace the
    reader may read, never a forgotten one. (By meaning: the view asks governance.recall.meaning.)"""
    from governance.permissions import memory_readable_scopes

    q = (q or "").strip()
    if not q:
        return []
    qs = Memory.objects.filter(
        scope__in=memory_readable_scopes(principal), scope__workspace_id=turn.scope.workspace_id
    ).not_forgotten()
    digits = q.lstrip("#")
    if digits.isdigit():
        qs = qs.filter(pk=int(digits))
    else:
        qs = qs.keyword(q)
    return list(qs.select_related("scope").defer("embedding", "lexical", "meta").order_by("-pk")[:limit])
