"""Scopes the principal may read, its roles, and paging: what every dashboard read starts from."""

from __future__ import annotations

from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, OuterRef, QuerySet

from governance.errors import InvalidInput, NotFound
from governance.models import Memory, Principal, Scope
from governance.permissions import RoleMap, governed_scopes, scope_by_path

PAGE_SIZE = 50
GRAPH_CHUNK = 5000
MAX_PAGE_SIZE = 200
BAD_PAGE = "page is a positive whole number."


# --- Scopes -------------------------------------------------------------------------------------------


def scope_for_path(principal: Principal, path: str | None) -> Scope | None:
    """The scope a page is focused on (None: everything the principal may read). Unknown or unreadable
    paths are the same NotFound, so a page never tells whether a scope it may not see exists."""
    if not path:
        return None
    if "\x00" in path:  # no scope path holds one, and PostgreSQL refuses it as a parameter (a 500)
        raise NotFound()
    return scope_by_path(principal, path)


def governed_scopes_within(principal: Principal, scope: Scope | None = None) -> QuerySet[Scope]:
    """The dashboard's scopes: permissions.governed_scopes (the subtrees of the principal's grants),
    optionally only the subtree of `scope`."""
    return governed_scopes(principal, within=scope)


def governed_scope_ids(principal: Principal, scope: Scope | None = None) -> list[int]:
    """Memoised on the principal object, which lives for one request: a page asks several times."""
    memo = principal.__dict__.setdefault("_dashboard_scope_ids", {})
    key = scope.pk if scope is not None else None
    if key not in memo:
        memo[key] = list(governed_scopes_within(principal, scope).values_list("pk", flat=True))
    return memo[key]


def scope_paths(principal: Principal) -> list[str]:
    """Readable scope paths in tree order (the header's scope picker: no counts, so no scan of memories).
    Archived scopes are left out (their memories stay readable from the lists and by id)."""
    archived_above = Scope.objects.filter(archived_at__isnull=False, tree__ancestor_of=OuterRef("tree"))
    return list(
        governed_scopes_within(principal)
        .filter(~Exists(archived_above))
        .order_by("path")
        .values_list("path", flat=True)
    )


def scope_tree(principal: Principal) -> list[dict]:
    """Readable scopes in tree order with their memory counts: `memories` of the whole subtree (the scope and
    everything under it), `own_memories` of the scope alone (for the sidebar and scope pickers)."""
    scopes = list(governed_scopes_within(principal).order_by("path").values("pk", "path", "name"))
    counts = dict(
        # count(*), not count(id): the (scope, status, kind) index then answers without the table.
        Memory.objects.filter(scope_id__in=[s["pk"] for s in scopes])
        .order_by()
        .values_list("scope_id")
        .annotate(n=Count("*"))
        .values_list("scope_id", "n")
    )
    # A scope's count is its whole subtree's (a parent holding nothing itself but 23 in its children says
    # 23): each scope's own count is added to itself and to every ancestor on its path, in Python, from
    # the one grouped query above.
    subtree: dict[str, int] = {}
    for s in scopes:
        own = counts.get(s["pk"], 0)
        parts = s["path"].split("/")
        for n in range(1, len(parts) + 1):
            prefix = "/".join(parts[:n])
            subtree[prefix] = subtree.get(prefix, 0) + own
    for s in scopes:
        s["depth"] = s["path"].count("/")
        s["own_memories"] = counts.get(s["pk"], 0)
        s["memories"] = subtree.get(s["path"], 0)
    return scopes


# The principal's roles by scope for one page: the permission module's RoleMap under the name pages use.
MyRoles = RoleMap


def paginate(qs, page, per_page, paginator_class=Paginator) -> Page:
    try:
        number = int(page or 1)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(BAD_PAGE, field="page") from exc
    if number < 1:
        raise InvalidInput(BAD_PAGE, field="page")
    paginator = paginator_class(qs, per_page)
    return paginator.get_page(number)


def graph_memories() -> QuerySet:
    """The memories a relation graph may draw: not purged. A hard-forgotten memory's tombstone keeps its
    id and its links (a supersede chain still says what it replaced), but it is no node of any graph, and
    a link to it is not drawn."""
    return Memory.objects.filter(purged_at__isnull=True)


def by_ids(qs: QuerySet, ids) -> QuerySet:
    """`id = ANY('{…}'::bigint[])` with the array as one text parameter: an IN list, or a Python list
    adapted element by element, costs ~10 µs per id in Django and psycopg, which a graph pays by thousands."""
    return qs.extra(
        where=[f"{qs.model._meta.db_table}.id = ANY(%s::bigint[])"],
        params=["{" + ",".join(str(int(i)) for i in ids) + "}"],
    )


class LightPage:
    """A page that knows whether there is a next one without counting every row: the audit log of a big
    workspace is long, and an exact count would cost more than the page itself."""

    def __init__(self, rows: list, number: int, per_page: int):
        self.object_list = rows[:per_page]
        self.number = number
        self._more = len(rows) > per_page

    def has_next(self) -> bool:
        return self._more

    def has_previous(self) -> bool:
        return self.number > 1

    def next_page_number(self) -> int:
        return self.number + 1

    def previous_page_number(self) -> int:
        return self.number - 1
