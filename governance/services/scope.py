from __future__ import annotations

import re

from django.db import IntegrityError, connection, transaction

from governance.errors import InvalidInput
from governance.models import Principal, Scope, Workspace
from governance.models.scope import SLUG_RE
from governance.services.audit import AuditEntry, audit_record

SLUG = re.compile(SLUG_RE)
INVALID_SCOPE_PATH = (
    "A scope path is its workspace and names below it separated by '/', each in lowercase letters, "
    "digits, '-' and '_' (e.g. 'acme/slides/export')."
)


def parse_scope_path(path: str) -> list[str]:
    parts = [p for p in (path or "").strip().strip("/").split("/")]
    if not parts or any(not SLUG.match(p) for p in parts) or len(parts) > 12:
        raise InvalidInput(INVALID_SCOPE_PATH, field="scope")
    return parts


def scope_ensure(*, path: str, actor: Principal | None) -> Scope:
    """Return the scope at `path`, creating its workspace and any missing ancestors (audited)."""
    parts = parse_scope_path(path)
    existing = Scope.objects.filter(path="/".join(parts)).first()
    if existing:
        return existing
    try:
        with transaction.atomic():
            return _create_chain(parts, actor)
    except IntegrityError:
        # Another request created it between our read and our write.
        return Scope.objects.get(path="/".join(parts))


def _create_chain(parts: list[str], actor: Principal | None) -> Scope:
    workspace, ws_created = Workspace.objects.get_or_create(slug=parts[0], defaults={"name": parts[0]})
    if ws_created:
        audit_record(
            actor=actor, entry=AuditEntry("workspace.create", "workspace", str(workspace.pk), parts[0])
        )
    parent: Scope | None = None
    for depth in range(1, len(parts) + 1):
        path = "/".join(parts[:depth])
        scope = Scope.objects.filter(path=path).first()
        if scope is None:
            scope = Scope.objects.create(workspace=workspace, parent=parent, name=parts[depth - 1], path=path)
            scope.tree = f"{parent.tree}.{scope.pk}" if parent else str(scope.pk)
            scope.save(update_fields=["tree"])
            audit_record(actor=actor, entry=AuditEntry("scope.create", "scope", str(scope.pk), path))
        parent = scope
    assert parent is not None
    return parent


INVALID_SCOPE_NAME = (
    "A scope name is lowercase letters, digits, '-' and '_', starting with a letter or digit, at most 63 "
    "characters (e.g. 'export-q3')."
)
SCOPE_TOO_DEEP = "Scopes nest at most 12 levels deep."


def scope_create_child(*, parent: Scope, name: str, actor: Principal | None) -> tuple[Scope, bool]:
    """Open the child `name` under `parent` (audited `scope.create`); the rule of who may is
    permissions.require_create_child_scope. Returns (scope, created): opening an existing child again
    returns it unchanged, so an agent can open its task scope at the start of every session."""
    from governance.permissions import require_create_child_scope

    require_create_child_scope(actor, parent)
    name = (name or "").strip()
    if len(name) > 63 or not SLUG.match(name):
        raise InvalidInput(INVALID_SCOPE_NAME, field="name")
    if parent.depth >= 12:
        raise InvalidInput(SCOPE_TOO_DEEP, field="parent")
    path = f"{parent.path}/{name}"
    existing = Scope.objects.filter(path=path).first()
    if existing:
        return existing, False
    try:
        with transaction.atomic():
            # A rename or move of the parent may have committed since it was read: read it again under the
            # tree's lock (lock_tree), so the child takes the parent's current path.
            lock_tree(parent.workspace_id)
            parent = Scope.objects.get(pk=parent.pk)
            require_create_child_scope(actor, parent)
            path = f"{parent.path}/{name}"
            existing = Scope.objects.filter(path=path).first()
            if existing:
                return existing, False
            scope = Scope.objects.create(
                workspace_id=parent.workspace_id, parent=parent, name=name, path=path
            )
            scope.tree = f"{parent.tree}.{scope.pk}"
            scope.save(update_fields=["tree"])
            audit_record(actor=actor, entry=AuditEntry("scope.create", "scope", str(scope.pk), path))
    except IntegrityError:  # another request opened it between our read and our write
        return Scope.objects.get(path=path), False
    return scope, True


def lock_tree(workspace_id: int) -> None:
    """Serialise the changes of one workspace's tree (rename, move, opening a child) until the end of the
    transaction: each then reads paths and trees after the previous one committed, so two concurrent
    moves can never build a cycle (A under B while B goes under A) nor a child get its parent's old path.
    An advisory lock rather than row locks: a move rewrites rows nobody named, and row locks taken in
    different orders by two moves would deadlock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"scope-tree:{int(workspace_id)}"]
        )
