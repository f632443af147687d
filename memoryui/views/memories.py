"""Memories: the filtered list, one memory's page, its activation curve, and the actions on it."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse, JsonResponse, QueryDict
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from governance.errors import DomainError, InvalidInput, NotFound
from governance.models import TRANSITIONS, Kind, Relation, RelationKind, SourceKind, Status
from governance.permissions import Action, RoleMap, approvers, who_decides
from governance.recall.meaning import memory_meaning
from governance.runtime.replica import routed_read
from governance.selectors import dashboard as sel
from governance.selectors.dashboard.links import promotion_episodes
from governance.services import memory as memory_services
from governance.services.memory.promotion import PROMOTABLE_KINDS, episodes_suggested
from governance.services.memory_bulk import BULK_ACTIONS, BULK_CAP, memory_bulk_act
from governance.services.relation import HAND_KINDS
from governance.services.review import proposal_confirm
from memoryui.forms.focus import FocusForm
from memoryui.forms.memories import (
    FILTERS_INVALID,
    REACH,
    MemoryCursorForm,
    MemoryListForm,
    MemoryReachForm,
    ScopeOptionsForm,
)
from memoryui.forms.memory_actions import (  # noqa: F401  (the messages tests reuse, where they were)
    BULK_BAD_IDS,
    BULK_IRREVERSIBLE,
    CONFIRM_IRREVERSIBLE,
    UNKNOWN_ACTION,
    MemoryActForm,
    MemoryBulkForm,
)
from memoryui.views.base import cleaned, dashboard_view, page, render_error
from memoryui.views.standing import no_action_line
from memoryui.views.tombstone import tombstone_page

REASON_REQUIRED = memory_services.REASON_REQUIRED  # the services refuse an empty reason themselves

# The actions a memory page may offer: (name, label, permission, the status it moves to, irreversible).
ACTIONS = [
    ("confirm", "Confirm", Action.CONFIRM, Status.ACTIVE, False),
    ("reject", "Reject", Action.CONFIRM, Status.REJECTED, True),
    ("supersede", "Supersede with a new text", Action.SUPERSEDE, Status.SUPERSEDED, False),
    ("retire", "Retire", Action.RETIRE, Status.RETIRED, True),
    ("forget", "Forget (soft: text kept for owners)", Action.FORGET_SOFT, Status.FORGOTTEN, True),
    ("forget_hard", "Forget and purge the text", Action.FORGET_HARD, Status.FORGOTTEN, True),
]

# What a person reads after an action on one memory: the outcome, in the words of the glossary.
DONE_WORDS = {
    "confirm": "Memory {id} is confirmed: it is in force now.",
    "reject": "Memory {id} is rejected: it will not be used.",
    "supersede": "Memory {id} is superseded by memory {new}: the new text is in force, the old one is kept as history.",
    "retire": "Memory {id} is retired: it is kept but never recalled again.",
    "forget": "Memory {id} is forgotten: its text is withheld everywhere and it is never recalled again.",
    "forget_hard": "Memory {id} is forgotten and purged: its text is erased; a tombstone remains.",
}


def _filters(request) -> tuple[MemoryListForm, sel.MemoryFilters | None]:
    """The list's filters from the query string, read through its form; None when a value is refused."""
    form = MemoryListForm(request.GET)
    return form, form.filters() if form.is_valid() else None


def _sort_links(request, filters: sel.MemoryFilters) -> list[dict]:
    """A link per sortable column: the first click sorts it its natural way, the next one reverses it;
    every filter is kept and the position is not (a new order starts at its top)."""
    out = []
    for name, label in sel.SORT_LABELS.items():
        params = request.GET.copy()
        for gone in ("after", "before", "page"):
            params.pop(gone, None)
        active = filters.sort == name
        params["sort"] = name
        params["dir"] = ("asc" if filters.dir == "desc" else "desc") if active else sel.FIRST_DIR[name]
        out.append(
            {
                "name": name,
                "label": label,
                "url": "?" + params.urlencode(),
                "active": active,
                "dir": filters.dir if active else "",
            }
        )
    return out


def _first_page(request) -> str:
    params = request.GET.copy()
    for gone in ("after", "before", "page"):
        params.pop(gone, None)
    return "?" + params.urlencode()


def _keyset_links(request, page_obj) -> dict:
    links = {}
    for rel, cursor, key in (
        ("prev", page_obj.prev_cursor, "before"),
        ("next", page_obj.next_cursor, "after"),
    ):
        if cursor:
            params = request.GET.copy()
            for gone in ("after", "before", "page"):
                params.pop(gone, None)
            params[key] = cursor
            links[rel] = "?" + params.urlencode()
    return links


