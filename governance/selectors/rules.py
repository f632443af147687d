"""The statements a person put in force where a write happens: what a user's sentence may correct
(services/correction.rules_corrected_by_meaning). Read on every relayed event with a user's turn, so it is one
prepared statement (runtime/prepared.py): planning the ORM's query took ~2 ms against ~0.1 ms to run it, on
the memory table's many indexes."""

from __future__ import annotations

from django.db import connection

from governance.models import Scope
from governance.runtime.prepared import prepared_cursor

# The newest rules read (a scope holds one per key in force, and few unkeyed).
LIMIT = 200

_SQL = (
    "SELECT m.id, m.key, m.kind, m.text, s.path FROM governance_memory m"
    " JOIN governance_scope s ON s.id = m.scope_id"
    " WHERE m.scope_id IN (SELECT a.id FROM governance_scope a WHERE a.tree @> %s::ltree)"
    " AND m.status = 'active' AND m.kind = ANY(%s) AND m.purged_at IS NULL AND m.confirmed_at IS NOT NULL"
    " AND (m.valid_until IS NULL OR m.valid_until > now())"
    " ORDER BY m.id DESC LIMIT %s"
)


def rules_in_force(scope: Scope, kinds: tuple[str, ...]) -> list[tuple[int, str | None, str, str, str]]:
    """(id, key, kind, text, scope path) of the active, confirmed statements of `kinds` in `scope` and every
    scope above it, newest first, at most LIMIT; for a key set at several levels only the narrowest (the one
    in force here). Uses the write's own connection: it must see what the transaction wrote."""
    with prepared_cursor(connection) as cursor:
        cursor.execute(_SQL, [str(scope.tree), list(kinds), LIMIT])
        rows = cursor.fetchall()
    narrowest: dict[str, tuple] = {}
    out = []
    for row in rows:
        if row[1] is None:
            out.append(tuple(row))
            continue
        held = narrowest.get(row[1])
        if held is None or row[4].count("/") > held[4].count("/"):
            narrowest[row[1]] = tuple(row)
    return [*narrowest.values(), *out]


# The user's own statements of what their task requires that still stand in a scope (not confirmed by a
# person, not rejected, not replaced by a later one), newest first: what a later sentence of theirs may
# replace across conversations ("支付模块风险太高,暂时不要重构。" in one week's chat, "支付模块可以重构了,但必须
# 先补测试。" in the next).
USER_LIMIT = 100
# A requirement a later one replaced in part stands as that part (meta.requirement.standing, services/parts.py).
_USER_SQL = (
    "SELECT m.id, m.key, m.kind, COALESCE(m.meta->'requirement'->>'standing', m.text), s.path"
    " FROM governance_memory m JOIN governance_scope s ON s.id = m.scope_id"
    " WHERE m.scope_id = %s AND m.source_kind = 'user' AND m.status IN ('candidate', 'proposed')"
    " AND m.kind <> 'episodic' AND m.purged_at IS NULL AND m.meta ? 'requirement'"
    " AND (NOT (m.meta->'requirement') ? 'replaced_by' OR (m.meta->'requirement') ? 'standing')"
    " ORDER BY m.id DESC LIMIT %s"
)


def users_standing_requirements(scope: Scope) -> list[tuple[int, str | None, str, str, str]]:
    """(id, key, kind, text, scope path) of the user's requirements still standing in `scope`, every
    conversation's (see above). The write's own connection, like rules_in_force."""
    with prepared_cursor(connection) as cursor:
        cursor.execute(_USER_SQL, [scope.pk, USER_LIMIT])
        return [tuple(row) for row in cursor.fetchall()]


__all__ = ["rules_in_force", "users_standing_requirements"]
