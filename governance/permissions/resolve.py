"""Resolvers: every name or id that comes from a request becomes an object here, one function per kind of
input, in the manner of Zulip's `access_stream_by_id` (an outbox row's, `outbox_for_reader`, sits beside its rule in `objects`). Each checks that the object belongs to the
caller's workspace and that the caller may see it, and answers exactly as for an unknown object
otherwise: the same exception, code and message (`missing`, NotFound by default; a form passes the
InvalidInput its field shows). Views, serializers, commands and imports call these; none writes its own
`objects.get(...)` for request input (tests/security/test_lookup_convention.py holds it).

Workspace membership, the one definition the walls use:
- a team (a principal of kind group) belongs to its home workspace (`Principal.workspace`), only;
- a user or an agent belongs to every workspace where it holds a grant, itself or through a team (a
  person in two workspaces is a member of each);
- a user or agent with no grant and no team belongs to none yet ("unaffiliated"): an owner may give it
  its first grant (that is how a person a site administrator created joins).

The system actor (None: tasks, commands run by the operator) sees everything, but still never puts a
team to work outside its home."""

from __future__ import annotations

import re

from django.db.models import Exists, F, OuterRef, Q, QuerySet

from governance.errors import InvalidInput, NotFound
from governance.models import Dispute, Grant, Memory, Principal, PrincipalKind, Scope, Turn, Workspace
from governance.permissions.access import (
    effective_grants,
    governed_scopes,
    grants_for,
    memory_readable_scopes,
    require,
    turn_readable_scopes,
)
from governance.permissions.roles import Action

UNKNOWN_PRINCIPAL = "No principal with this name."
CONTROL_CHARACTERS = "A name or path cannot hold control characters (NUL, a line break, an escape, ...)."
# C0 and C1 controls and DEL: never part of a name, path or slug this service makes, and a NUL is refused by
# PostgreSQL itself (a DataError, a 500, before this check).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def request_name(value: str | None, *, field: str) -> str:
    """`value` (a name, path or slug from a request) stripped of surrounding blanks; InvalidInput (400,
    `invalid_input` with `field`) when it holds a control character. Every resolver below reads its
    input through this, so no name reaches the database with one, whatever the route or the token."""
    value = value or ""
    if _CONTROL.search(value):  # before the strip, which takes a trailing line break or NEL for a blank
        raise InvalidInput(CONTROL_CHARACTERS, field=field)
    return value.strip()


def _raise(missing: Exception | None) -> None:
    raise missing if missing is not None else NotFound()


def clean_path(path: str | None) -> str:
    """A scope path as people type it: surrounding blanks and slashes dropped."""
    return request_name(path, field="scope").strip("/")


# --- Workspaces -----------------------------------------------------------------------------------------


def workspace_roots() -> QuerySet[Scope]:
    """Every workspace's root scope: the scope without a parent (one meaning, whatever its path)."""
    return Scope.objects.filter(parent__isnull=True)


def workspace_root(workspace: Workspace | int) -> Scope:
    """The root scope of a workspace (the system's own lookup: the caller already holds the workspace)."""
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    root = workspace_roots().filter(workspace_id=workspace_id).first()
    if root is None:
        raise NotFound()
    return root


def acting_workspace_ids(actor: Principal | None) -> set[int] | None:
    """Workspaces where the actor may use a role now (its token's bound applied); None: all (the system).
    One query."""
    if actor is None:
        return None
    roots = {int(tree.split(".")[0]) for tree, _ in effective_grants(actor)}
    return set(Scope.objects.filter(pk__in=roots).values_list("workspace_id", flat=True)) if roots else set()


def workspace_by_slug(
    actor: Principal | None, slug: str | None, *, missing: Exception | None = None
) -> Workspace:
    """The workspace `slug` if the actor holds a role in it (a site administrator: any); the same answer
    otherwise."""
    from governance.permissions.scopes import is_site_admin

    workspace = Workspace.objects.filter(slug=request_name(slug, field="workspace")).first()
    if workspace is None or not (
        is_site_admin(actor) or workspace.pk in (acting_workspace_ids(actor) or set())
    ):
        _raise(missing)
    return workspace


# --- Scopes ---------------------------------------------------------------------------------------------


def scope_by_path(
    actor: Principal | None,
    path: str | None,
    *,
    workspace: Workspace | None = None,
    reading: bool = False,
    missing: Exception | None = None,
) -> Scope:
    """The scope at `path`. By default one the actor may use a role on (its grants' subtrees: where it
    acts); `reading=True`: one whose memories it may read (those and every scope above them). Within
    `workspace` when given. Unknown, another workspace's and not-yours are the same answer."""
    qs = memory_readable_scopes(actor) if reading else Scope.objects.all()
    qs = qs.select_related("workspace", "parent").filter(path=clean_path(path))
    if workspace is not None:
        qs = qs.filter(workspace=workspace)
    scope = qs.first()
    if scope is None:
        _raise(missing)
    if not reading:
        try:
            require(actor, scope, Action.READ)
        except NotFound:
            _raise(missing)
    return scope


