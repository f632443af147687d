"""Teams and agent tokens as governed objects: group membership and token issue/revoke, checked by the
rule in permissions.can_manage_principal (nobody passes on a role they could not grant), and audited."""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction

from governance.errors import AgentRoleCap, Conflict, InvalidInput, LastOwner, NotFound, PermissionDenied
from governance.models import Principal, PrincipalKind, Role, Scope, Workspace
from governance.permissions import (
    GROUP_MANAGE_DENIED,
    LAST_OWNER,
    TEAM_CREATE_DENIED,
    agent_may_hold,
    can_create_team,
    can_manage_principal,
    lock_owner_grants,
    owned_workspaces,
    owner_left,
    principal_by_name,
    principal_visible,
)
from governance.services.audit import AuditEntry, audit_record
from governance.services.outbox import outbox_emit
from governance.services.principal import token_issue

TEAM_NAME_TAKEN = "The name {name!r} is taken in this workspace; choose another."
BAD_TEAM_NAME = "A team name is 1 to 150 characters."


TEAM_WORKSPACE_REQUIRED = "You own scopes in several workspaces: say which workspace the team belongs to."


def team_create(*, name: str, actor: Principal | None, workspace: Workspace | None = None) -> Principal:
    """A new team (a principal of kind group) of `workspace` (its home: the one workspace where it holds
    grants and whose owners manage its members), with no grants and no members yet. Creating one needs
    the owner role somewhere in that workspace. Without `workspace`: the one workspace where the actor
    owns a scope (several: InvalidInput, say which)."""
    name = (name or "").strip()
    if not 1 <= len(name) <= 150:
        raise InvalidInput(BAD_TEAM_NAME, field="name")
    if workspace is None:
        owned = owned_workspaces(actor)
        if not owned:
            raise PermissionDenied(TEAM_CREATE_DENIED, action="create_team")
        if len(owned) > 1:
            raise InvalidInput(TEAM_WORKSPACE_REQUIRED, field="workspace")
        workspace = Workspace.objects.get(pk=owned[0])
    if not can_create_team(actor, workspace):
        raise PermissionDenied(TEAM_CREATE_DENIED, action="create_team")
    # Taken: by a team of this workspace, or by a person or agent the actor may already know of (a name
    # a grant here would resolve to). Another workspace's team, or a person the actor cannot see, takes
    # nothing here: the answer is a free name's (permissions.resolve, the one lookup by name).
    try:
        principal_by_name(actor, name, workspace=workspace, missing=_Free())
    except _Free:
        pass
    else:
        raise Conflict(TEAM_NAME_TAKEN.format(name=name), field="name")
    try:
        with transaction.atomic():
            team = Principal.objects.create(kind=PrincipalKind.GROUP, name=name, workspace=workspace)
            _audit_team(team, actor, workspace)
            return team
    except IntegrityError as exc:  # created by another request between the check and the insert
        raise Conflict(TEAM_NAME_TAKEN.format(name=name), field="name") from exc


class _Free(Exception):
    """No principal a grant in this workspace would mean by that name."""


def _audit_team(team: Principal, actor: Principal | None, workspace: Workspace) -> None:
    audit_record(
        actor=actor,
        entry=AuditEntry(
            "principal.create",
            "principal",
            str(team.pk),
            data={"kind": PrincipalKind.GROUP, "name": team.name, "workspace": workspace.slug},
            workspace_id=workspace.pk,
        ),
    )


NOT_A_GROUP = "Members can only be added to a principal of kind group."
GROUP_IN_GROUP = "A group cannot be a member of a group."


def _seen(actor: Principal | None, *targets: Principal) -> None:
    """A principal the actor may not know of is the same NotFound as an unknown name."""
    if not all(principal_visible(actor, t) for t in targets):
        raise NotFound()


def _check(actor: Principal | None, target: Principal) -> None:
    _seen(actor, target)
    if not can_manage_principal(actor, target):
        raise PermissionDenied(GROUP_MANAGE_DENIED)


def group_member_add(*, group: Principal, member: Principal, actor: Principal | None) -> None:
    """Add a member to a team. Only the system manages a team without a home; a member must be one the
    actor may know of; an agent joins only a team that holds no role above the agent role."""
    _seen(actor, group, member)
    if group.kind != PrincipalKind.GROUP:
        raise InvalidInput(NOT_A_GROUP, field="group")
    if member.kind == PrincipalKind.GROUP:
        raise InvalidInput(GROUP_IN_GROUP, field="member")
    if group.workspace_id is None and actor is not None:
        raise NotFound()
    if member.kind == PrincipalKind.AGENT and any(
        not agent_may_hold(r) for r in group.grants.values_list("role", flat=True)
    ):
        raise AgentRoleCap(field="member")
    with transaction.atomic():
        _check(actor, group)
        if group.members.filter(pk=member.pk).exists():
            return
        member.groups.add(group)
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "group.member_add",
                "principal",
                str(group.pk),
                "",
                "",
                "member",
                "",
                {"group": group.name, "member": member.name},
            ),
        )
        outbox_emit(topic="grant.changed", payload={"principal_id": member.pk})


def group_member_remove(
    *, group: Principal, member: Principal, actor: Principal | None, reason: str = ""
) -> None:
    """Remove a member from a team; refused (LastOwner, 409) when a scope the team owns would be left
    without an owner (permissions.owners)."""
    with transaction.atomic():
        _check(actor, group)
        if not group.members.filter(pk=member.pk).exists():
            raise NotFound()
        owned = Scope.objects.filter(grants__principal=group, grants__role=Role.OWNER).order_by("tree")
        for scope in owned:
            lock_owner_grants(scope)
            if not owner_left(scope, without_member=(group.pk, member.pk)):
                raise LastOwner(LAST_OWNER.format(path=scope.path))
        if owned:
            _check(
                actor, group
            )  # again under the locks: a concurrent removal may have taken the actor's rights
        member.groups.remove(group)
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "group.member_remove",
                "principal",
                str(group.pk),
                "",
                "member",
                "",
                reason,
                {"group": group.name, "member": member.name},
            ),
        )
        outbox_emit(topic="grant.changed", payload={"principal_id": member.pk})


def agent_token_issue(
    *,
    agent: Principal,
    scope: Scope,
    max_role: str,
    actor: Principal | None,
    expires_at: datetime | None = None,
) -> str:
    """A new token for an agent, bound to `scope`'s subtree and `max_role`; the raw key is returned once.
    The issuer needs the owner role on `scope` at `max_role`'s rank or above (permissions.can_issue_token)."""
    _seen(actor, agent)
    if agent.kind != PrincipalKind.AGENT:
        raise InvalidInput("Tokens are issued to agents here; people sign in.", field="principal")
    return token_issue(principal=agent, scope=scope, max_role=max_role, expires_at=expires_at, actor=actor)
