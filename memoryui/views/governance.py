"""Governance, in three tabs with URLs of their own: grants per scope (and who may change them) with API
tokens; the audit log (filters, a date range, keyset pages) with the chain's state; and propagation (outbox
lag, per-store delivery states, failed deliveries with their errors). `/governance/` opens the first."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseNotAllowed
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from governance.errors import DomainError, InvalidInput, LastOwner
from governance.models import AuditEvent, Grant, Role
from governance.permissions import (
    LAST_OWNER,
    NO_GRANT,
    Action,
    can_verify_audit,
    grant_for_reader,
    principal_by_name,
    principals_visible_to,
    require_grant,
    require_verify_audit,
    revoke_leaves_no_owner,
    scope_by_path,
    standings,
)
from governance.runtime import dates
from governance.runtime.degraded import cache_get, cache_set
from governance.selectors import dashboard as sel
from governance.services.audit import audit_verify_chain
from governance.services.principal import (  # noqa: F401  (the token's sentence, where tests find it)
    GRANT_REVOKE_REASON_REQUIRED,
    TOKEN_REVOKE_REASON_REQUIRED,
    grant_add,
    grant_revoke,
    token_revoke,
)
from memoryui.forms.governance import (  # noqa: F401  (the messages tests reuse, where they were)
    BAD_CURSOR,
    BAD_DATE,
    BAD_GRANT_ID,
    BAD_RANGE,
    BAD_TOKEN_ID,
    AuditFilterForm,
    GrantAddForm,
    GrantRevokeForm,
    TokenRevokeForm,
)
from memoryui.views.base import cleaned, dashboard_view, page, scope_query

UNKNOWN_PRINCIPAL = "No user, team or agent has that name."
UNKNOWN_SCOPE = "Choose one of the scopes you own."
REVOKE_REASON_REQUIRED = GRANT_REVOKE_REASON_REQUIRED  # the service's rule, for the API and this page alike
PICKER_LIMIT = 500  # the "who" picker lists at most this many names; a longer list is typed and checked
VERIFY_CACHE_SECONDS = 600
GRANTS_URL = "/governance/grants/"


def _audit_filters(query: dict) -> sel.AuditFilters:
    """The filters of AuditFilterForm; `from`/`to` are whole days in the viewer's time zone, both included."""
    since, until = dates.day_range(query["from"], query["to"])
    return sel.AuditFilters(
        action=query["action"], actor=query["actor"], target=query["target"], since=since, until=until
    )


def _tab_links(request, query: dict, audit: sel.AuditPage) -> dict:
    """Newer/older links that keep the scope and every filter of AuditFilterForm and swap the cursor."""
    kept = {"scope": request.scope.path} if request.scope else {}
    kept.update({k: query[k] for k in ("action", "actor", "target") if query[k]})
    kept.update({k: query[k].isoformat() for k in ("from", "to") if query[k]})
    links = {}
    for name, key, value in (("newer", "after", audit.newer), ("older", "before", audit.older)):
        if value is not None:
            links[name] = "?" + urlencode({**kept, key: sel.audit_cursor(value)})
    return links


def _grant_rows(request, roles: sel.MyRoles) -> list[dict]:
    rows = []
    for grant in sel.grants_in(request.principal, request.scope):
        may_revoke = roles.may_grant(grant.scope, grant.role)
        # One's own last owner grant is not offered (the service would refuse it anyway); only the
        # viewer's own owner grants are checked here, so the page's query count stays bounded.
        last_owner = (
            may_revoke and grant.principal_id == request.principal.pk and revoke_leaves_no_owner(grant)
        )
        rows.append({"grant": grant, "may_revoke": may_revoke and not last_owner, "last_owner": last_owner})
    return rows


@login_required
def governance_index(request):
    """The old single page's URL opens the first tab, keeping the query string (scope and filters)."""
    query = request.META.get("QUERY_STRING", "")
    return redirect(GRANTS_URL + (f"?{query}" if query else ""))


@dashboard_view()
def governance(request):
    """The grants tab: grants per scope, the add form for owners, API tokens."""
    return _render(request)


def _render(request, error: DomainError | None = None, status: int = 200):
    roles = sel.MyRoles.of(request.principal)
    scopes = sel.governed_scopes_within(request.principal, request.scope).order_by("path")
    owned = [s for s in scopes if roles.can(s, Action.MANAGE_GRANTS)]
    context = {
        "grants": _grant_rows(request, roles),
        "owned_scopes": owned,
        "grantable_roles": [r for r in Role if any(roles.may_grant(s, r) for s in owned)],
        "known_principals": (
            list(
                principals_visible_to(request.principal)
                .order_by("name")
                .values_list("name", "kind")[:PICKER_LIMIT]
            )
            if owned
            else []
        ),
        "tokens": sel.tokens_in(request.principal, request.scope),
        # Nothing to change here: say what the person can do and whom to ask (permissions.standings).
        "standing": [] if owned else standings(request.principal),
        "no_grant": NO_GRANT,
        "error": error,
        "nav": "governance",
        "tab": "grants",
    }
    return page(request, "dashboard/governance/grants.html", context, status=status)


@dashboard_view()
def governance_audit(request):
    """The audit tab: newest first, by action, actor, target and date range, in keyset pages."""
    query = cleaned(AuditFilterForm(request.GET))
    filters = _audit_filters(query)
    audit = sel.audit_page(
        request.principal, request.scope, filters, before=query["before"], after=query["after"]
    )
    context = {
        "audit": audit,
        "links": _tab_links(request, query, audit),
        "filters": filters,
        "actions": sel.audit_actions(),
        "from": query["from"].isoformat() if query["from"] else "",
        "to": query["to"].isoformat() if query["to"] else "",
        "can_verify_audit": can_verify_audit(request.principal),
        "nav": "governance",
        "tab": "audit",
    }
    if request.htmx and request.htmx.target == "audit-log":
        return page(request, "dashboard/governance/_audit.html", context)
    return page(request, "dashboard/governance/audit.html", context)