@dashboard_view()
def memory_list(request):
    form, filters = _filters(request)
    context = {
        "form": form,
        "filters": filters or sel.MemoryFilters(),
        "first_page": _first_page(request),
        "bulk_cap": BULK_CAP,
        "query": request.GET.urlencode(),
        "now": timezone.now(),
        "nav": "memories",
        "scopes": sel.scope_tree(request.principal),
        "bulk_actions": BULK_ACTIONS,
    }
    # A refused filter lists nothing (and says which and why, with a 400): a list without it would claim
    # to show what was asked for, and the bulk action on "every memory matching" would act on more.
    status = 400 if filters is None else 200
    context.update(_rows(request, filters) if filters else {"rows": [], "invalid": FILTERS_INVALID})
    context["sort_links"] = _sort_links(request, context["filters"])
    context["sorts"] = {s["name"]: s for s in context["sort_links"]}
    if request.htmx and request.htmx.target == "memory-table":
        return page(request, "dashboard/memories/_table.html", context, status=status)
    return page(request, "dashboard/memories/list.html", context, status=status)


def _rows(request, filters: sel.MemoryFilters) -> dict:
    """The page of rows for valid filters: by meaning (nearest first, within reach) or a keyset page."""
    meaning = filters.mode == "meaning" and filters.q.strip()
    # A list is a read a streaming replica may answer (governance.runtime.replica): the workspace's read
    # fence holds it to every forget and retire the primary has made.
    workspace = request.scope.workspace_id if request.scope else None
    if meaning:
        found = routed_read(workspace, lambda: memory_meaning(request.principal, request.scope, filters))
        rows, reach = _within_reach(request, found)
        return {"rows": rows, "reach": reach, "meaning": True, "page_obj": None, "links": {}}
    cursors = cleaned(MemoryCursorForm(request.GET))
    page_obj = routed_read(
        workspace,
        lambda: sel.memory_list_page(
            request.principal, request.scope, filters, after=cursors["after"], before=cursors["before"]
        ),
    )
    rows = page_obj.object_list
    return {
        "rows": rows,
        "reach": {},
        "meaning": False,
        "page_obj": page_obj,
        "links": _keyset_links(request, page_obj),
        "paged": bool(cursors["after"] or cursors["before"]),  # past the list's first page
    }


def _within_reach(request, rows: list) -> tuple[list, dict]:
    name = cleaned(MemoryReachForm(request.GET))["reach"]
    margin = REACH[name]
    best = rows[0].similarity if rows else None
    kept = rows if margin is None or best is None else [m for m in rows if m.similarity >= best - margin]
    widen = {}
    for other in REACH:
        params = request.GET.copy()
        params["reach"] = other
        widen[other] = "?" + params.urlencode()
    return kept, {
        "name": name,
        "margin": margin,
        "best": best,
        "hidden": len(rows) - len(kept),
        "links": widen,
    }


def allowed_actions(roles: sel.MyRoles, memory) -> list[dict]:
    """The actions this user may take on this memory now: granted here and allowed from its status."""
    out = []
    for name, label, permission, to, irreversible in ACTIONS:
        if not roles.can(memory.scope, permission):
            continue
        if name in ("confirm", "reject"):
            possible = memory.status in (Status.CANDIDATE, Status.PROPOSED)
        elif name == "forget_hard":
            possible = memory.purged_at is None
        else:
            possible = to in TRANSITIONS[Status(memory.status)]
        if possible:
            out.append({"name": name, "label": label, "irreversible": irreversible})
    return out


def text_visible(roles: sel.MyRoles, memory) -> bool:
    """A forgotten memory's text (when not purged) is kept for owners only."""
    return memory.status != Status.FORGOTTEN or roles.can(memory.scope, Action.FORGET_HARD)


# --- The curation forms on the memory page (their POST views: memoryui.views.curation) ---------------


LINK_KINDS = [(str(k), RelationKind(k).label.lower()) for k in HAND_KINDS]


def curation_context(principal, memory, roles: RoleMap) -> dict:
    """What the memory page needs for the link, unlink and promotion forms (the page asks nothing else)."""
    can_link = memory.status != Status.FORGOTTEN and roles.can(memory.scope, Action.LINK)
    promotable = (
        memory.kind in PROMOTABLE_KINDS
        and memory.status == Status.CANDIDATE
        and roles.can(memory.scope, Action.WRITE_CANDIDATE)
    )
    context = {
        "can_link": can_link,
        "link_kinds": LINK_KINDS,
        "promotable": promotable,
        "unlinkable": _unlinkable(roles, memory),
    }
    if promotable:
        context["promotion_episodes"] = promotion_episodes(memory)
        context["promotion_suggested"] = {e.pk for e in episodes_suggested(memory)}
    return context


