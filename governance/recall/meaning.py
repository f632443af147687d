"""The dashboard's search by meaning: the memory list's rows nearest to the typed words, found by the agents'
own vector search over the reader's governed scopes (the list's filters and order are the selectors')."""

from __future__ import annotations

from django.utils import timezone

from governance.embedding.backends import get_embedder
from governance.embedding.cache import asker_of, embed_query_cached
from governance.models import Memory, Principal, Scope
from governance.recall.eligible import Eligibility
from governance.recall.vector import nearest
from governance.selectors.dashboard.common import PAGE_SIZE, governed_scope_ids
from governance.selectors.dashboard.memory_list import (
    MEANING_CANDIDATES,
    MEANING_STATUSES,
    MemoryFilters,
    memory_list_queryset,
    with_activation,
)


def memory_meaning(
    principal: Principal, scope: Scope | None, filters: MemoryFilters, limit: int = PAGE_SIZE
) -> list[Memory]:
    """The memories nearest in meaning to filters.q among those the list would show, best first, each
    with `.similarity`: the query is embedded by the agents' embedder and searched by the agents' vector
    search (governance.recall.vector.nearest) over the principal's governed scopes only."""
    text = filters.q.strip()
    scope_ids = governed_scope_ids(principal, scope)
    statuses = (
        MEANING_STATUSES if not filters.status else tuple(s for s in MEANING_STATUSES if s == filters.status)
    )
    if not text or not scope_ids or not statuses:
        return []
    vector, _ = embed_query_cached(get_embedder(), text, asker=asker_of(principal))
    eligibility = Eligibility(scope_ids=tuple(scope_ids), statuses=statuses, at=timezone.now())
    found = nearest(eligibility, vector, MEANING_CANDIDATES)
    similarity = dict(found)
    words_free = MemoryFilters(**{**filters.__dict__, "q": ""})
    rows = (
        with_activation(memory_list_queryset(principal, scope, words_free).filter(pk__in=list(similarity)))
        .select_related("scope")
        .defer("embedding", "lexical", "meta")
    )
    out = sorted(rows, key=lambda m: (-similarity[m.pk], m.pk))[:limit]
    for memory in out:
        memory.similarity = similarity[memory.pk]
    return out
