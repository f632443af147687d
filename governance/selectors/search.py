"""Keyword search and bounded paging for the memory lists (the API's and the dashboard's): a search goes
through the full-text index on `lexical`, never a scan of every text, and a page counts at most
MEMORY_LIST_COUNT_CAP rows and goes no deeper than that, so a list of a 100k-memory workspace costs what a
list of a small one does. docs/api.md and docs/operations.md, "Abuse limits"."""

from __future__ import annotations

import math

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.utils.functional import cached_property

from governance.models import Memory, Status, lexical

# The expression of the GIN indexes memory_lexical_fts and memory_scope_lexical_fts (migrations 0002,
# 0008); anything else (a COALESCE, another configuration) would read every row instead.
KEYWORD_SQL = "to_tsvector('simple', governance_memory.lexical) @@ plainto_tsquery('simple', %s)"


def keyword_match(qs: QuerySet[Memory], q: str) -> QuerySet[Memory]:
    """Memories whose keyword terms hold every term of `q`: the same terms as the keyword index keeps
    (governance.models.lexical: lowercased, lightly stemmed words; CJK unigrams and bigrams). A query with no
    terms (only stopwords or punctuation) matches nothing. A forgotten memory is never matched, even when
    the list asks for forgotten rows: a soft-forgotten row keeps its terms, and a count of 1 for the right
    PIN and 0 for a wrong one would confirm a guess though the text comes back masked."""
    words = " ".join(lexical.terms(q or ""))
    if not words:
        return qs.none()
    return qs.extra(where=[KEYWORD_SQL], params=[words]).exclude(status=Status.FORGOTTEN)


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
