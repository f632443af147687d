"""Governance: grants per scope (and who may change them), the audit log with the chain's state, and the
propagation of recent changes to each derived store."""

from __future__ import annotations

from django.contrib import messages
from django.core.cache import cache
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from governance.errors import DomainError, InvalidInput, PermissionDenied
from governance.models import AuditEvent, Principal, Role, Scope
from governance.permissions import AUDIT_VERIFY_DENIED, Action, can, can_verify_audit
from governance.selectors import dashboard as sel
from governance.services.audit import audit_verify_chain
from governance.services.principal import grant_add, grant_revoke, token_revoke
from memoryui.views.base import dashboard_view, page, page_links, scope_query

UNKNOWN_PRINCIPAL = "No user, team or agent has that name."
UNKNOWN_SCOPE = "Choose one of the scopes you own."
BAD_GRANT_ID = "grant is a whole number."
BAD_TOKEN_ID = "token is a whole number."
VERIFY_CACHE_SECONDS = 600


def _audit_filters(request) -> sel.AuditFilters:
    g = request.GET
    return sel.AuditFilters(action=g.get("action", "")[:50], actor=g.get("actor", "")[:150],
                            target=g.get("target", "")[:64])


def _grant_rows(request, roles: sel.MyRoles) -> list[dict]:
    rows = []
    for grant in sel.grants_in(request.principal, request.scope):
        may_revoke = roles.may_grant(grant.scope, grant.role)
        rows.append({"grant": grant, "may_revoke": may_revoke})
    return rows


@dashboard_view()
def governance(request):
    return _render(request)


def _render(request, error: DomainError | None = None, status: int = 200):
    roles = sel.MyRoles.of(request.principal)
    scopes = sel.visible_scopes(request.principal, request.scope).order_by("path")
    owned = [s for s in scopes if roles.can(s, Action.MANAGE_GRANTS)]
    filters = _audit_filters(request)
    audit = sel.audit_page(request.principal, request.scope, filters, request.GET.get("page", 1))
    context = {
        "grants": _grant_rows(request, roles), "owned_scopes": owned,
        "grantable_roles": [r for r in Role if any(roles.may_grant(s, r) for s in owned)],
        "tokens": sel.tokens_in(request.principal, request.scope),
        "can_verify_audit": can_verify_audit(request.principal),
        "audit": audit, "links": page_links(request, audit), "filters": filters, "actions": sel.audit_actions(),
        "propagation": sel.recent_propagation(request.principal, request.scope), "error": error,
        "nav": "governance",
    }
    if request.htmx and request.htmx.target == "audit-log":
        return page(request, "dashboard/governance/_audit.html", context, status=status)
    return page(request, "dashboard/governance/index.html", context, status=status)


@dashboard_view()
def audit_verify(request):
    """The chain's state, verified at most once per new event (walking it costs time on a long log).
    Offered to whom the API offers it (permissions.can_verify_audit)."""
    if not can_verify_audit(request.principal):
        raise PermissionDenied(AUDIT_VERIFY_DENIED)
    last = AuditEvent.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    key = f"dash:audit-verify:{last}"
    report = cache.get(key)
    if report is None:
        result = audit_verify_chain()
        report = {"ok": result.ok, "checked": result.checked, "first_bad_id": result.first_bad_id,
                  "problem": result.problem, "last": last}
        cache.set(key, report, VERIFY_CACHE_SECONDS)
    return page(request, "dashboard/governance/_verify.html", {"report": report})


@require_POST
@dashboard_view()
def grant_create(request):
    try:
        name = request.POST.get("principal", "").strip()
        principal = Principal.objects.filter(name=name).first()
        if principal is None:
            raise InvalidInput(UNKNOWN_PRINCIPAL, field="principal")
        scope = Scope.objects.filter(path=request.POST.get("grant_scope", "")).first()
        # An unknown scope and one the user cannot see get the same answer (no enumeration).
        if scope is None or not can(request.principal, scope, Action.READ):
            raise InvalidInput(UNKNOWN_SCOPE, field="grant_scope")
        grant_add(principal=principal, scope=scope, role=request.POST.get("role", ""), actor=request.principal)
    except DomainError as exc:
        return _render(request, error=exc, status=exc.status)
    messages.success(request, f"Granted {request.POST.get('role')} on {scope.path} to {principal.name}.")
    return redirect("/governance/" + scope_query(request))


@require_POST
@dashboard_view()
def grant_delete(request):
    try:
        try:
            grant_id = int(request.POST.get("grant", ""))
        except ValueError as exc:
            raise InvalidInput(BAD_GRANT_ID, field="grant") from exc
        grant_revoke(grant_id=grant_id, actor=request.principal, reason=request.POST.get("reason", "").strip())
    except DomainError as exc:
        return _render(request, error=exc, status=exc.status)
    messages.success(request, "Grant revoked.")
    return redirect("/governance/" + scope_query(request))


@require_POST
@dashboard_view()
def token_delete(request):
    """Revoke an API token: its own principal or an owner over the token's scope (permissions.can_revoke_token)."""
    try:
        try:
            token_id = int(request.POST.get("token", ""))
        except ValueError as exc:
            raise InvalidInput(BAD_TOKEN_ID, field="token") from exc
        token = token_revoke(token_id=token_id, actor=request.principal)
    except DomainError as exc:
        return _render(request, error=exc, status=exc.status)
    messages.success(request, f"Token {token.prefix}… of {token.principal.name} revoked.")
    return redirect("/governance/" + scope_query(request))
