"""Bounded paging for the memory lists (the API's and the dashboard's): a page counts at most
MEMORY_LIST_COUNT_CAP rows and goes no deeper than that, so a list of a 100k-memory workspace costs what a
list of a small one does. Their keyword search is MemoryQuerySet.keyword (the full-text index of
governance.models.fulltext, never a scan of every text). docs/api.md and docs/operations.md, "Abuse
limits"."""

from __future__ import annotations

import math

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.utils.functional import cached_property


def count_cap() -> int:
    return settings.MEMORY_LIST_COUNT_CAP


class CappedPaginator(Paginator):
    """A Paginator that counts at most `cap` rows (`SELECT count(*) FROM (… LIMIT cap + 1)`), so its pages
    end at the cap: past it the list says "more" (`capped`) and asks for narrower filters, instead of
    counting, or skipping over, every matching row."""

    def __init__(self, object_list, per_page, *args, cap: int | None = None, **kwargs):
        super().__init__(object_list, per_page, *args, **kwargs)
        self.cap = count_cap() if cap is None else cap

    @cached_property
    def _seen(self) -> int:
        qs = self.object_list
        if isinstance(qs, QuerySet):
            return qs.order_by().values("pk")[: self.cap + 1].count()
        return min(len(qs), self.cap + 1)

    @property
    def capped(self) -> bool:
        """More rows match than were counted."""
        return self._seen > self.cap

    @cached_property
    def count(self) -> int:
        return min(self._seen, self.cap)

    @cached_property
    def num_pages(self) -> int:
        if self.count == 0 and not self.allow_empty_first_page:
            return 0
        return max(1, math.ceil(self.count / self.per_page))
