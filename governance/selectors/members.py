"""Who can do what where in a workspace: the role matrix (principals × the scopes the viewer governs),
the workspace's teams with their members, and its open invitations. Shared by the Members page and
GET /api/v1/workspaces/{slug}/members; every rule is asked of governance.permissions."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from governance.errors import NotFound
from governance.models import Invitation, Principal, PrincipalKind, Scope, Workspace
from governance.permissions import (
    Action,
    RoleMap,
    governed_scopes,
    highest_rank,
    is_site_admin,
    role_matrix,
    role_permissions,
    workspace_by_slug,
)


def workspaces_for(principal: Principal | None) -> QuerySet[Workspace]:
    """Workspaces where the principal holds a role somewhere (a site administrator: every workspace)."""
    if is_site_admin(principal):
        return Workspace.objects.all().order_by("slug")
    ids = governed_scopes(principal).values("workspace_id")
    return Workspace.objects.filter(pk__in=ids).order_by("slug")


def workspace_for(principal: Principal | None, slug: str) -> Workspace:
    """The workspace `slug` if the principal holds a role in it; the same NotFound otherwise (the
    resolver's answer: permissions.workspace_by_slug)."""
    return workspace_by_slug(principal, slug)


@dataclass
class Cell:
    roles: list[str]  # highest first
    permissions: list[str]  # read, propose, confirm, revoke, administer
    via: list[str]


@dataclass
class MemberRow:
    principal: Principal
    cells: list[Cell | None]  # one per scope of the matrix, None: no role there
    teams: list[str] = field(default_factory=list)


# The matrix's columns at most: a workspace of thousands of task scopes is read a subtree at a time.
MATRIX_MAX_SCOPES = 100


@dataclass
class Members:
    workspace: Workspace
    scopes: list[Scope]
    total_scopes: int  # in the matrix before the MATRIX_MAX_SCOPES cap
    rows: list[MemberRow]
    teams: list[tuple[Principal, list[Principal]]]
    invitations: list[Invitation]
    administered: list[Scope]  # scopes of the matrix where the viewer may change grants


def _cell(cell) -> Cell:
    roles = sorted(cell.roles, key=lambda r: -highest_rank({r}))
    return Cell(roles=roles, permissions=role_permissions(cell.roles), via=cell.via)


def workspace_members(viewer: Principal | None, workspace: Workspace, within: Scope | None = None) -> Members:
    """The matrix over the scopes of `workspace` the viewer governs (its grants' subtrees; only `within`'s
    subtree when given), in tree order, at most MATRIX_MAX_SCOPES of them. A fixed number of queries
    whatever the size of the workspace."""
    governed = governed_scopes(viewer, within=within).filter(workspace=workspace)
    total = governed.count()
    if total == 0:
        if not is_site_admin(viewer):
            raise NotFound()
        governed = Scope.objects.filter(workspace=workspace)
        if within is not None:
            governed = governed.filter(tree__descendant_of=within.tree)
        total = governed.count()
    scopes = list(governed.order_by("path")[:MATRIX_MAX_SCOPES])
    matrix = role_matrix(scopes)
    principals = {
        p.pk: p
        for p in Principal.objects.filter(pk__in=matrix).prefetch_related(
            Prefetch("groups", queryset=Principal.objects.only("pk", "name"))
        )
    }
    rows = [
        MemberRow(
            principal=principals[pid],
            teams=[g.name for g in principals[pid].groups.all()],
            cells=[_cell(cells[s.pk]) if s.pk in cells else None for s in scopes],
        )
        for pid, cells in matrix.items()
        if pid in principals
    ]
    order = {PrincipalKind.USER: 0, PrincipalKind.GROUP: 1, PrincipalKind.AGENT: 2}
    rows.sort(key=lambda r: (order.get(r.principal.kind, 3), r.principal.name))
    teams = [
        (r.principal, [m.principal for m in rows if r.principal.name in m.teams])
        for r in rows
        if r.principal.kind == PrincipalKind.GROUP
    ]
    # This workspace's teams without a grant yet, so they can be given members and roles (another
    # workspace's never: a team belongs to its home workspace only).
    teams += [
        (t, list(t.members.all()))
        for t in Principal.objects.filter(kind=PrincipalKind.GROUP, workspace=workspace, grants__isnull=True)
        .prefetch_related("members")
        .order_by("name")[:100]
    ]
    roles = RoleMap.of(viewer) if viewer is not None else None
    administered = [s for s in scopes if roles is None or roles.can(s, Action.MANAGE_GRANTS)]
    invitations = list(
        Invitation.objects.filter(
            scope__in=administered,
            accepted_at__isnull=True,
            revoked_at__isnull=True,
            expires_at__gt=timezone.now(),
        )
        .select_related("scope", "created_by")
        .order_by("-created_at")[:100]
    )
    return Members(
        workspace=workspace,
        scopes=scopes,
        total_scopes=total,
        rows=rows,
        teams=teams,
        invitations=invitations,
        administered=administered,
    )


@dataclass
class ScopeState:
    """A scope's own settings and those in force on it (set on it or inherited from above)."""

    archived: bool
    four_eyes: bool
    agent_write_in_force: str
    child_scope_role_in_force: str


def scope_state(scope: Scope) -> ScopeState:
    from governance.permissions import (
        agent_write_policy,
        archived_scope,
        child_scope_lowest_role,
        requires_four_eyes,
    )

    return ScopeState(
        archived=archived_scope(scope) is not None,
        four_eyes=requires_four_eyes(scope),
        agent_write_in_force=agent_write_policy(scope),
        child_scope_role_in_force=child_scope_lowest_role(scope),
    )
