"""Administering scopes: rename, move within the workspace, archive/restore, and the scope's settings
(four-eyes, agent write policy, lowest role that may open child scopes). Each is one transaction with
one audit event (old and new values) and a `scope.changed` outbox row that drops the workspace's
cached recalls and packets (their keys carry the workspace's generation).

What keys on a scope's path or tree, and what a rename or move does to it:
- `Scope.path` and `Scope.tree` of the scope and of every descendant: rewritten here, in one UPDATE;
- memories, grants, turns, tokens, retention policies, summaries and invitations point at scope *rows*
  (ids), so they follow the scope unchanged; so do the per-scope vector indexes, named by scope id;
- token bounds are read through the scope row at every request (governance.api.auth), so a token
  bound to a moved scope keeps acting on the same subtree under its new path;
- cached recalls and packets: dropped by the outbox row (store `cache`);
- audit events keep the path of their time: the chain is append-only and hash-linked, so history is
  not rewritten; the rename itself is an event naming both paths;
- stored turns keep the path they were asked in (a record of that request)."""

from __future__ import annotations

from django.db import connection, transaction
from django.utils import timezone

from governance.errors import Conflict, FourEyesRequired, InvalidInput, PermissionDenied
from governance.models import AgentWrite, Principal, Role, Scope, SessionOverrides
from governance.permissions import (
    ARCHIVE_ROOT,
    require_administer,
    require_four_eyes_change,
    require_move,
    settings_kept_on_move,
)
from governance.services.audit import AuditEntry, audit_record
from governance.services.four_eyes import MOVE_WOULD_OVERRIDE, move_would_override
from governance.services.outbox import outbox_emit
from governance.services.scope import INVALID_SCOPE_NAME, SCOPE_TOO_DEEP, SLUG, lock_tree

SCOPE_PATH_TAKEN = "A scope at {path} already exists; choose another name or place."
BAD_AGENT_WRITE = "agent_write is one of: propose, episodes, none."
BAD_SESSION_OVERRIDES = "session_overrides is one of: any, end_user, off."
BAD_BINDING_KEYS = (
    "binding_keys is a list of at most 100 keys, each a non-empty text of at most 200 characters."
)
BAD_CHILD_SCOPE_ROLE = (
    "child_scope_role is one of: agent, reviewer, curator, owner (or empty: the site default)."
)
MAX_DEPTH = 12


def rewrite_subtree(scope: Scope, *, new_path: str, new_tree: str) -> int:
    """Give `scope` the path `new_path` and the tree `new_tree`, and every descendant the same new
    prefixes, in one statement. Call inside the transaction that checked the move. Returns rows changed."""
    table = Scope._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET path = %(np)s || substr(path, length(%(op)s) + 1),"
            f" tree = CASE WHEN tree = %(ot)s::ltree THEN %(nt)s::ltree"
            f" ELSE %(nt)s::ltree || subpath(tree, nlevel(%(ot)s::ltree)) END"
            f" WHERE tree <@ %(ot)s::ltree",
            {"np": new_path, "op": scope.path, "nt": new_tree, "ot": str(scope.tree)},
        )
        return cursor.rowcount


def _locked(scope: Scope) -> Scope:
    lock_tree(scope.workspace_id)
    return (
        Scope.objects.select_for_update(of=("self",)).select_related("workspace", "parent").get(pk=scope.pk)
    )


def _changed(actor, scope: Scope, action: str, data: dict, reason: str = "") -> None:
    audit_record(
        actor=actor, entry=AuditEntry(action, "scope", str(scope.pk), scope.path, "", "", reason, data)
    )
    outbox_emit(topic="scope.changed", payload={"scope_id": scope.pk})


