"""The memory page's curation forms: link this memory to another by hand (with a memory picker searched
by id or keyword within the readable scopes), remove a link, and request the promotion of a candidate
citing chosen episodes. Each calls its service with the signed-in principal; a refusal re-renders the
memory page with the reason and its 4xx status, and changes nothing."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from governance.errors import DomainError, InvalidInput
from governance.models import RelationKind, Status
from governance.permissions import Action, RoleMap
from governance.selectors import dashboard as sel
from governance.selectors.dashboard.links import link_choices, promotion_episodes
from governance.services.promotion import PROMOTABLE_KINDS, episodes_suggested, promotion_propose
from governance.services.relation import HAND_KINDS, relation_link, relation_unlink
from memoryui.views.base import dashboard_view, page, render_error

TARGET_REQUIRED = "Pick the memory to link to: search for it, or give its id."
EPISODES_REQUIRED = "Tick the episodes that support this promotion."

LINK_KINDS = [(str(k), RelationKind(k).label.lower()) for k in HAND_KINDS]


def curation_context(principal, memory, roles: RoleMap) -> dict:
    """What the memory page needs for the link, unlink and promotion forms (the page asks nothing else)."""
    can_link = memory.status != Status.FORGOTTEN and roles.can(memory.scope, Action.LINK)
    promotable = (memory.kind in PROMOTABLE_KINDS and memory.status == Status.CANDIDATE
                  and roles.can(memory.scope, Action.WRITE_CANDIDATE))
    context = {"can_link": can_link, "link_kinds": LINK_KINDS, "promotable": promotable,
               "unlinkable": _unlinkable(roles, memory)}
    if promotable:
        context["promotion_episodes"] = promotion_episodes(memory)
        context["promotion_suggested"] = {e.pk for e in episodes_suggested(memory)}
    return context


def _unlinkable(roles: RoleMap, memory) -> set[int]:
    """Ids of the page's relations this principal may remove: links made by hand or by the system, not a
    revision's `supersedes`, on a source scope where it holds the link right."""
    from governance.models import Relation

    rows = Relation.objects.filter(source=memory).exclude(kind=RelationKind.SUPERSEDES).values_list("pk", flat=True)
    incoming = (Relation.objects.filter(target=memory).exclude(kind=RelationKind.SUPERSEDES)
                .select_related("source__scope").only("pk", "source__scope"))
    out = set(rows) if roles.can(memory.scope, Action.LINK) else set()
    out.update(r.pk for r in incoming if roles.can(r.source.scope, Action.LINK))
    return out


def _memory_page_with_error(request, memory_id: int, exc: DomainError):
    from memoryui.views.memories import _detail

    try:
        return _detail(request, memory_id, status=exc.status, error=exc)
    except DomainError:  # the memory itself is not readable: say only that
        return render_error(request, exc)


def _int(value, message: str, field: str) -> int:
    try:
        return int(str(value).strip().lstrip("#"))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(message, field=field) from exc


@require_POST
@dashboard_view()
def memory_link(request, memory_id: int):
    """Link this memory (the source) to the one picked: supports, contradicts or derived from."""
    try:
        sel.memory_for_reader(request.principal, memory_id)
        picked = request.POST.get("target") or request.POST.get("target_id") or ""
        target = _int(picked, TARGET_REQUIRED, "target")
        relation = relation_link(source_id=memory_id, target_id=target, kind=request.POST.get("kind", ""),
                                 reason=request.POST.get("reason", ""), actor=request.principal)
    except DomainError as exc:
        return _memory_page_with_error(request, memory_id, exc)
    messages.success(request, f"Linked: memory {memory_id} {relation.get_kind_display().lower()} memory {target}.")
    return redirect("dashboard:memory", memory_id=memory_id)


@require_POST
@dashboard_view()
def memory_unlink(request, memory_id: int):
    try:
        sel.memory_for_reader(request.principal, memory_id)
        relation_id = _int(request.POST.get("relation"), "Unknown link.", "relation")
        relation_unlink(relation_id=relation_id, reason=request.POST.get("reason", ""), actor=request.principal)
    except DomainError as exc:
        return _memory_page_with_error(request, memory_id, exc)
    messages.success(request, f"Link {relation_id} removed.")
    return redirect("dashboard:memory", memory_id=memory_id)


@dashboard_view()
def memory_link_choices(request, memory_id: int):
    """The picker's results (an htmx partial): readable memories of the same workspace matching the query."""
    memory = sel.memory_for_reader(request.principal, memory_id)
    choices = link_choices(request.principal, memory, request.GET.get("q", "")[:200])
    return page(request, "dashboard/memories/_link_choices.html", {"choices": choices, "q": request.GET.get("q", "")})


@require_POST
@dashboard_view()
def memory_promote(request, memory_id: int):
    """Request the promotion of this candidate, citing the ticked episodes: a proposal for review."""
    try:
        sel.memory_for_reader(request.principal, memory_id)
        episodes = [_int(v, EPISODES_REQUIRED, "episodes") for v in request.POST.getlist("episodes")]
        if not episodes:
            raise InvalidInput(EPISODES_REQUIRED, field="episodes")
        proposal = promotion_propose(memory_id=memory_id, episode_ids=sorted(set(episodes)),
                                     reason=request.POST.get("reason", ""), actor=request.principal)
    except DomainError as exc:
        return _memory_page_with_error(request, memory_id, exc)
    messages.success(request, f"Promotion requested: memory {proposal.pk} waits for review.")
    return redirect("dashboard:memory", memory_id=proposal.pk)


