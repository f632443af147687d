"""The memory page's curation forms: the memories a "link to…" picker offers, and the episodes a
promotion request may cite."""

from __future__ import annotations

from django.db.models import QuerySet

from governance.models import Kind, Memory, Principal
from governance.permissions import memory_readable_scopes

LINK_CHOICES_LIMIT = 20
PROMOTION_EPISODES_LIMIT = 60


def link_choices(
    principal: Principal, memory: Memory, q: str, limit: int = LINK_CHOICES_LIMIT
) -> list[Memory]:
    """Memories the principal may read in `memory`'s workspace that it could link to: by id (`#12` or
    `12`) or by keyword, newest first; never the memory itself, never a forgotten one. One query."""
    qs: QuerySet[Memory] = (
        Memory.objects.filter(
            scope__in=memory_readable_scopes(principal),
            scope__workspace_id=memory.scope.workspace_id,
        )
        .exclude(pk=memory.pk)
        .not_forgotten()
    )
    q = (q or "").strip()
    digits = q.lstrip("#")
    if digits.isdigit():
        qs = qs.filter(pk=int(digits))
    elif q:
        qs = qs.keyword(q)
    else:
        return []
    return list(qs.select_related("scope").light().order_by("-pk")[:limit])


def promotion_episodes(memory: Memory, limit: int = PROMOTION_EPISODES_LIMIT) -> list[Memory]:
    """The episodes a promotion of `memory` may cite (the rule promotion_propose applies): episodic, of its
    scope and task type, not forgotten; newest first. One query."""
    return list(
        Memory.objects.filter(scope_id=memory.scope_id, kind=Kind.EPISODIC, task_type=memory.task_type)
        .not_forgotten()
        .defer("embedding", "lexical")
        .order_by("-occurred_at", "-pk")[:limit]
    )
