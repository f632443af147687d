"""Governance: grants per scope (and who may change them), the audit log with the chain's state, and the
propagation of recent changes to each derived store."""

from __future__ import annotations

from django.contrib import messages
from django.core.cache import cache
from django.http import HttpResponseNotAllowed
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from governance.errors import DomainError, InvalidInput, LastOwner, NotFound, PermissionDenied
from governance.models import AuditEvent, Grant, Principal, Role, Scope
from governance.permissions import (
    AUDIT_VERIFY_DENIED,
    LAST_OWNER,
    Action,
    can,
    can_grant,
    can_verify_audit,
    owner_left,
    principal_visible,
    principals_visible_to,
)
from governance.selectors import dashboard as sel
from governance.services.audit import audit_verify_chain
from governance.services.principal import grant_add, grant_revoke, token_revoke
from memoryui.views.base import dashboard_view, page, page_links, scope_query

UNKNOWN_PRINCIPAL = "No user, team or agent has that name."
UNKNOWN_SCOPE = "Choose one of the scopes you own."
BAD_GRANT_ID = "grant is a whole number."
BAD_TOKEN_ID = "token is a whole number."
REVOKE_REASON_REQUIRED = "Say why the grant is revoked; the reason goes into the audit log."
PICKER_LIMIT = 500  # the "who" picker lists at most this many names; a longer list is typed and checked
VERIFY_CACHE_SECONDS = 600


def _audit_filters(request) -> sel.AuditFilters:
    g = request.GET
    return sel.AuditFilters(action=g.get("action", "")[:50], actor=g.get("actor", "")[:150],
                            target=g.get("target", "")[:64])


def _grant_rows(request, roles: sel.MyRoles) -> list[dict]:
    rows = []
    for grant in sel.grants_in(request.principal, request.scope):
        may_revoke = roles.may_grant(grant.scope, grant.role)
        # One's own last owner grant is not offered (the service would refuse it anyway); only the
        # viewer's own owner grants are checked here, so the page's query count stays bounded.
        last_owner = (may_revoke and grant.role == Role.OWNER and grant.principal_id == request.principal.pk
                      and not owner_left(grant.scope, without_grant=grant.pk))
        rows.append({"grant": grant, "may_revoke": may_revoke and not last_owner, "last_owner": last_owner})
    return rows


@dashboard_view()
def governance(request):
    return _render(request)


def _render(request, error: DomainError | None = None, status: int = 200):
    roles = sel.MyRoles.of(request.principal)
    scopes = sel.governed_scopes_within(request.principal, request.scope).order_by("path")
    owned = [s for s in scopes if roles.can(s, Action.MANAGE_GRANTS)]
    filters = _audit_filters(request)
    audit = sel.audit_page(request.principal, request.scope, filters, request.GET.get("page", 1))
    context = {
        "grants": _grant_rows(request, roles), "owned_scopes": owned,
        "grantable_roles": [r for r in Role if any(roles.may_grant(s, r) for s in owned)],
        "known_principals": (list(principals_visible_to(request.principal).order_by("name")
                                  .values_list("name", "kind")[:PICKER_LIMIT]) if owned else []),
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
        # A principal the viewer may not know of gets the same answer as an unknown name.
        if principal is None or not principal_visible(request.principal, principal):
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


def _grant_to_revoke(request, raw: str) -> Grant:
    """The grant named in the request, if the viewer could revoke it; anything else is a NotFound."""
    try:
        grant_id = int(raw)
    except ValueError as exc:
        raise InvalidInput(BAD_GRANT_ID, field="grant") from exc
    grant = Grant.objects.select_related("scope", "principal").filter(pk=grant_id).first()
    if grant is None or not can(request.principal, grant.scope, Action.READ):
        raise NotFound()
    return grant


@dashboard_view()
def grant_delete(request):
    """Revoke a grant in two steps: GET shows what would be revoked and asks for a reason (and says so
    at once when it is the scope's last owner); POST with the reason revokes it through the service,
    which decides (a last owner is a 409 with LAST_OWNER whatever the page showed)."""
    if request.method not in ("GET", "POST"):
        return HttpResponseNotAllowed(["GET", "POST"])
    data = request.POST if request.method == "POST" else request.GET
    try:
        grant = _grant_to_revoke(request, data.get("grant", ""))
        if not can_grant(request.principal, grant.scope, grant.role):
            raise PermissionDenied()
    except DomainError as exc:
        return _render(request, error=exc, status=exc.status)
    reason = data.get("reason", "").strip()
    error: DomainError | None = None
    if request.method == "POST":
        try:
            if not reason:
                raise InvalidInput(REVOKE_REASON_REQUIRED, field="reason")
            grant_revoke(grant_id=grant.pk, actor=request.principal, reason=reason)
        except DomainError as exc:
            error = exc
        else:
            messages.success(request, f"Revoked {grant.role} of {grant.principal.name} on {grant.scope.path}.")
            return redirect("/governance/" + scope_query(request))
    elif grant.role == Role.OWNER and not owner_left(grant.scope, without_grant=grant.pk):
        error = LastOwner(LAST_OWNER.format(path=grant.scope.path))
    blocked = error is not None and error.code == LastOwner.code
    return page(request, "dashboard/governance/revoke.html",
                {"g": grant, "reason": reason, "error": error, "blocked": blocked, "nav": "governance"},
                status=error.status if error is not None and request.method == "POST" else 200)


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
