"""What a person may reach, in the dashboard's words: the menu sections that lead somewhere for them, and,
where a page has nothing for them to do, what they can do instead and who to ask.

`menu_sections` is asked once per page (one query, the principal's usable grants); `standings` and
`holders` are asked only by a page that has to say "not here" (two queries and one)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from governance.models import Grant, Principal, PrincipalKind, Role, Scope
from governance.models.principal import IMPORT_PLACEHOLDER_PREFIX
from governance.permissions.access import effective_grants, grants_for
from governance.permissions.bounds import under
from governance.permissions.roles import ACTION_ROLES, Action, highest_rank, role_rank
from governance.permissions.scopes import is_site_admin

# Menu sections (templates/base.html): each leads to a page family.
READING = "reading"  # memories, timeline, graph, turns, review, governance: anyone holding some grant
ADMIN = "admin"  # workspaces and Members with their forms: owners somewhere, site administrators
MEMBERS = "members"  # the same pages read-only (who can do what, whom to ask): every other grant holder
WEBHOOKS = "webhooks"  # owners of a whole workspace (the owner role on its root)
PORTABILITY = "portability"  # export (curator, owner) or import (owner) somewhere


def menu_sections(principal: Principal | None) -> frozenset[str]:
    """The sections whose pages can lead this principal to something it may do or read. One query."""
    if principal is None:
        return frozenset({READING, ADMIN, WEBHOOKS, PORTABILITY})
    grants = effective_grants(principal)
    roles = {r for _, r in grants}
    sections = set()
    if grants:
        sections.add(READING)
    if is_site_admin(principal) or roles & ACTION_ROLES[Action.MANAGE_GRANTS]:
        sections.add(ADMIN)
    elif grants:
        sections.add(MEMBERS)
    # A tree without a dot is a workspace's root scope (trees are paths of scope ids).
    if any("." not in tree and r in ACTION_ROLES[Action.MANAGE_WEBHOOKS] for tree, r in grants):
        sections.add(WEBHOOKS)
    if roles & (ACTION_ROLES[Action.EXPORT] | ACTION_ROLES[Action.IMPORT]):
        sections.add(PORTABILITY)
    return frozenset(sections)


# What each role lets its holder do on a scope, as the rest of a sentence "you can … there".
CAN_DO: dict[str, str] = {
    Role.OWNER: "change its grants and settings, invite people, and supersede, retire, forget or purge its "
    "memories",
    Role.CURATOR: "supersede, retire or forget its memories, confirm or reject proposals, and export it",
    Role.REVIEWER: "confirm or reject proposals",
    Role.VIEWER: "read its memories, turns and audit log",
    Role.AGENT: "propose memories and ask for context",
}
NO_GRANT = (
    "You hold no role on any scope yet: ask an owner of a workspace (or a site administrator) to add you "
    "or to send you an invitation."
)


@dataclass
class Standing:
    """One scope the principal holds a role on, what that role lets it do there, and who owns it."""

    scope: Scope
    role: str  # the highest role held there
    owners: list[str] = field(default_factory=list)

    @property
    def can_do(self) -> str:
        return CAN_DO[self.role]


def _people(qs):
    """Grants held by people or teams: agents never decide, and an import's placeholder name is no one."""
    return qs.filter(principal__kind__in=(PrincipalKind.USER, PrincipalKind.GROUP)).exclude(
        principal__name__startswith=IMPORT_PLACEHOLDER_PREFIX
    )


def _name(name: str, kind: str) -> str:
    return f"team {name}" if kind == PrincipalKind.GROUP else name


def standings(principal: Principal, limit: int = 8) -> list[Standing]:
    """The scopes the principal holds a role on (the roots of its grants, at most `limit`), each with its
    highest role and the people and teams owning it (granted there or above). Two queries."""
    held: dict[int, tuple[Scope, set[str]]] = {}
    for grant in grants_for(principal).order_by("scope__path"):
        held.setdefault(grant.scope_id, (grant.scope, set()))[1].add(grant.role)
    # A grant under another one of the same or higher rank says nothing new.
    kept = [
        (scope, roles)
        for scope, roles in held.values()
        if not any(
            other.pk != scope.pk
            and under(str(scope.tree), str(other.tree))
            and highest_rank(other_roles) >= highest_rank(roles)
            for other, other_roles in held.values()
        )
    ][:limit]
    if not kept:
        return []
    owners = list(
        _people(
            Grant.objects.filter(role=Role.OWNER, scope__workspace_id__in={s.workspace_id for s, _ in kept})
        )
        .values_list("scope__tree", "principal__name", "principal__kind")
        .order_by("principal__name")
    )
    out = []
    for scope, roles in kept:
        role = max(roles, key=lambda r: (role_rank(r), r == Role.VIEWER))
        names = sorted({_name(n, k) for t, n, k in owners if under(str(scope.tree), str(t))})
        out.append(Standing(scope=scope, role=role, owners=names))
    return out


def holders(scope: Scope, action: Action, limit: int = 5) -> list[str]:
    """The people and teams who may take `action` on `scope` (a role allowing it there or above): whom to
    ask. Names only, at most `limit`. One query."""
    rows = (
        _people(Grant.objects.filter(Q(scope__tree__ancestor_of=scope.tree), role__in=ACTION_ROLES[action]))
        .values_list("principal__name", "principal__kind")
        .distinct()
        .order_by("principal__name")[:limit]
    )
    return [_name(n, k) for n, k in rows]
