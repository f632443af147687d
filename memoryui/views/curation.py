"""The memory page's curation forms: link this memory to another by hand (with a memory picker searched
by id or keyword within the readable scopes), remove a link, and request the promotion of a candidate
citing chosen episodes. Each calls its service with the signed-in principal; a refusal re-renders the
memory page with the reason and its 4xx status, and changes nothing."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from governance.errors import DomainError
from governance.selectors import dashboard as sel
from governance.selectors.dashboard.links import link_choices
from governance.services.memory.promotion import promotion_propose
from governance.services.relation import relation_link, relation_unlink
from memoryui.forms.curation import (  # noqa: F401  (the messages tests reuse, where they were)
    EPISODES_REQUIRED,
    TARGET_REQUIRED,
    LinkChoicesForm,
    MemoryLinkForm,
    MemoryPromoteForm,
    MemoryUnlinkForm,
)
from memoryui.views.base import cleaned, dashboard_view, page, render_error
from memoryui.views.memories import LINK_KINDS, curation_context, memory_page  # noqa: F401  (their old home)


def _memory_page_with_error(request, memory_id: int, exc: DomainError, posted: dict | None = None):
    try:
        return memory_page(request, memory_id, status=exc.status, error=exc, posted=posted)
    except DomainError:  # the memory itself is not readable: say only that
        return render_error(request, exc)


@require_POST
@dashboard_view()
def memory_link(request, memory_id: int):
    """Link this memory (the source) to the one picked: supports, contradicts or derived from."""
    form = MemoryLinkForm(request.POST)
    try:
        sel.memory_for_reader(request.principal, memory_id)
        data = cleaned(form)
        target = data["target"]
        relation = relation_link(
            source_id=memory_id,
            target_id=target,
            kind=data["kind"],
            reason=data["reason"],
            actor=request.principal,
        )
    except DomainError as exc:
        # The link form opens again with the kind it was sent with (read by the form, when it reads).
        kind = form.cleaned_data.get("kind", "") if hasattr(form, "cleaned_data") else ""
        return _memory_page_with_error(request, memory_id, exc, posted={"kind": kind})
    messages.success(
        request, f"Linked: memory {memory_id} {relation.get_kind_display().lower()} memory {target}."
    )
    return redirect("dashboard:memory", memory_id=memory_id)


@require_POST
@dashboard_view()
def memory_unlink(request, memory_id: int):
    try:
        sel.memory_for_reader(request.principal, memory_id)
        data = cleaned(MemoryUnlinkForm(request.POST))
        relation_id = data["relation"]
        relation_unlink(relation_id=relation_id, reason=data["reason"], actor=request.principal)
    except DomainError as exc:
        return _memory_page_with_error(request, memory_id, exc)
    messages.success(request, f"Link {relation_id} removed.")
    return redirect("dashboard:memory", memory_id=memory_id)


@dashboard_view()
def memory_link_choices(request, memory_id: int):
    """The picker's results (an htmx partial): readable memories of the same workspace matching the query."""
    memory = sel.memory_for_reader(request.principal, memory_id)
    q = cleaned(LinkChoicesForm(request.GET))["q"]
    choices = link_choices(request.principal, memory, q)
    return page(request, "dashboard/memories/_link_choices.html", {"choices": choices, "q": q})


@require_POST
@dashboard_view()
def memory_promote(request, memory_id: int):
    """Request the promotion of this candidate, citing the ticked episodes: a proposal for review."""
    try:
        sel.memory_for_reader(request.principal, memory_id)
        data = cleaned(MemoryPromoteForm(request.POST))
        proposal = promotion_propose(
            memory_id=memory_id,
            episode_ids=sorted(data["episodes"]),
            reason=data["reason"],
            actor=request.principal,
        )
    except DomainError as exc:
        return _memory_page_with_error(request, memory_id, exc)
    messages.success(request, f"Promotion requested: memory {proposal.pk} waits for review.")
    return redirect("dashboard:memory", memory_id=proposal.pk)
