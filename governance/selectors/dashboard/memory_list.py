"""The memories list: sortable columns paged by keyset (a cursor on (sort value, id), never OFFSET), the
filters of the list, and the search by meaning through the agents' own vector search.

A sort splits the rows into at most two segments in list order: rows with a value, then rows without one
(a memory never used, an unkeyed memory), whichever the direction, so NULLs never interleave and ties are
broken by id. Each segment is one range scan of a btree index on (column, id) (migration 0022), so page
1000 costs what page 1 does. Activation changes with time: its cursor carries the instant it was computed
at, and every page of that walk ranks by activation at that instant."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from django.conf import settings
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from governance.errors import InvalidInput
from governance.models import Memory, Principal, Scope, Status
from governance.models.activation import activation_sql, days, log_activation_sql
from governance.runtime import cursor as codec
from governance.runtime import dates
from governance.selectors.dashboard.common import MAX_PAGE_SIZE, PAGE_SIZE, governed_scope_ids
from governance.selectors.search import count_cap

BAD_CURSOR = codec.BAD_CURSOR
BAD_DATE = dates.BAD_DATE
SEARCH_MODES = ("words", "meaning")
# Nearest memories asked of the vector search before the list's other filters (status, kind, dates…) apply.
MEANING_CANDIDATES = 200

# sort name -> (column, nullable); "activation" is computed (log A at the walk's instant).
SORTS: dict[str, tuple[str, bool]] = {
    "written": ("created_at", False),
    "last_used": ("last_reinforced_at", True),
    "activation": ("", False),
    "confidence": ("confidence", False),
    "key": ("key", True),
    "status": ("status", False),
}
SORT_LABELS = {
    "written": "Written",
    "last_used": "Last used",
    "activation": "Activation",
    "confidence": "Confidence",
    "key": "Key",
    "status": "Status",
}
DEFAULT_SORT, DEFAULT_DIR = "written", "desc"
# Direction a column starts with when its header is clicked: dates and scores newest/highest first.
FIRST_DIR = {
    "written": "desc",
    "last_used": "desc",
    "activation": "desc",
    "confidence": "desc",
    "key": "asc",
    "status": "asc",
}


@dataclass
class MemoryFilters:
    status: str = ""
    kind: str = ""
    source: str = ""
    tier: str = ""
    q: str = ""
    cold: str = ""  # "cold" | "hot" | ""
    mode: str = "words"  # how q searches: "words" (keyword index) or "meaning" (vector search)
    written_from: date | None = None
    written_to: date | None = None  # inclusive: the whole day
    key: str = ""
    key_prefix: bool = False
    session: str = ""
    ref: str = ""  # source_ref; a trailing * makes it a prefix
    sort: str = DEFAULT_SORT
    dir: str = DEFAULT_DIR


parse_date = dates.parse_day  # the list's from/to: whole days (governance.runtime.dates)


def apply_filters(qs: QuerySet[Memory], filters: MemoryFilters) -> QuerySet[Memory]:
    """Every filter of the list but the scope and the text search (all of them combine with AND)."""
    for name, column in (("status", "status"), ("kind", "kind"), ("source", "source_kind"), ("tier", "tier")):
        value = getattr(filters, name)
        if value:
            qs = qs.filter(**{column: value})
    if filters.written_from:
        qs = qs.filter(created_at__gte=dates.day_start(filters.written_from))
    if filters.written_to:
        qs = qs.filter(created_at__lt=dates.day_end(filters.written_to))
    if filters.key:
        qs = qs.filter(key__startswith=filters.key) if filters.key_prefix else qs.filter(key=filters.key)
    if filters.session:
        qs = qs.filter(session=filters.session)
    if filters.ref:
        ref = filters.ref
        qs = qs.filter(source_ref__startswith=ref[:-1]) if ref.endswith("*") else qs.filter(source_ref=ref)
    return qs


# --- Keyset paging --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cursor:
    sort: str
    dir: str
    null: bool  # in the segment of rows without a value
    value: object
    id: int
    at: datetime | None = None  # activation: the instant the walk ranks at

    def encode(self) -> str:
        value = self.value.isoformat() if isinstance(self.value, datetime) else self.value
        return codec.encode(
            "memories",
            [self.sort, self.dir, int(self.null), value, self.id, self.at.isoformat() if self.at else None],
        )

    @classmethod
    def decode(cls, text: str, name: str) -> Cursor:
        raw = codec.decode(text, "memories", name, BAD_CURSOR)
        try:
            sort, direction, null, value, pk, at = raw
            if (
                sort not in SORTS
                or direction not in ("asc", "desc")
                or not isinstance(pk, int)
                or not 0 <= pk < 2**63
            ):  # a bigint key
                raise ValueError
            column, nullable = SORTS[sort]
            if null and not nullable:
                raise ValueError
            if null:
                value = None
            elif column in ("created_at", "last_reinforced_at"):
                value = datetime.fromisoformat(value)
            elif column == "confidence" or sort == "activation":
                value = float(value)
            elif not isinstance(value, str):
                raise ValueError
            when = datetime.fromisoformat(at) if at else None
            if sort == "activation" and when is None:
                raise ValueError
            return cls(sort, direction, bool(null), value, pk, when)
        except (ValueError, TypeError) as exc:
            raise InvalidInput(BAD_CURSOR, field=name) from exc


@dataclass
class KeysetPage:
    object_list: list[Memory]
    next_cursor: str | None
    prev_cursor: str | None
    count: int
    capped: bool
    sort: str
    dir: str

    def has_next(self) -> bool:
        return self.next_cursor is not None

    def has_previous(self) -> bool:
        return self.prev_cursor is not None


def _log_activation(at: datetime) -> RawSQL:
    # log A(t): the same order as A(t), without exp() per row (governance.models.activation).
    return RawSQL(log_activation_sql("governance_memory"), [days(at)])


def _segment(
    qs: QuerySet[Memory],
    sort: str,
    ascending: bool,
    null: bool,
    cursor: Cursor | None,
    at: datetime,
    limit: int,
) -> list[Memory]:
    """Rows of one segment strictly past `cursor` (when it is in this segment), `limit` at most, in the
    order asked (ascending or not, by value then id)."""
    column, nullable = SORTS[sort]
    op = ">" if ascending else "<"
    order = "" if ascending else "-"
    if null:
        qs = qs.filter(**{f"{column}__isnull": True})
        if cursor is not None and cursor.null:
            qs = qs.filter(**{f"pk__{'gt' if ascending else 'lt'}": cursor.id})
        return list(qs.order_by(f"{order}pk")[:limit])
    if sort == "activation":
        # Ranked on the narrow index memory_sort_activation (scope, status; log K, decay and id included:
        # an index-only scan), then the page's rows fetched by id: ranking the wide rows themselves read
        # the whole table (250 ms at 100k memories, 25 ms this way; docs/benchmarks.md).
        ranked = qs.annotate(sort_value=_log_activation(at))
        if cursor is not None and not cursor.null:
            ranked = ranked.extra(
                where=[f"({log_activation_sql('governance_memory')}, governance_memory.id) {op} (%s, %s)"],
                params=[days(at), cursor.value, cursor.id],
            )
        top = list(
            ranked.order_by(f"{order}sort_value", f"{order}pk").values_list("pk", "sort_value")[:limit]
        )
        rows = {m.pk: m for m in qs.filter(pk__in=[pk for pk, _ in top])} if top else {}
        out = []
        for pk, value in top:
            if pk in rows:
                rows[pk].sort_value = value
                out.append(rows[pk])
        return out
    if nullable:
        qs = qs.filter(**{f"{column}__isnull": False})
    if cursor is not None and not cursor.null:
        # A row comparison: one index range condition on (column, id), which OR-ed comparisons are not.
        qs = qs.extra(
            where=[f"(governance_memory.{column}, governance_memory.id) {op} (%s, %s)"],
            params=[cursor.value, cursor.id],
        )
    return list(qs.order_by(f"{order}{column}", f"{order}pk")[:limit])


def _cursor_of(memory: Memory, sort: str, direction: str, at: datetime) -> Cursor:
    if sort == "activation":
        return Cursor(sort, direction, False, float(memory.sort_value), memory.pk, at)
    value = getattr(memory, SORTS[sort][0])
    return Cursor(sort, direction, value is None, value, memory.pk)


def keyset_page(
    qs: QuerySet[Memory],
    sort: str,
    direction: str,
    *,
    after: Cursor | None = None,
    before: Cursor | None = None,
    per_page: int = PAGE_SIZE,
) -> tuple[list[Memory], str | None, str | None]:
    """One page of `qs` in (sort, direction) order after `after` or before `before` (neither: the first
    page), and the cursors of the next and previous pages (None where there is none). One query per
    segment touched: one, or two where the page spans the end of the rows with a value."""
    cursor = before or after
    if cursor is not None and (cursor.sort, cursor.dir) != (sort, direction):
        cursor = None  # a link of another sort: start from the top of this one
        before = after = None
    at = cursor.at if cursor is not None and cursor.at else timezone.now()
    forward = before is None
    segments = [False, True] if SORTS[sort][1] else [False]
    start = segments.index(cursor.null) if cursor is not None else 0
    walk = segments[start:] if forward else list(reversed(segments[: start + 1]))
    ascending = (direction == "asc") == forward
    rows: list[Memory] = []
    for null in walk:
        # A segment is read whole past the cursor's own segment, and only past the cursor in it.
        here = cursor if cursor is not None and null == cursor.null else None
        rows += _segment(qs, sort, ascending, null, here, at, per_page + 1 - len(rows))
        if len(rows) > per_page:
            break
    more = len(rows) > per_page
    rows = rows[:per_page]
    if not forward:
        rows.reverse()
    if not rows:
        return rows, None, None
    first, last = _cursor_of(rows[0], sort, direction, at), _cursor_of(rows[-1], sort, direction, at)
    has_next = more if forward else True
    has_prev = (cursor is not None) if forward else more
    return rows, last.encode() if has_next else None, first.encode() if has_prev else None


def with_activation(qs: QuerySet[Memory], at: datetime | None = None) -> QuerySet[Memory]:
    return qs.with_activation(at)  # Memory.objects' MemoryQuerySet


def memory_queryset(principal: Principal, scope: Scope | None, filters: MemoryFilters) -> QuerySet[Memory]:
    qs = apply_filters(Memory.objects.filter(scope_id__in=governed_scope_ids(principal, scope)), filters)
    if filters.q.strip() and filters.mode != "meaning":
        qs = qs.keyword(filters.q)
    if filters.cold in ("cold", "hot"):
        op = "<" if filters.cold == "cold" else ">="
        qs = qs.extra(
            where=[f"{activation_sql()} {op} %s"], params=[timezone.now(), settings.MEMORY_COLD_THRESHOLD]
        )
    return qs


def memory_list_queryset(
    principal: Principal, scope: Scope | None, filters: MemoryFilters
) -> QuerySet[Memory]:
    """The rows the list shows for these filters: the principal's governed scopes (within `scope`), the
    filters, and the keyword search (MemoryQuerySet.keyword: never a forgotten row)."""
    return memory_queryset(principal, scope, filters)


def memory_list_page(
    principal: Principal,
    scope: Scope | None,
    filters: MemoryFilters,
    *,
    after: str = "",
    before: str = "",
    per_page: int = PAGE_SIZE,
) -> KeysetPage:
    """One page of the list in the filters' sort, with its activation and scope, and the number of
    matching rows counted up to MEMORY_LIST_COUNT_CAP: a count, the page query (two at a segment's end)."""
    sort = filters.sort if filters.sort in SORTS else DEFAULT_SORT
    direction = filters.dir if filters.dir in ("asc", "desc") else DEFAULT_DIR
    after_c = Cursor.decode(after, "after") if after else None
    before_c = Cursor.decode(before, "before") if before else None
    base = memory_list_queryset(principal, scope, filters)
    at = (before_c or after_c).at if (before_c or after_c) and (before_c or after_c).at else timezone.now()
    shown = with_activation(base, at).select_related("scope").defer("embedding", "lexical", "meta")
    rows, next_c, prev_c = keyset_page(
        shown, sort, direction, after=after_c, before=before_c, per_page=min(per_page, MAX_PAGE_SIZE)
    )
    cap = count_cap()
    seen = base.order_by().values("pk")[: cap + 1].count()
    return KeysetPage(rows, next_c, prev_c, min(seen, cap), seen > cap, sort, direction)


def memory_ids_matching(
    principal: Principal, scope: Scope | None, filters: MemoryFilters, cap: int
) -> list[int]:
    """Ids of the memories the list shows for these filters (search by words only), newest first, at
    most cap + 1 of them (the caller tells "more than cap" by the extra one)."""
    qs = memory_list_queryset(principal, scope, filters)
    return list(qs.order_by("-pk").values_list("pk", flat=True)[: cap + 1])


# --- Search by meaning -------------------------------------------------------------------------------------


# What a search by meaning may find: everything but forgotten memories (their text is gone or kept for
# owners, and a match would confirm a guess of it).
MEANING_STATUSES = tuple(s.value for s in Status if s != Status.FORGOTTEN)


def memory_ids_governed(principal: Principal, ids: list[int]) -> list[int]:
    """Those of `ids` that are memories of the principal's governed scopes, in the order given."""
    found = set(
        Memory.objects.filter(pk__in=ids, scope_id__in=governed_scope_ids(principal)).values_list(
            "pk", flat=True
        )
    )
    return [i for i in ids if i in found]


# --- Scopes -------------------------------------------------------------------------------------------------

SCOPE_OPTIONS_LIMIT = 20


def scope_suggestions(principal: Principal, typed: str, limit: int = SCOPE_OPTIONS_LIMIT) -> list[str]:
    """Governed scope paths for the type-ahead picker: those starting with what was typed, or whose last
    name starts with it, in tree order, `limit` at most (one query, whatever the number of scopes)."""
    from django.db.models import Q

    from governance.selectors.dashboard.common import governed_scopes_within

    typed = typed.strip()
    qs = governed_scopes_within(principal)
    if typed:
        qs = qs.filter(Q(path__istartswith=typed) | Q(name__istartswith=typed))
    return list(qs.order_by("path").values_list("path", flat=True)[:limit])
