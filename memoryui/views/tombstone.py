"""A forgotten memory's page: a tombstone that says who forgot it, when and why, what the forget reached
(the `reached` report the audit event keeps), and the ways back (its scope's memories, the audit log, what
replaced it or was linked to it that the reader may still read). Never its words: a purged memory has none,
and a soft-forgotten one's are kept for an owner's explicit look only (docs/governance.md, "Forgetting").
The same facts stand in for a forgotten memory picked on the timeline."""

from __future__ import annotations

from urllib.parse import urlencode

from django.urls import reverse

from governance.errors import DomainError
from governance.models import AuditEvent, Memory, Status
from governance.permissions import Action, memory_readable_scopes
from governance.selectors import dashboard as sel
from memoryui.forms.tombstone import TombstoneForm
from memoryui.views.base import cleaned, page

FORGET_ACTIONS = ("memory.forget", "memory.forget_hard")
LOOK = "look"  # ?look=text: an owner's explicit look at a soft-forgotten memory's text
PLACE_WORDS = {
    "rewritten": "its words were replaced by [forgotten]",
    "forgotten": "forgotten with it (it was read from these words)",
    "kept_decided": "kept: a person decided it (forget it on its own)",
    "not_found": "the words are not there verbatim (forget it on its own)",
    "not_governed": "in a scope the person who forgot it does not govern: not changed",
}
COUNT_WORDS = {
    "turns": "stored turn{s} rewritten",
    "relations": "link reason{s} cleared of its words",
    "summaries": "summar{ies} marked stale and rebuilt",
}


def forget_events(events: list[AuditEvent]) -> tuple[AuditEvent | None, AuditEvent | None]:
    """The event that forgot the memory (the first) and the one that purged its text (a hard forget)."""
    forgets = [e for e in events if e.action in FORGET_ACTIONS]
    first = forgets[0] if forgets else None
    purge = next((e for e in forgets if e.action == "memory.forget_hard"), None)
    return first, purge


def reached_lines(principal, event: AuditEvent | None) -> list[dict]:
    """The forget's report, one line per place; another memory is named only when the reader may read it."""
    places = list((event.data or {}).get("reached", [])) if event is not None else []
    ids = [p["memory_id"] for p in places if p.get("place") == "memory" and p.get("memory_id")]
    readable = set(
        Memory.objects.filter(pk__in=ids, scope__in=memory_readable_scopes(principal)).values_list(
            "pk", flat=True
        )
    )
    lines = []
    for p in places:
        if p.get("place") == "memory":
            shown = p.get("memory_id") in readable
            lines.append(
                {
                    "memory_id": p["memory_id"] if shown else None,
                    "words": PLACE_WORDS.get(p.get("state", ""), p.get("state", "")),
                }
            )
        elif p.get("place") in COUNT_WORDS and p.get("count"):
            n = int(p["count"])
            plural = {"s": "s" if n != 1 else "", "ies": "ies" if n != 1 else "y"}
            lines.append({"count": n, "words": COUNT_WORDS[p["place"]].format(**plural)})
    return lines


def tombstone_context(
    request, memory: Memory, roles, events: list[AuditEvent], relations: list[dict]
) -> dict:
    """What the tombstone page shows: no text unless an owner asked to look at a soft-forgotten one."""
    forgotten, purged = forget_events(events)
    may_look = memory.purged_at is None and roles.can(memory.scope, Action.FORGET_HARD)
    return {
        "forgotten_event": forgotten,
        "purged_event": purged,
        "reached": reached_lines(request.principal, forgotten),
        "may_look": may_look,
        "looking": may_look and cleaned(TombstoneForm(request.GET))[LOOK],
        "may_purge": may_look,
        "list_url": reverse("dashboard:memories") + "?" + urlencode({"scope": memory.scope.path}),
        "audit_url": reverse("dashboard:governance-audit") + "?" + urlencode({"target": str(memory.pk)}),
        "readable_links": [
            r for r in relations if r["other"] is not None and r["other"].status != Status.FORGOTTEN
        ],
    }


def tombstone_page(request, memory: Memory, roles, status: int = 200, error: DomainError | None = None):
    """The page of a forgotten memory (memoryui.views.memories.memory_page sends it here)."""
    events = sel.memory_audit(memory)
    relations = sel.memory_relations(request.principal, memory)
    return page(
        request,
        "dashboard/memories/tombstone.html",
        {
            "memory": memory,
            "audit": events,
            "error": error,
            "nav": "memories",
            **tombstone_context(request, memory, roles, events, relations),
        },
        status=status,
    )


def timeline_tombstones(memories: list[Memory]) -> list[dict]:
    """A line for each forgotten memory picked on the timeline: who forgot it and when, never its text."""
    ids = [str(m.pk) for m in memories]
    events = AuditEvent.objects.filter(target_type="memory", target_id__in=ids, action__in=FORGET_ACTIONS)
    first: dict[str, AuditEvent] = {}
    for e in events.order_by("at", "pk"):
        first.setdefault(e.target_id, e)
    return [
        {
            "memory": m,
            "event": first.get(str(m.pk)),
            "purged": m.purged_at is not None,
            "url": reverse("dashboard:memory", args=[m.pk]),
        }
        for m in memories
    ]