def _unlinkable(roles: RoleMap, memory) -> set[int]:
    """Ids of the page's relations this principal may remove: links made by hand or by the system, not a
    revision's `supersedes`, on a source scope where it holds the link right."""
    rows = (
        Relation.objects.filter(source=memory)
        .exclude(kind=RelationKind.SUPERSEDES)
        .values_list("pk", flat=True)
    )
    incoming = (
        Relation.objects.filter(target=memory)
        .exclude(kind=RelationKind.SUPERSEDES)
        .select_related("source__scope")
        .only("pk", "source__scope")
    )
    out = set(rows) if roles.can(memory.scope, Action.LINK) else set()
    out.update(r.pk for r in incoming if roles.can(r.source.scope, Action.LINK))
    return out


@dashboard_view()
def memory_detail(request, memory_id: int):
    return memory_page(request, memory_id)


def memory_page(
    request, memory_id: int, status: int = 200, error: DomainError | None = None, posted: dict | None = None
) -> HttpResponse:
    """`posted`: what a refused form on this page was sent with, read by its form (its `action`, its link
    `kind`), so that form opens again as it was."""
    memory = sel.memory_for_reader(request.principal, memory_id)
    roles = sel.MyRoles.of(request.principal)
    if memory.status == Status.FORGOTTEN:
        return tombstone_page(request, memory, roles, status=status, error=error)
    chain = sel.revision_chain(memory)
    actions = allowed_actions(roles, memory)
    return page(
        request,
        "dashboard/memories/detail.html",
        {
            "memory": memory,
            "chain": chain,
            "relations": sel.memory_relations(request.principal, memory),
            "audit": sel.memory_audit(memory),
            "actions": actions,
            "show_text": text_visible(roles, memory),
            "roles": sorted(roles.at(memory.scope)),
            "no_action_line": "" if actions else no_action_line(roles.at(memory.scope), memory),
            "approvals": len(approvers(memory)),
            "decides": who_decides(memory),
            "error": error,
            "posted": posted or {},
            "nav": "memories",
            # A rule-like active memory is in force only once a person confirmed it (docs/governance.md).
            "rule_like": bool(memory.key) or memory.kind not in (Kind.EPISODIC, Kind.WORKING),
            "end_requests": sorted((memory.meta.get("end_requests") or {}).items()),
            "activation_now": memory_activation_now(memory),
            "source_kinds": SourceKind.choices,
            "turn_uses": sel.memory_turns(request.principal, memory.pk),
            "turn_uses_limit": sel.MEMORY_TURNS_LIMIT,
            **curation_context(request.principal, memory, roles),  # link / unlink / request promotion
        },
        status=status,
    )


def memory_activation_now(memory) -> float:
    from governance.models.activation import activation

    return activation(memory.activation_log_k, memory.decay_rate, timezone.now())


@require_POST
@dashboard_view()
def memory_act(request, memory_id: int):
    """Apply one action through its service; any refusal re-renders the page with the reason and a 4xx."""
    form = MemoryActForm(
        request.POST, actions=[a[0] for a in ACTIONS], irreversible={a[0] for a in ACTIONS if a[4]}
    )
    try:
        data = cleaned(form)
        name = data["action"]
        result = apply_action(request, memory_id, data)
    except DomainError as exc:
        try:
            posted = {"action": form.cleaned_data.get("action", "")} if hasattr(form, "cleaned_data") else {}
            return memory_page(request, memory_id, status=exc.status, error=exc, posted=posted)
        except DomainError:  # the memory itself is not readable: say only that
            return render_error(request, exc)
    if result.four_eyes_pending is not None:
        # Four-eyes: the service recorded an approval or the first of two requests; it says which.
        messages.warning(request, f"Memory {memory_id}: {result.four_eyes_pending.message}")
    else:
        messages.success(
            request,
            DONE_WORDS.get(name, "Done: {action} of memory {id}.").format(
                id=memory_id, new=result.pk, action=name.replace("_", " ")
            )
            + _reached_words(getattr(result, "reached", [])),
        )
    return redirect("dashboard:memory", memory_id=result.pk)


REACHED_WORDS = {
    "rewritten": "memory {id}: its words replaced",
    "forgotten": "memory {id}: forgotten with it",
    "kept_decided": "memory {id}: kept (a person decided it; forget it on its own)",
    "not_found": "memory {id}: the words are not there verbatim (forget it on its own)",
    "not_governed": "memory {id}: in a scope you do not govern",
}


