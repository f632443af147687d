"""Workspaces: created by a site administrator (permissions.is_site_admin) with their root scope and the
creator as its owner; renamed by an owner of the root. Renaming the slug rewrites every path of the
workspace (services.scope_admin.rewrite_subtree), in one transaction."""

from __future__ import annotations

import re

from django.db import IntegrityError, transaction

from governance.errors import Conflict, InvalidInput
from governance.models import Grant, Principal, Role, Scope, Workspace
from governance.models.scope import SLUG_RE
from governance.permissions import require_workspace_admin, require_workspace_create, workspace_root
from governance.services.audit import AuditEntry, audit_record
from governance.services.outbox import outbox_emit

_SLUG = re.compile(SLUG_RE)
INVALID_WORKSPACE_SLUG = (
    "A workspace's short name is lowercase letters, digits, '-' and '_', starting with a "
    "letter or digit, at most 63 characters (e.g. 'acme')."
)
WORKSPACE_NAME_REQUIRED = "Give the workspace a name of 1 to 200 characters."
SLUG_RESERVED = (
    "Short names starting with {prefix!r} are kept for the evaluation runs' own workspaces; choose another."
)
# A short name is a workspace's address (its root scope's path), one across the installation like an
# organisation's name on a code host: a clash says only that the name is taken, in the same words to
# every caller (docs/governance.md, "Names").
WORKSPACE_EXISTS = "The short name {slug!r} is taken; choose another."


def _clean_name(name: str) -> str:
    name = (name or "").strip()
    if not 1 <= len(name) <= 200:
        raise InvalidInput(WORKSPACE_NAME_REQUIRED, field="name")
    return name


def _clean_slug(slug: str) -> str:
    slug = (slug or "").strip()
    if not _SLUG.match(slug):
        raise InvalidInput(INVALID_WORKSPACE_SLUG, field="slug")
    from governance.models.evaluation import SANDBOX_PREFIX

    if slug.startswith(SANDBOX_PREFIX):  # a run creates its sandbox itself, by id: nobody may name one
        raise InvalidInput(SLUG_RESERVED.format(prefix=SANDBOX_PREFIX), field="slug")
    return slug


def workspace_create(*, slug: str, name: str, actor: Principal | None) -> Workspace:
    """A new workspace with its root scope (path = slug); the creator, if a person, becomes its owner so
    that someone can govern it from the first moment. One audit event (`workspace.create`)."""
    require_workspace_create(actor)
    slug, name = _clean_slug(slug), _clean_name(name)
    try:
        with transaction.atomic():
            if Workspace.objects.filter(slug=slug).exists() or Scope.objects.filter(path=slug).exists():
                raise Conflict(WORKSPACE_EXISTS.format(slug=slug), field="slug")
            workspace = Workspace.objects.create(slug=slug, name=name)
            root = Scope.objects.create(workspace=workspace, parent=None, name=slug, path=slug)
            root.tree = str(root.pk)
            root.save(update_fields=["tree"])
            if actor is not None:
                Grant.objects.create(principal=actor, scope=root, role=Role.OWNER, granted_by=actor)
                outbox_emit(topic="grant.changed", payload={"scope_id": root.pk, "principal_id": actor.pk})
            audit_record(
                actor=actor,
                entry=AuditEntry(
                    "workspace.create",
                    "workspace",
                    str(workspace.pk),
                    slug,
                    "",
                    "",
                    "",
                    {
                        "slug": slug,
                        "name": name,
                        "root_scope": root.pk,
                        "owner": actor.name if actor else None,
                    },
                    workspace_id=workspace.pk,
                ),
            )
            return workspace
    except IntegrityError as exc:  # created by another request between the check and the insert
        raise Conflict(WORKSPACE_EXISTS.format(slug=slug), field="slug") from exc


def workspace_rename(
    *, workspace: Workspace, actor: Principal | None, name: str | None = None, slug: str | None = None
) -> Workspace:
    """Change the workspace's name and/or short name. A new short name is the first part of every path in
    the workspace: all of them are rewritten with it. Needs the owner role on the root scope."""
    from governance.services.scope import lock_tree
    from governance.services.scope_admin import rewrite_subtree

    with transaction.atomic():
        lock_tree(workspace.pk)
        workspace = Workspace.objects.select_for_update().get(pk=workspace.pk)
        root = workspace_root(workspace)
        require_workspace_admin(actor, root)
        before = {"name": workspace.name, "slug": workspace.slug}
        if name is not None:
            workspace.name = _clean_name(name)
        if slug is not None and _clean_slug(slug) != workspace.slug:
            if Workspace.objects.filter(slug=slug).exists() or Scope.objects.filter(path=slug).exists():
                raise Conflict(WORKSPACE_EXISTS.format(slug=slug), field="slug")
            workspace.slug = slug
            rewrite_subtree(root, new_path=slug, new_tree=str(root.tree))
            Scope.objects.filter(pk=root.pk).update(name=slug)
        after = {"name": workspace.name, "slug": workspace.slug}
        if after == before:
            return workspace
        workspace.save(update_fields=["name", "slug"])
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "workspace.rename",
                "workspace",
                str(workspace.pk),
                workspace.slug,
                "",
                "",
                "",
                {"old": before, "new": after},
            ),
        )
        outbox_emit(topic="scope.changed", payload={"scope_id": root.pk})
        return workspace
