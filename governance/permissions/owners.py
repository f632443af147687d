"""Every scope keeps an owner: the rule that a grant revoke or a group-membership removal may not leave a
scope without a principal who can govern it (grant, revoke, purge).

A scope is *covered* when an owner grant on it or on one of its ancestors is held by a person (a user),
or by a group with at least one person among its members. Agents do not count: agents propose, people
decide, and a scope only an agent's token could govern would have no person left to decide there. Nor
does a placeholder an import made for a name of its file that matched nobody here (`import:<ws>:<name>`):
a name for provenance that nobody signs in as. Because a grant covers
its whole subtree, a removal leaves some scope uncovered exactly when it leaves the removed grant's own
scope uncovered; so the check is one query per owner grant concerned."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q

from governance.models import Grant, Principal, PrincipalKind, Role, Scope
from governance.models.principal import IMPORT_PLACEHOLDER_PREFIX

LAST_OWNER = (
    "This would leave {path} without an owner: no other person, or team with people, holds the "
    "owner role on it or above it. Grant owner to someone else first."
)


def _covering_owner_grants(scope: Scope):
    return Grant.objects.filter(role=Role.OWNER, scope__tree__ancestor_of=scope.tree)


def lock_owner_grants(scope: Scope) -> None:
    """Lock the owner grants covering `scope` so that two removals checked at once are decided one after
    the other (call inside the removing transaction, before `owner_left`)."""
    # In id order, so two removals lock the same rows in the same order and never deadlock.
    list(_covering_owner_grants(scope).select_for_update().order_by("pk").values_list("pk", flat=True))


def owner_left(
    scope: Scope, *, without_grant: int | None = None, without_member: tuple[int, int] | None = None
) -> bool:
    """Whether `scope` is still covered by an owner after removing the grant `without_grant` and/or the
    membership (group id, member id) `without_member`."""
    members = Principal.groups.through.objects.filter(
        to_principal_id=OuterRef("principal_id"), from_principal__kind=PrincipalKind.USER
    ).exclude(from_principal__name__startswith=IMPORT_PLACEHOLDER_PREFIX)
    if without_member is not None:
        members = members.exclude(to_principal_id=without_member[0], from_principal_id=without_member[1])
    person = Q(principal__kind=PrincipalKind.USER) & ~Q(principal__name__startswith=IMPORT_PLACEHOLDER_PREFIX)
    qs = _covering_owner_grants(scope).filter(
        person | Q(principal__kind=PrincipalKind.GROUP) & Exists(members)
    )
    if without_grant is not None:
        qs = qs.exclude(pk=without_grant)
    return qs.exists()


def revoke_leaves_no_owner(grant: Grant) -> bool:
    """Whether taking `grant` away would leave its scope without an owner (a LAST_OWNER refusal): what a
    page says before the revoke is asked for; grant_revoke decides again under its lock."""
    return grant.role == Role.OWNER and not owner_left(grant.scope, without_grant=grant.pk)