def nearest_scope(path: str | None) -> Scope | None:
    """The scope at `path`, or its nearest existing ancestor (a target that does not exist yet is asked
    of the scope it would open under); None when not even the workspace exists. The caller then asks
    `require` of it, so a scope the actor cannot see is the same NotFound as an unknown one."""
    parts = [p for p in clean_path(path).split("/") if p]
    prefixes = ["/".join(parts[:depth]) for depth in range(len(parts), 0, -1)]
    found = {s.path: s for s in Scope.objects.select_related("workspace").filter(path__in=prefixes)}
    return next((found[p] for p in prefixes if p in found), None)


def scope_by_id(actor: Principal | None, scope_id: int, *, missing: Exception | None = None) -> Scope:
    """The scope with this id if the actor may use a role on it; the same answer otherwise."""
    scope = Scope.objects.select_related("workspace", "parent").filter(pk=scope_id).first()
    if scope is None:
        _raise(missing)
    try:
        require(actor, scope, Action.READ)
    except NotFound:
        _raise(missing)
    return scope


# --- Memories, turns, grants, outbox rows ---------------------------------------------------------------


def memory_for_reader(actor: Principal | None, memory_id: int, *, missing: Exception | None = None) -> Memory:
    """A memory the actor may read by id (its scope among permissions.memory_readable_scopes), in the API
    and the dashboard alike."""
    memory = (
        Memory.objects.select_related("scope", "created_by", "confirmed_by")
        .defer("embedding")
        .filter(pk=memory_id, scope__in=memory_readable_scopes(actor))
        .first()
    )
    if memory is None:
        _raise(missing)
    return memory


def dispute_for_reader(
    actor: Principal | None, dispute_id: int, *, missing: Exception | None = None
) -> Dispute:
    """A proposed contradiction the actor may read: both of its memories readable (memory_for_reader's
    rule); the same answer as for an unknown id otherwise."""
    readable = memory_readable_scopes(actor)
    dispute = (
        Dispute.objects.select_related("newer__scope", "older__scope")
        .filter(pk=dispute_id, newer__scope__in=readable, older__scope__in=readable)
        .first()
    )
    if dispute is None:
        _raise(missing)
    return dispute


def turn_for_reader(actor: Principal | None, turn_id: int, *, missing: Exception | None = None) -> Turn:
    """A turn the actor may read: in its governed subtrees only (permissions.turn_readable_scopes)."""
    turn = (
        Turn.objects.select_related("scope", "principal")
        .filter(pk=turn_id, scope__in=turn_readable_scopes(actor))
        .first()
    )
    if turn is None:
        _raise(missing)
    return turn


def grant_for_reader(actor: Principal | None, grant_id: int, *, missing: Exception | None = None) -> Grant:
    """A grant on a scope the actor may use a role on."""
    grant = (
        Grant.objects.select_related("scope", "principal")
        .filter(pk=grant_id, scope__in=governed_scopes(actor))
        .first()
    )
    if grant is None:
        _raise(missing)
    return grant


# --- Principals -----------------------------------------------------------------------------------------


def member_workspace_ids(principal: Principal) -> set[int]:
    """The workspaces the principal belongs to (the module's definition). One query."""
    if principal.kind == PrincipalKind.GROUP:
        return {principal.workspace_id} if principal.workspace_id else set()
    own = set(Grant.objects.filter(principal=principal).values_list("scope__workspace_id", flat=True))
    teams = set(principal.groups.exclude(workspace__isnull=True).values_list("workspace_id", flat=True))
    return own | teams


def is_member(principal: Principal, workspace: Workspace | int) -> bool:
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    return workspace_id in member_workspace_ids(principal)


def principal_visible(actor: Principal | None, target: Principal) -> bool:
    """Whether the actor may learn that `target` exists: itself; a team whose home is a workspace where
    the actor holds a role; an unaffiliated user or agent; one holding a grant (its own or its teams')
    in a scope the actor may read. Everyone else is the same answer as an unknown name."""
    if actor is None or actor.pk == target.pk:
        return True
    if target.kind == PrincipalKind.GROUP:
        return target.workspace_id is not None and target.workspace_id in (
            acting_workspace_ids(actor) or set()
        )
    held = grants_for(target)
    if not held.exists():  # no role anywhere: unaffiliated, or only in teams that hold none yet
        homes = set(target.groups.values_list("workspace_id", flat=True))
        return not homes or bool(homes & (acting_workspace_ids(actor) or set()))
    return held.filter(scope__in=memory_readable_scopes(actor)).exists()


