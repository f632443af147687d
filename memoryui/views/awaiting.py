"""What awaits the signed-in person (governance.selectors.awaiting), read once per request whoever asks
(the menu's badge, the queue's heading, the overview), and said in words."""

from __future__ import annotations

from dataclasses import replace

from django.http import HttpRequest

from governance.models import Scope
from governance.selectors.awaiting import NOTHING, Awaiting, awaiting_decision
from governance.selectors.review import QueueFilter


def awaiting_for(
    request: HttpRequest, scope: Scope | None = None, filters: QueueFilter | None = None
) -> Awaiting:
    """awaiting_decision for the request's principal, kept on the request: the menu and the page that
    ask the same question (the same scope and filters) cost one answer."""
    principal = getattr(request, "principal", None)
    if principal is None:
        return NOTHING
    answers = request.__dict__.setdefault("_awaiting", {})
    # The paging cursors do not change what awaits: the badge and the queue's first page share a key.
    filters = replace(filters or QueueFilter(), after=None, disputes_after=None)
    key = (scope.pk if scope is not None else None, filters)
    if key not in answers:
        answers[key] = awaiting_decision(principal=principal, scope=scope, filters=filters)
    return answers[key]


def _counted(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def awaiting_sentence(awaiting: Awaiting, listed: int = 0) -> str:
    """ "3 proposals and 2 disputes await you"; when nothing does, whether others' items are listed."""
    if not awaiting.total:
        return "Nothing here awaits your decision" + (
            "; the items below are for others to decide" if listed else ""
        )
    parts = [
        _counted(n, word)
        for n, word in ((awaiting.proposals, "proposal"), (awaiting.disputes, "dispute"))
        if n
    ]
    return f"{' and '.join(parts)} {'awaits' if awaiting.total == 1 else 'await'} you"