@dashboard_view()
def governance_propagation(request):
    """The propagation tab: how far behind the outbox is, each store's open deliveries, what failed and why."""
    return page(
        request,
        "dashboard/governance/propagation.html",
        {
            "lag": sel.outbox_lag(),
            "stores": sel.store_states(),
            "failed": sel.failed_deliveries(request.principal, request.scope),
            "propagation": sel.recent_propagation(request.principal, request.scope),
            "health": sel.propagation_health(),
            "nav": "governance",
            "tab": "propagation",
        },
    )


@dashboard_view()
def audit_verify(request):
    """The chain's state, verified at most once per new event (walking it costs time on a long log).
    Offered to whom the API offers it (permissions.can_verify_audit)."""
    require_verify_audit(request.principal)
    last = AuditEvent.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    key = f"dash:audit-verify:{last}"
    report = cache_get(key)
    if report is None:
        result = audit_verify_chain()
        report = {
            "ok": result.ok,
            "checked": result.checked,
            "first_bad_id": result.first_bad_id,
            "problem": result.problem,
            "last": last,
        }
        cache_set(key, report, VERIFY_CACHE_SECONDS)
    return page(request, "dashboard/governance/_verify.html", {"report": report})


@require_POST
@dashboard_view()
def grant_create(request):
    try:
        data = cleaned(GrantAddForm(request.POST))
        # An unknown scope and one the user cannot see get the same answer (no enumeration).
        scope = scope_by_path(
            request.principal, data["grant_scope"], missing=InvalidInput(UNKNOWN_SCOPE, field="grant_scope")
        )
        # A principal the viewer may not know of, or another workspace's team: the answer for an unknown name.
        principal = principal_by_name(
            request.principal,
            data["principal"],
            workspace=scope.workspace_id,
            missing=InvalidInput(UNKNOWN_PRINCIPAL, field="principal"),
        )
        grant_add(principal=principal, scope=scope, role=data["role"], actor=request.principal)
    except DomainError as exc:
        return _render(request, error=exc, status=exc.status)
    messages.success(request, f"Granted {data['role']} on {scope.path} to {principal.name}.")
    return redirect(GRANTS_URL + scope_query(request))


def _grant_to_revoke(request, grant_id: int) -> Grant:
    """The grant named in the request, if the viewer could revoke it: one it cannot see is a NotFound,
    one above its rank a refusal with the reason (permissions.require_grant, as grant_revoke asks)."""
    grant = grant_for_reader(request.principal, grant_id)
    require_grant(request.principal, grant.scope, grant.role)
    return grant


@dashboard_view()
def grant_delete(request):
    """Revoke a grant in two steps: GET shows what would be revoked and asks for a reason (and says so
    at once when it is the scope's last owner); POST with the reason revokes it through the service,
    which decides (an empty reason is a 400, a last owner a 409 with LAST_OWNER, whatever the page
    showed; the API's DELETE grants/{id} answers the same)."""
    if request.method not in ("GET", "POST"):
        return HttpResponseNotAllowed(["GET", "POST"])
    posted = request.method == "POST"
    try:
        # The confirm page's GET names the grant; its POST adds the reason.
        data = cleaned(GrantRevokeForm(request.POST) if posted else GrantRevokeForm(request.GET))
        grant = _grant_to_revoke(request, data["grant"])
    except DomainError as exc:
        return _render(request, error=exc, status=exc.status)
    error: DomainError | None = None
    if posted:
        try:
            grant_revoke(grant_id=grant.pk, actor=request.principal, reason=data["reason"])
        except DomainError as exc:
            error = exc
        else:
            messages.success(
                request, f"Revoked {grant.role} of {grant.principal.name} on {grant.scope.path}."
            )
            return redirect(GRANTS_URL + scope_query(request))
    elif revoke_leaves_no_owner(grant):
        error = LastOwner(LAST_OWNER.format(path=grant.scope.path))
    blocked = error is not None and error.code == LastOwner.code
    return page(
        request,
        "dashboard/governance/revoke.html",
        {"g": grant, "reason": data["reason"], "error": error, "blocked": blocked, "nav": "governance"},
        status=error.status if error is not None and request.method == "POST" else 200,
    )


@dashboard_view()
def token_delete(request):
    """Revoke an API token in two steps, like a grant: GET names the token and asks for a reason; POST with
    the reason revokes it through the service (its own principal or an owner over the token's scope,
    permissions.can_revoke_token), which refuses an empty reason as the API's DELETE tokens/{id} does."""
    if request.method not in ("GET", "POST"):
        return HttpResponseNotAllowed(["GET", "POST"])
    posted = request.method == "POST"
    try:
        data = cleaned(TokenRevokeForm(request.POST) if posted else TokenRevokeForm(request.GET))
        token = sel.token_to_revoke(request.principal, data["token"])
    except DomainError as exc:
        return _render(request, error=exc, status=exc.status)
    error: DomainError | None = None
    if posted:
        try:
            token = token_revoke(token_id=token.pk, actor=request.principal, reason=data["reason"])
        except DomainError as exc:
            error = exc
        else:
            messages.success(
                request, f"Token {token.prefix}… of {token.principal.name} revoked: it no longer works."
            )
            return redirect(GRANTS_URL + scope_query(request))
    return page(
        request,
        "dashboard/governance/revoke_token.html",
        {"t": token, "reason": data["reason"], "error": error, "nav": "governance"},
        status=error.status if error is not None else 200,
    )