def principals_visible_to(actor: Principal | None, workspace: Workspace | None = None) -> QuerySet[Principal]:
    """The principals `principal_visible` lets the actor know of, as one query (the "who" pickers); with
    `workspace`, only those a grant there may name (`principal_by_name`)."""
    qs = Principal.objects.all()
    if workspace is not None:
        qs = qs.filter(~Q(kind=PrincipalKind.GROUP) | Q(workspace=workspace))
    if actor is None:
        return qs
    readable = memory_readable_scopes(actor)
    own = Grant.objects.filter(principal_id=OuterRef("pk"))
    via_group = Grant.objects.filter(principal__members=OuterRef("pk"))
    teams = Principal.groups.through.objects.filter(from_principal_id=OuterRef("pk"))
    acting = sorted(acting_workspace_ids(actor) or set())
    unaffiliated = (
        ~Q(Exists(own))
        & ~Q(Exists(via_group))
        & (~Q(Exists(teams)) | Q(Exists(teams.filter(to_principal__workspace_id__in=acting))))
    )
    seen = Q(Exists(own.filter(scope__in=readable))) | Q(Exists(via_group.filter(scope__in=readable)))
    people = ~Q(kind=PrincipalKind.GROUP) & (unaffiliated | seen)
    homes = Q(kind=PrincipalKind.GROUP, workspace_id__in=acting)
    return qs.filter(Q(pk=actor.pk) | people | homes)


TEAM_WORKSPACE_REQUIRED = "Teams of this name are in several of your workspaces: say which workspace."


def _named(name: str | None, kinds: tuple[str, ...] | None, workspace_id: int | None) -> QuerySet[Principal]:
    """Every principal a name may stand for: the user, agent or home-less team of that name (one
    namespace across the installation) and the teams of that name (unique within their workspace), of
    `workspace_id` only when given."""
    qs = Principal.objects.filter(name=request_name(name, field="name"))
    if kinds is not None:
        qs = qs.filter(kind__in=kinds)
    if workspace_id is not None:
        qs = qs.filter(Q(workspace__isnull=True) | Q(workspace_id=workspace_id))
    return qs


def _workspace_id(workspace: Workspace | int | None) -> int | None:
    return workspace if isinstance(workspace, int) or workspace is None else workspace.pk


def principal_by_name(
    actor: Principal | None,
    name: str | None,
    *,
    workspace: Workspace | int | None = None,
    kinds: tuple[str, ...] | None = None,
    missing: Exception | None = None,
) -> Principal:
    """The principal named `name` that the actor may know of (principal_visible) and, with `workspace`,
    that a grant or membership there may name: a team of that workspace (its name comes first there);
    else a user or agent of any workspace the actor shares with it, or an unaffiliated one. Without
    `workspace`: the user or agent of that name, else the one team of that name the actor may know of
    (several, in different workspaces of the actor's: InvalidInput, say which workspace). `kinds`
    narrows the kind: a name of another kind is the same answer as an unknown one. Anything else:
    exactly as for an unknown name."""
    workspace_id = _workspace_id(workspace)
    candidates = _named(name, kinds, workspace_id)
    if workspace_id is None and actor is not None:  # the teams it may know of: of its workspaces only
        candidates = candidates.filter(
            Q(workspace__isnull=True) | Q(workspace_id__in=acting_workspace_ids(actor) or set())
        )
    found = sorted(
        (p for p in candidates if principal_visible(actor, p)), key=lambda p: (p.workspace_id is None, p.pk)
    )
    homed = [p for p in found if p.workspace_id is not None]
    unhomed = [p for p in found if p.workspace_id is None]
    if workspace_id is not None:
        # A team the system made without a home takes one from its first grant: the system's only.
        unhomed = [p for p in unhomed if p.kind != PrincipalKind.GROUP or actor is None]
        pick = (homed or unhomed or [None])[0]
    elif unhomed:
        pick = unhomed[0]
    elif len(homed) > 1:
        raise InvalidInput(TEAM_WORKSPACE_REQUIRED, field="workspace")
    else:
        pick = (homed or [None])[0]
    if pick is None:
        _raise(missing)
    return pick


def team_by_name(
    actor: Principal | None,
    name: str | None,
    *,
    workspace: Workspace | int | None = None,
    missing: Exception | None = None,
) -> Principal:
    """A team whose home is a workspace where the actor holds a role (within `workspace` when given);
    a user's or agent's name, or another workspace's team, is the same answer as an unknown name."""
    return principal_by_name(actor, name, workspace=workspace, kinds=(PrincipalKind.GROUP,), missing=missing)


def member_by_name(
    actor: Principal | None,
    name: str | None,
    workspace: Workspace | int | None,
    *,
    kinds: tuple[str, ...] | None = None,
) -> Principal | None:
    """The principal named `name` if it is a member of `workspace` the actor may know of (an import's
    matching: a name of the file stands for someone here only if that someone belongs to the target
    workspace; a team's name, only a team of that workspace); None otherwise, an unknown name and
    another workspace's alike."""
    workspace_id = _workspace_id(workspace)
    if workspace_id is None:
        return None
    teams_first = _named(name, kinds, workspace_id).order_by(F("workspace_id").asc(nulls_last=True), "pk")
    return next((p for p in teams_first if is_member(p, workspace_id) and principal_visible(actor, p)), None)
