"""Memories: the filtered list, one memory's page, its activation curve, and the actions on it."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.views.decorators.http import require_POST

from governance.errors import DomainError, InvalidInput
from governance.models import TRANSITIONS, Kind, SourceKind, Status, Tier
from governance.permissions import Action, approvers
from governance.selectors import dashboard as sel
from governance.services import memory as memory_services
from memoryui.views.base import chart_time, dashboard_view, page, page_links, render_error
from memoryui.views.charts import curve
from memoryui.views.curation import curation_context

CONFIRM_IRREVERSIBLE = "This action cannot be undone: tick the box that says so to go ahead."
REASON_REQUIRED = "Say why: a reason is kept in the audit log with this change."
UNKNOWN_ACTION = "Unknown action."

# The actions a memory page may offer: (name, label, permission, the status it moves to, irreversible).
ACTIONS = [
    ("confirm", "Confirm", Action.CONFIRM, Status.ACTIVE, False),
    ("reject", "Reject", Action.CONFIRM, Status.REJECTED, True),
    ("supersede", "Supersede with a new text", Action.SUPERSEDE, Status.SUPERSEDED, True),
    ("retire", "Retire", Action.RETIRE, Status.RETIRED, True),
    ("forget", "Forget (soft: text kept for owners)", Action.FORGET_SOFT, Status.FORGOTTEN, True),
    ("forget_hard", "Forget and purge the text", Action.FORGET_HARD, Status.FORGOTTEN, True),
]


def _filters(request) -> sel.MemoryFilters:
    g = request.GET
    return sel.MemoryFilters(
        status=g.get("status", "") if g.get("status", "") in Status.values else "",
        kind=g.get("kind", "") if g.get("kind", "") in Kind.values else "",
        source=g.get("source", "") if g.get("source", "") in SourceKind.values else "",
        tier=g.get("tier", "") if g.get("tier", "") in Tier.values else "",
        q=g.get("q", "")[:200],
        cold=g.get("cold", ""),
    )


@dashboard_view()
def memory_list(request):
    filters = _filters(request)
    page_obj = sel.memory_page(request.principal, request.scope, filters, request.GET.get("page", 1))
    context = {
        "page_obj": page_obj, "links": page_links(request, page_obj), "filters": filters,
        "statuses": Status.choices, "kinds": Kind.choices, "sources": SourceKind.choices, "tiers": Tier.choices,
        "now": timezone.now(), "nav": "memories", "scopes": sel.scope_tree(request.principal),
    }
    if request.htmx and request.htmx.target == "memory-table":
        return page(request, "dashboard/memories/_table.html", context)
    return page(request, "dashboard/memories/list.html", context)


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


@dashboard_view()
def memory_detail(request, memory_id: int):
    return _detail(request, memory_id)


def _detail(request, memory_id: int, status: int = 200, error: DomainError | None = None) -> HttpResponse:
    memory = sel.memory_for_reader(request.principal, memory_id)
    roles = sel.MyRoles.of(request.principal)
    chain = sel.revision_chain(memory)
    return page(request, "dashboard/memories/detail.html", {
        "memory": memory, "chain": chain, "relations": sel.memory_relations(request.principal, memory),
        "audit": sel.memory_audit(memory), "actions": allowed_actions(roles, memory),
        "show_text": text_visible(roles, memory), "roles": sorted(roles.at(memory.scope)),
        "approvals": len(approvers(memory)), "error": error, "nav": "memories",
        # A rule-like active memory is in force only once a person confirmed it (docs/governance.md).
        "rule_like": bool(memory.key) or memory.kind not in (Kind.EPISODIC, Kind.WORKING),
        "end_requests": sorted((memory.meta.get("end_requests") or {}).items()),
        "activation_now": memory_activation_now(memory), "source_kinds": SourceKind.choices,
        "turn_uses": sel.memory_turns(request.principal, memory.pk), "turn_uses_limit": sel.MEMORY_TURNS_LIMIT,
        **curation_context(request.principal, memory, roles),  # link / unlink / request promotion
    }, status=status)


def memory_activation_now(memory) -> float:
    from governance.activation import activation

    return activation(memory.activation_log_k, memory.decay_rate, timezone.now())


@dashboard_view(json=True)
def memory_activation_json(request, memory_id: int):
    memory = sel.memory_for_reader(request.principal, memory_id)
    events = [(e.at, e.weight) for e in sel.memory_reinforcements(memory)]
    start = memory.occurred_at or memory.created_at
    until = timezone.now()
    first = min([start, *(at for at, _ in events)])
    since = min(first, until) - (until - first) * 0.02
    data = curve(a0=memory.activation_a0, decay=memory.decay_rate, start=start, events=events, since=since, until=until)
    changes = sel.status_changes([memory.pk]).get(memory.pk, [])
    return JsonResponse({
        "x": [chart_time(t) for t in data["x"]], "y": data["y"],
        "reinforcements": [{"at": chart_time(t), "y": y, "weight": w} for t, y, w in data["reinforcements"]],
        "changes": [{"at": chart_time(e.at), "to": e.after_status, "action": e.action} for e in changes],
        "threshold": _threshold(), "label": str(memory.key or f"memory {memory.pk}"),
    })


def _threshold() -> float:
    from django.conf import settings

    return settings.MEMORY_COLD_THRESHOLD


@require_POST
@dashboard_view()
def memory_act(request, memory_id: int):
    """Apply one action through its service; any refusal re-renders the page with the reason and a 4xx."""
    name = request.POST.get("action", "")
    reason = request.POST.get("reason", "").strip()
    try:
        result = apply_action(request, memory_id, name, reason)
    except DomainError as exc:
        try:
            return _detail(request, memory_id, status=exc.status, error=exc)
        except DomainError:  # the memory itself is not readable: say only that
            return render_error(request, exc)
    target = next(a[3] for a in ACTIONS if a[0] == name)
    if name in ("retire", "forget", "forget_hard") and result.status != target:
        # Four-eyes: only the first of the two people's requests was recorded; the memory is unchanged.
        words = {"retire": "retire", "forget": "forget", "forget_hard": "hard-forget"}[name]
        messages.warning(request, memory_services.FOUR_EYES_REQUESTED.format(action=words))
    elif name == "confirm" and result.status != Status.ACTIVE:
        messages.warning(request, f"Approval recorded for memory {memory_id}: a second, different reviewer "
                                  "must confirm it before it is in force.")
    else:
        messages.success(request, f"Done: {name.replace('_', ' ')} of memory {memory_id}.")
    return redirect("dashboard:memory", memory_id=result.pk)


def apply_action(request, memory_id: int, name: str, reason: str):
    spec = next((a for a in ACTIONS if a[0] == name), None)
    if spec is None:
        raise InvalidInput(UNKNOWN_ACTION, field="action")
    if name != "confirm" and not reason:
        raise InvalidInput(REASON_REQUIRED, field="reason")
    if spec[4] and request.POST.get("irreversible") != "yes":
        raise InvalidInput(CONFIRM_IRREVERSIBLE, field="irreversible")
    actor = request.principal
    if name == "confirm":
        return memory_services.memory_confirm(memory_id=memory_id, actor=actor, reason=reason)
    if name == "reject":
        return memory_services.memory_reject(memory_id=memory_id, actor=actor, reason=reason)
    if name == "supersede":
        return memory_services.memory_supersede(
            memory_id=memory_id, text=request.POST.get("text", ""), reason=reason,
            source_kind=SourceKind.REVIEWER, source_ref=f"dashboard:{request.user.get_username()}", actor=actor,
        )
    if name == "retire":
        return memory_services.memory_retire(memory_id=memory_id, actor=actor, reason=reason)
    return memory_services.memory_forget(memory_id=memory_id, actor=actor, reason=reason, hard=name == "forget_hard")