def _reached_words(reached: list[dict]) -> str:
    """The forget's report in one sentence (services/memory/words.py)."""
    parts = [REACHED_WORDS[p["state"]].format(id=p["memory_id"]) for p in reached if p["place"] == "memory"]
    turns = sum(p.get("count", 0) for p in reached if p["place"] == "turns")
    if turns:
        parts.append(f"{turns} stored turn{'s' if turns != 1 else ''} rewritten")
    misses = sum(p.get("count", 0) for p in reached if p["place"] == "evaluation_misses")
    if misses:
        parts.append(f"{misses} evaluation record{'s' if misses != 1 else ''} (kept misses) rewritten")
    return f" Where its words went: {'; '.join(parts)}." if parts else ""


def apply_action(request, memory_id: int, data: dict):
    """The service of MemoryActForm's action (one the page offers, ticked when it cannot be undone)."""
    name, reason, actor = data["action"], data["reason"], request.principal
    if name == "confirm":
        return proposal_confirm(memory_id=memory_id, actor=actor, reason=reason)
    if name == "reject":
        return memory_services.memory_reject(memory_id=memory_id, actor=actor, reason=reason)
    if name == "supersede":
        return memory_services.memory_supersede(
            memory_id=memory_id,
            text=data["text"],
            reason=reason,
            source_kind=SourceKind.REVIEWER,
            source_ref=f"dashboard:{request.user.get_username()}",
            actor=actor,
        )
    if name == "retire":
        return memory_services.memory_retire(memory_id=memory_id, actor=actor, reason=reason)
    return memory_services.memory_forget(
        memory_id=memory_id, actor=actor, reason=reason, hard=name == "forget_hard"
    )


BULK_MATCHING_TOO_MANY = (
    "{n} memories match these filters; a bulk action takes at most {cap} at once. Narrow the "
    "filters (scope, status, kind, dates, key…) until at most {cap} match."
)


@require_POST
@dashboard_view()
def memory_bulk(request):
    """Retire, forget or confirm the selected rows (or every row matching the list's filters, up to
    BULK_CAP) with one reason, through memory_bulk_act; answers with one line per memory."""
    try:
        data = cleaned(MemoryBulkForm(request.POST))
        action, reason, query = data["action"], data["reason"], data["query"]
        if data["all"] == "yes":
            ids, hidden = _matching_ids(request, QueryDict(query)), []
        else:
            asked = data["ids"]  # whole numbers a bigint key can be, at most BULK_CAP of them
            ids = sel.memory_ids_governed(request.principal, asked)
            # Ids outside the person's scopes get the answer ids that do not exist get.
            hidden = [i for i in asked if i not in set(ids)]
        # With no readable id left the service still answers for the action, the reason and an empty
        # selection; it is only skipped when every id asked for was unreadable.
        outcomes = (
            []
            if hidden and not ids
            else memory_bulk_act(memory_ids=ids, action=action, reason=reason, actor=request.principal)
        )
    except DomainError as exc:
        return render_error(request, exc)
    rows = [
        {"id": o.memory_id, "outcome": o.outcome, "status": o.status, "message": o.message, "readable": True}
        for o in outcomes
    ]
    rows += [
        {"id": i, "outcome": "refused", "status": "", "message": NotFound.message, "readable": False}
        for i in hidden
    ]
    summary = {k: sum(1 for r in rows if r["outcome"] == k) for k in ("done", "requested", "refused")}
    return page(
        request,
        "dashboard/memories/bulk_result.html",
        {
            "rows": rows,
            "summary": summary,
            "action": BULK_ACTIONS.get(action, action),
            "reason": reason.strip(),
            "back": reverse("dashboard:memories") + ("?" + query if query else ""),
            "nav": "memories",
        },
    )


def _matching_ids(request, listed: QueryDict) -> list[int]:
    """Every memory the list showed for its filters (searching by words), or a 400 past BULK_CAP. The
    list's query string is read through the list's own forms, as the list read it."""
    scope = sel.scope_for_path(request.principal, cleaned(FocusForm(listed))["scope"])
    form = MemoryListForm(listed)
    if not form.is_valid():
        raise form.first_error()
    filters = form.filters()
    filters.mode = "words"
    ids = sel.memory_ids_matching(request.principal, scope, filters, BULK_CAP)
    if len(ids) > BULK_CAP:
        counted = sel.memory_list_page(request.principal, scope, filters, per_page=1)
        n = f"More than {counted.count}" if counted.capped else str(counted.count)
        raise InvalidInput(BULK_MATCHING_TOO_MANY.format(n=n, cap=BULK_CAP), field="all")
    return ids


@dashboard_view(json=True)
def scope_options(request):
    """The type-ahead scope picker: governed scope paths matching what was typed (path prefix, or a word
    of the name), SCOPE_OPTIONS_LIMIT at most, in tree order."""
    return JsonResponse(
        {"scopes": sel.scope_suggestions(request.principal, cleaned(ScopeOptionsForm(request.GET))["q"])}
    )