def _subtree_depth(scope: Scope) -> int:
    """Levels from `scope` down to its deepest descendant (1: no children)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT max(nlevel(tree)) - nlevel(%s::ltree) + 1 FROM {Scope._meta.db_table}"
            " WHERE tree <@ %s::ltree",
            [str(scope.tree), str(scope.tree)],
        )
        return int(cursor.fetchone()[0] or 1)


def scope_rename(*, scope: Scope, name: str, actor: Principal | None) -> Scope:
    """Rename a scope (not a workspace root: workspace_rename does that); its path and its descendants'
    change, everything else follows the row. Needs the owner role on the scope."""
    name = (name or "").strip()
    if len(name) > 63 or not SLUG.match(name):
        raise InvalidInput(INVALID_SCOPE_NAME, field="name")
    with transaction.atomic():
        scope = _locked(scope)
        require_administer(actor, scope)
        if scope.parent_id is None:
            from governance.errors import PermissionDenied
            from governance.permissions import MOVE_ROOT

            raise PermissionDenied(MOVE_ROOT, action="rename_scope")
        if name == scope.name:
            return scope
        old = scope.path
        new_path = f"{scope.parent.path}/{name}"
        if Scope.objects.filter(path=new_path).exists():
            raise Conflict(SCOPE_PATH_TAKEN.format(path=new_path), field="name")
        rewrite_subtree(scope, new_path=new_path, new_tree=str(scope.tree))
        Scope.objects.filter(pk=scope.pk).update(name=name)
        scope.refresh_from_db()
        _changed(actor, scope, "scope.rename", {"old": old, "new": new_path})
        return scope


def scope_move(*, scope: Scope, new_parent: Scope, actor: Principal | None) -> Scope:
    """Move a scope and its subtree under `new_parent`, in the same workspace, never under itself. Needs
    the owner role on the scope and on the new parent. Memories, grants, turns keep their scope rows."""
    with transaction.atomic():
        scope = _locked(scope)
        new_parent = Scope.objects.select_for_update().get(pk=new_parent.pk)
        require_move(actor, scope, new_parent)
        if scope.parent_id == new_parent.pk:
            return scope
        new_path = f"{new_parent.path}/{scope.name}"
        if Scope.objects.filter(path=new_path).exists():
            raise Conflict(SCOPE_PATH_TAKEN.format(path=new_path), field="parent")
        if new_parent.depth + _subtree_depth(scope) > MAX_DEPTH:
            raise InvalidInput(SCOPE_TOO_DEEP, field="parent")
        old = {"path": scope.path, "parent": scope.parent.path}
        # The rules it was under from above (four-eyes, agent write policy, archive, child-scope role)
        # stay with it: a move never relaxes them (permissions.settings_kept_on_move).
        kept = settings_kept_on_move(scope, new_parent)
        if actor is not None and move_would_override(scope, new_parent):
            raise FourEyesRequired(MOVE_WOULD_OVERRIDE)
        rewrite_subtree(scope, new_path=new_path, new_tree=f"{new_parent.tree}.{scope.pk}")
        Scope.objects.filter(pk=scope.pk).update(parent=new_parent, **kept)
        scope.refresh_from_db()
        _changed(
            actor,
            scope,
            "scope.move",
            {
                "old": old,
                "new": {"path": new_path, "parent": new_parent.path},
                "kept": {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in kept.items()},
            },
        )
        return scope


def scope_archive(*, scope: Scope, actor: Principal | None, reason: str = "") -> Scope:
    """Archive a scope (and so its subtree): no new memories, events or child scopes there, left out of
    the scope pickers; its memories stay readable by whoever has a grant. Needs the owner role."""
    with transaction.atomic():
        scope = _locked(scope)
        require_administer(actor, scope)
        if scope.parent_id is None:
            raise PermissionDenied(ARCHIVE_ROOT, action="archive_scope")
        if scope.archived_at is not None:
            return scope
        scope.archived_at = timezone.now()
        scope.save(update_fields=["archived_at"])
        _changed(actor, scope, "scope.archive", {"old": None, "new": scope.archived_at.isoformat()}, reason)
        return scope


def scope_restore(*, scope: Scope, actor: Principal | None, reason: str = "") -> Scope:
    """Undo scope_archive: the scope takes writes again (unless a scope above it is archived)."""
    with transaction.atomic():
        scope = _locked(scope)
        require_administer(actor, scope)
        if scope.archived_at is None:
            return scope
        old = scope.archived_at.isoformat()
        scope.archived_at = None
        scope.save(update_fields=["archived_at"])
        _changed(actor, scope, "scope.restore", {"old": old, "new": None}, reason)
        return scope


def scope_settings_set(
    *,
    scope: Scope,
    actor: Principal | None,
    require_two_reviewers: bool | None = None,
    agent_write: str | None = None,
    child_scope_role: str | None = None,
    reason: str = "",
    session_overrides: str | None = None,
    binding_keys: list[str] | None = None,
    rules_binding: bool | None = None,
) -> Scope:
    """Change a scope's settings (None: leave as is). One audit event `scope.settings` with the old and
    new value of each setting that changed. Needs the owner role; turning four-eyes off also a reason
    (permissions.require_four_eyes_change)."""
    if agent_write is not None and agent_write not in AgentWrite.values:
        raise InvalidInput(BAD_AGENT_WRITE, field="agent_write")
    if child_scope_role is not None and child_scope_role not in (
        "",
        Role.AGENT,
        Role.REVIEWER,
        Role.CURATOR,
        Role.OWNER,
    ):
        raise InvalidInput(BAD_CHILD_SCOPE_ROLE, field="child_scope_role")
    if session_overrides is not None and session_overrides not in SessionOverrides.values:
        raise InvalidInput(BAD_SESSION_OVERRIDES, field="session_overrides")
    if binding_keys is not None:
        if (
            not isinstance(binding_keys, list)
            or len(binding_keys) > 100
            or not all(isinstance(k, str) and k.strip() and len(k) <= 200 for k in binding_keys)
        ):
            raise InvalidInput(BAD_BINDING_KEYS, field="binding_keys")
        binding_keys = sorted({k.strip() for k in binding_keys})
    with transaction.atomic():
        scope = _locked(scope)
        wanted = {
            "require_two_reviewers": require_two_reviewers,
            "agent_write": agent_write,
            "child_scope_role": child_scope_role,
            "session_overrides": session_overrides,
            "binding_keys": binding_keys,
            "rules_binding": rules_binding,
        }
        changes = {
            f: {"old": getattr(scope, f), "new": v}
            for f, v in wanted.items()
            if v is not None and v != getattr(scope, f)
        }
        if "require_two_reviewers" in changes:
            require_four_eyes_change(actor, scope, on=bool(require_two_reviewers), reason=reason)
        else:
            require_administer(actor, scope)
        if not changes:
            return scope
        for f, change in changes.items():
            setattr(scope, f, change["new"])
        scope.save(update_fields=list(changes))
        _changed(actor, scope, "scope.settings", changes, reason)
        return scope
