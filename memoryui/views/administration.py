"""Administration pages: workspaces (list, create for site administrators, rename), one Members page per
workspace (the role matrix: who can do what where, with adding people, invitations, teams and new
scopes), the scope settings page (rename, move, archive, four-eyes, agent write policy, child scopes,
retention), and the invitation page a new person opens. Every change is one service call; every rule
is asked of governance.permissions."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_POST

from governance.errors import DomainError, InvalidInput, NotFound
from governance.models import AgentWrite, Kind, Principal, PrincipalKind, RetentionPolicy, Role, Scope
from governance.permissions import (
    NO_GRANT,
    PERMISSION_WORDS,
    Action,
    RoleMap,
    can_create_team,
    is_site_admin,
    principal_by_name,
    principals_visible_to,
    scope_by_id,
    scope_by_path,
    standings,
    team_by_name,
)
from governance.selectors.members import scope_state, workspace_for, workspace_members, workspaces_for
from governance.services import grant_membership, scope_admin
from governance.services import invitation as invitations
from governance.services.principal import grant_add
from governance.services.retention import retention_policy_set
from governance.services.scope import scope_create_child
from governance.services.workspace import workspace_create, workspace_rename
from memoryui.forms import administration as admin_forms
from memoryui.forms.administration import InvitationForm
from memoryui.views.base import cleaned, dashboard_view, page

UNKNOWN_PRINCIPAL = "No user, team or agent has that name."
UNKNOWN_SCOPE = "Choose one of the scopes listed."
PICKER_LIMIT = 500


def _principal(actor, workspace, name: str, field: str = "principal", kinds=None) -> Principal:
    """A principal the actor may know of that this workspace may name (a team: of this workspace);
    anything else is the same answer as an unknown name."""
    return principal_by_name(
        actor, name, workspace=workspace, kinds=kinds, missing=InvalidInput(UNKNOWN_PRINCIPAL, field=field)
    )


PEOPLE = (PrincipalKind.USER, PrincipalKind.AGENT)  # who joins a team


def _scope_in(actor, workspace, path: str, field: str = "scope") -> Scope:
    """A scope of this workspace the actor holds a role on; anything else is one answer."""
    return scope_by_path(actor, path, workspace=workspace, missing=InvalidInput(UNKNOWN_SCOPE, field=field))


# --- Workspaces -----------------------------------------------------------------------------------------


@dashboard_view()
def workspaces(request: HttpRequest) -> HttpResponse:
    return _workspaces_page(request)


def _workspaces_page(request, error: DomainError | None = None, status: int = 200) -> HttpResponse:
    return page(
        request,
        "dashboard/admin/workspaces.html",
        {
            "workspaces": list(workspaces_for(request.principal)),
            "may_create": is_site_admin(request.principal),
            "standing": [] if is_site_admin(request.principal) else standings(request.principal),
            "no_grant": NO_GRANT,
            "error": error,
            "nav": "admin",
        },
        status=status,
    )


@require_POST
@dashboard_view()
def workspace_new(request: HttpRequest) -> HttpResponse:
    try:
        data = cleaned(admin_forms.WorkspaceNewForm(request.POST))
        workspace = workspace_create(slug=data["slug"], name=data["name"], actor=request.principal)
    except DomainError as exc:
        return _workspaces_page(request, exc, exc.status)
    messages.success(request, f"Workspace {workspace.slug} created; you own it.")
    return redirect("dashboard:members", slug=workspace.slug)


# --- Members --------------------------------------------------------------------------------------------


@dashboard_view()
def members(request: HttpRequest, slug: str) -> HttpResponse:
    invited, link = _invitation_shown(request)
    response = _members_page(request, slug, invited=invited, invitation_link=link)
    if link:  # the page holding the one copy of the link is kept by no cache, the browser's included
        patch_cache_control(response, no_store=True)
    return response


def _members_page(
    request,
    slug: str,
    error: DomainError | None = None,
    status: int = 200,
    invitation_link: str = "",
    invited: int | None = None,
) -> HttpResponse:
    workspace = workspace_for(request.principal, slug)
    within = (
        request.scope if request.scope is not None and request.scope.workspace_id == workspace.pk else None
    )
    data = workspace_members(request.principal, workspace, within)
    for row in data.rows:
        row.pairs = list(zip(data.scopes, row.cells, strict=True))
    roles = RoleMap.of(request.principal)
    grantable = [r for r in Role if any(roles.may_grant(s, r) for s in data.administered)]
    openable = [s for s in data.scopes if s.archived_at is None and roles.can(s, Action.WRITE_CANDIDATE)]
    return page(
        request,
        "dashboard/admin/members.html",
        {
            "workspace": workspace,
            "m": data,
            "scope_columns": data.scopes,
            "within": within,
            "grantable_roles": grantable,
            "openable": openable,
            "known_principals": (
                list(
                    principals_visible_to(request.principal, workspace)
                    .order_by("name")
                    .values_list("name", "kind")[:PICKER_LIMIT]
                )
                if data.administered
                else []
            ),
            "may_create_team": can_create_team(request.principal, workspace),
            "may_rename": bool(data.scopes)
            and data.scopes[0].parent_id is None
            and roles.can(data.scopes[0], Action.MANAGE_POLICY),
            "permission_words": list(PERMISSION_WORDS),
            "role_words": _role_words(),
            "error": error,
            "invitation_link": invitation_link,
            # The invitation just made, when the viewer may see it among the open ones.
            "invited": next((i for i in data.invitations if i.pk == invited), None),
            "standing": [] if data.administered else standings(request.principal),
            "nav": "admin",
        },
        status=status,
    )


def _role_words() -> list[tuple[str, list[str]]]:
    from governance.permissions import role_permissions

    return [(r.value, role_permissions({r.value})) for r in Role]


def _members_action(request, slug: str, act) -> HttpResponse:
    """Run one change for the Members page: on success back to the page with a message, on a refusal the
    page again with the reason and its status (nothing changed)."""
    try:
        workspace = workspace_for(request.principal, slug)
        result = act(workspace)
    except DomainError as exc:
        if isinstance(exc, NotFound):
            raise
        return _members_page(request, slug, exc, exc.status)
    if isinstance(result, HttpResponse):
        return result
    messages.success(request, result)
    return redirect("dashboard:members", slug=result_slug(request, slug))


def result_slug(request, slug: str) -> str:
    return getattr(request, "_new_slug", slug)


@require_POST
@dashboard_view()
def member_add(request: HttpRequest, slug: str) -> HttpResponse:
    def act(workspace):
        data = cleaned(admin_forms.MemberAddForm(request.POST))
        who = _principal(request.principal, workspace, data["principal"])
        scope = _scope_in(request.principal, workspace, data["grant_scope"], "grant_scope")
        role = data["role"]
        grant_add(principal=who, scope=scope, role=role, actor=request.principal)
        return f"{who.name} is now {role} on {scope.path}."

    return _members_action(request, slug, act)


# The raw link of a new invitation waits in the (server-side) session for the one page that follows the
# POST, under the invitation's id; that page takes it out, so a reload shows it no more and makes nothing.
INVITATION_LINKS = "invitation_links"


@require_POST
@dashboard_view()
def invitation_new(request: HttpRequest, slug: str) -> HttpResponse:
    def act(workspace):
        data = cleaned(InvitationForm(request.POST))
        scope = _scope_in(request.principal, workspace, data["invite_scope"], "invite_scope")
        invitation, raw = invitations.invitation_create(
            scope=scope,
            role=data["role"],
            actor=request.principal,
            note=data["note"],
            expires_in_days=data["days"],
        )
        # Only its hash is stored; the raw token reaches no URL and no later page.
        request.session[INVITATION_LINKS] = {str(invitation.pk): raw}
        return redirect(reverse("dashboard:members", args=[workspace.slug]) + f"?invited={invitation.pk}")

    return _members_action(request, slug, act)


def _invitation_shown(request) -> tuple[int | None, str]:
    """The invitation just made (`?invited=<id>`) and its link if this is the first page to show it. Any
    Members page takes the waiting link out of the session, shown or not."""
    links = request.session.pop(INVITATION_LINKS, None) or {}
    form = admin_forms.MembersPageForm(request.GET)
    invited = form.cleaned_data["invited"] if form.is_valid() else None  # a bad one shows none
    if invited is None:
        return None, ""
    raw = links.get(str(invited), "")
    return invited, request.build_absolute_uri(reverse("dashboard:invite", args=[raw])) if raw else ""


@require_POST
@dashboard_view()
def invitation_withdraw(request: HttpRequest, slug: str) -> HttpResponse:
    def act(workspace):
        invitation_id = cleaned(admin_forms.InvitationWithdrawForm(request.POST))["invitation"]
        invitations.invitation_revoke(invitation_id=invitation_id, actor=request.principal)
        return "Invitation withdrawn."

    return _members_action(request, slug, act)


@require_POST
@dashboard_view()
def team_new(request: HttpRequest, slug: str) -> HttpResponse:
    def act(workspace):
        data = cleaned(admin_forms.TeamNewForm(request.POST))
        team = grant_membership.team_create(name=data["team"], workspace=workspace, actor=request.principal)
        return f"Team {team.name} created; give it a role with “Add people”."

    return _members_action(request, slug, act)


def _team_and_member(actor, workspace, data: dict) -> tuple[Principal, Principal]:
    team = team_by_name(
        actor, data["team"], workspace=workspace, missing=InvalidInput(UNKNOWN_PRINCIPAL, field="team")
    )
    return team, _principal(actor, workspace, data["member"], "member", PEOPLE)


@require_POST
@dashboard_view()
def team_member_add(request: HttpRequest, slug: str) -> HttpResponse:
    def act(workspace):
        data = cleaned(admin_forms.TeamMemberAddForm(request.POST))
        team, member = _team_and_member(request.principal, workspace, data)
        grant_membership.group_member_add(group=team, member=member, actor=request.principal)
        return f"{member.name} joined {team.name}."

    return _members_action(request, slug, act)


@require_POST
@dashboard_view()
def team_member_remove(request: HttpRequest, slug: str) -> HttpResponse:
    def act(workspace):
        data = cleaned(admin_forms.TeamMemberRemoveForm(request.POST))
        team, member = _team_and_member(request.principal, workspace, data)
        grant_membership.group_member_remove(
            group=team, member=member, actor=request.principal, reason=data["reason"]
        )
        return f"{member.name} left {team.name}."

    return _members_action(request, slug, act)


@require_POST
@dashboard_view()
def scope_new(request: HttpRequest, slug: str) -> HttpResponse:
    def act(workspace):
        data = cleaned(admin_forms.ScopeNewForm(request.POST))
        parent = _scope_in(request.principal, workspace, data["parent"], "parent")
        scope, created = scope_create_child(parent=parent, name=data["name"], actor=request.principal)
        return f"Scope {scope.path} {'opened' if created else 'already exists'}."

    return _members_action(request, slug, act)


@require_POST
@dashboard_view()
def workspace_edit(request: HttpRequest, slug: str) -> HttpResponse:
    def act(workspace):
        data = cleaned(admin_forms.WorkspaceEditForm(request.POST))
        renamed = workspace_rename(
            workspace=workspace, actor=request.principal, name=data["name"] or None, slug=data["slug"] or None
        )
        request._new_slug = renamed.slug
        return f"Workspace renamed: {renamed.slug} ({renamed.name})."

    return _members_action(request, slug, act)


# --- Scope settings -------------------------------------------------------------------------------------


def _settings_scope(request, scope_id: int) -> Scope:
    return scope_by_id(request.principal, scope_id)


@dashboard_view()
def scope_settings(request: HttpRequest, scope_id: int) -> HttpResponse:
    return _settings_page(request, _settings_scope(request, scope_id))


def _settings_page(
    request, scope: Scope, error: DomainError | None = None, status: int = 200
) -> HttpResponse:
    roles = RoleMap.of(request.principal)
    administered = roles.can(scope, Action.MANAGE_POLICY)
    parents = (
        [
            s
            for s in Scope.objects.filter(workspace=scope.workspace)
            .exclude(tree__descendant_of=scope.tree)
            .order_by("path")
            if roles.can(s, Action.MANAGE_POLICY)
        ]
        if administered
        else []
    )
    return page(
        request,
        "dashboard/admin/scope_settings.html",
        {
            "s": scope,
            "state": scope_state(scope),
            "administered": administered,
            "parents": parents,
            "policy": RetentionPolicy.objects.filter(scope=scope).first(),
            "kinds": Kind.values,
            "agent_write_choices": AgentWrite.choices,
            "child_roles": [("", "site default")]
            + [(r, r) for r in (Role.AGENT, Role.REVIEWER, Role.CURATOR, Role.OWNER)],
            "error": error,
            "nav": "admin",
        },
        status=status,
    )


@require_POST
@dashboard_view()
def scope_settings_change(request: HttpRequest, scope_id: int) -> HttpResponse:
    """One form per change (the button's `action`): each calls its one service."""
    scope = _settings_scope(request, scope_id)
    actor = request.principal
    try:
        action = cleaned(admin_forms.ScopeActionForm(request.POST))["action"]
        if action == "rename":
            name = cleaned(admin_forms.ScopeRenameForm(request.POST))["name"]
            scope = scope_admin.scope_rename(scope=scope, name=name, actor=actor)
            done = f"Renamed to {scope.path}."
        elif action == "move":
            path = cleaned(admin_forms.ScopeMoveForm(request.POST))["parent"]
            parent = _scope_in(actor, scope.workspace, path, "parent")
            scope = scope_admin.scope_move(scope=scope, new_parent=parent, actor=actor)
            done = f"Moved to {scope.path}."
        elif action in ("archive", "restore"):
            reason = cleaned(admin_forms.ScopeArchiveForm(request.POST))["reason"]
            change = scope_admin.scope_archive if action == "archive" else scope_admin.scope_restore
            change(scope=scope, actor=actor, reason=reason)
            done = (
                f"{scope.path} {'archived: it takes no new writes' if action == 'archive' else 'restored'}."
            )
        elif action == "settings":
            data = cleaned(admin_forms.ScopeSettingsForm(request.POST))
            scope_admin.scope_settings_set(
                scope=scope,
                actor=actor,
                require_two_reviewers=data["require_two_reviewers"],
                agent_write=scope.agent_write if data["agent_write"] is None else data["agent_write"],
                child_scope_role=(
                    scope.child_scope_role if data["child_scope_role"] is None else data["child_scope_role"]
                ),
                reason=data["reason"],
            )
            done = "Settings saved."
        else:
            retention_policy_set(scope=scope, actor=actor, **cleaned(admin_forms.RetentionForm(request.POST)))
            done = "Retention policy saved."
    except DomainError as exc:
        if isinstance(exc, NotFound):
            raise
        return _settings_page(request, _settings_scope(request, scope_id), exc, exc.status)
    messages.success(request, done)
    return redirect("dashboard:scope-settings", scope_id=scope.pk)


# --- The invitation link (no sign-in) -------------------------------------------------------------------


def invite(request: HttpRequest, token: str) -> HttpResponse:
    """GET: what the link invites to; POST: choose a user name and password, then sign in."""
    error: DomainError | None = None
    try:
        invitation = invitations.invitation_for_token(token)
    except DomainError as exc:
        return render(
            request, "dashboard/admin/invite.html", {"error": exc, "invalid": True}, status=exc.status
        )
    username = ""
    if request.method == "POST":
        try:
            data = cleaned(admin_forms.InviteAcceptForm(request.POST))
            username = data["username"]
            invitations.invitation_accept(token=token, username=username, password=data["password"])
        except DomainError as exc:
            error = exc
        else:
            messages.success(request, "Your account is ready: sign in.")
            return redirect("login")
    response = render(
        request,
        "dashboard/admin/invite.html",
        {"invitation": invitation, "error": error, "username": username},
        status=error.status if error else 200,
    )
    # The token is in this page's URL: no Referer carries it on, no cache keeps the page.
    response["Referrer-Policy"] = "no-referrer"
    patch_cache_control(response, no_store=True)
    return response
