"""Server-side prepared statements for the read path's fixed-shape statements (a recall's searches and
row reads, the token and access lookups).

Django's cursors bind parameters on the client: every statement reaches PostgreSQL as new text with its
values written in, and is planned again each time. On the LoCoMo dev import that planning was a large
part of a /recall after the embedding (`EXPLAIN (ANALYZE, SUMMARY)`: ≈ 1.2 ms to plan the row read with its
correlated relation lookups against 0.2–1 ms to run it, 2–3 ms for the trigram fallback against 0.3;
docs/benchmarks.md, "/recall latency split"). `prepared_cursor` is a Django cursor (the execute wrappers
of runtime/dbretry.py, Django's error translation, the query log of tests) over a psycopg cursor that
binds on the server: the statement text is the same on every request, psycopg prepares it on the
connection from its PREPARE_THRESHOLD-th run on, and PostgreSQL reuses the plan (after its own five
custom plans, a generic one when that costs no more).

Prepared statements belong to one server session: they last as long as the connection (CONN_MAX_AGE)
and are prepared again on a new one, and PostgreSQL plans them again itself after DDL on their tables.
Behind a pooler in transaction mode (PgBouncer before 1.21, or without `max_prepared_statements`) a
session's statements are not there on the next transaction: set DB_PREPARED_STATEMENTS=false there, and
these cursors are Django's ordinary ones. A statement of several commands (`SET …; SELECT …`) cannot be
prepared: send its parts as separate statements in one pipeline instead (recall/vector.py's HNSW search).

A plan kept for every run is only as good as it is for every run's values. A search narrowed to the
caller's scopes is not: the same statement matches 5 rows in one workspace and 50,000 in another, and the
generic plan PostgreSQL settles on after five runs cannot tell them apart. Measured on one database holding
the LoCoMo dev import and LongMemEval haystacks (docs/benchmarks.md, "Plans kept for every run"): the
trigram fallback's generic plan reads the whole table's trigram index and computes word similarity on
every long turn of the other scopes, 157 ms p50 against 10.5 ms planned with its values; the keyword search
4.3 against 2.5 ms. `planned_cursor` binds on the server as well but is never prepared, so PostgreSQL plans
each run with its values (psycopg's unnamed statement). Use it for the statements whose best plan depends
on the scope set or the query; `prepared_cursor` for the rest (row reads by id, the token and access
lookups, the exact vector search, the term counts: measured no worse generic)."""

from __future__ import annotations

from django.conf import settings
from django.db.backends.postgresql.base import CursorDebugWrapper, ServerBindingCursor
from django.db.backends.utils import CursorWrapper

# From its second run on a connection: a statement run once (a one-off shape) costs no extra round trip.
PREPARE_THRESHOLD = 1


def prepared_cursor(connection):
    """A cursor of `connection` whose statements are prepared on the server (see the module's docstring),
    or `connection.cursor()` when DB_PREPARED_STATEMENTS is off. Use it as `with prepared_cursor(c) as
    cursor:`, with %s placeholders as usual; one SQL command per execute."""
    if not settings.DB_PREPARED_STATEMENTS:
        return connection.cursor()
    return _wrapped(connection, ServerBindingCursor)


def _wrapped(connection, cursor_class):
    """A `cursor_class` cursor over `connection`'s psycopg connection in Django's wrapper (execute wrappers,
    error translation, the query log when it is kept)."""
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    with connection.wrap_database_errors:
        raw = connection.connection
        # Django opens its connections with prepare_threshold=None (no statement is ever prepared), and
        # its own cursors bind on the client, which psycopg never prepares: this only affects cursors
        # made here.
        if raw.prepare_threshold is None:
            raw.prepare_threshold = PREPARE_THRESHOLD
        cursor = cursor_class(raw)
    connection.validate_thread_sharing()
    return (
        _LoggedCursor(cursor, connection) if connection.queries_logged else CursorWrapper(cursor, connection)
    )


def planned_cursor(connection):
    """A cursor of `connection` that binds on the server but never prepares: each run is planned with its
    own values (see the module's docstring), or `connection.cursor()` when DB_PREPARED_STATEMENTS is off
    (the same: planned every run)."""
    if not settings.DB_PREPARED_STATEMENTS:
        return connection.cursor()
    return _wrapped(connection, _PlannedEachRun)


class _PlannedEachRun(ServerBindingCursor):
    """Bound on the server, never prepared: psycopg sends the statement unnamed and PostgreSQL plans it
    with the values it is bound to."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=False, binary=binary)


class _LoggedCursor(CursorDebugWrapper):
    """The query log (DEBUG, tests' captured queries) with each statement's values written in, as for
    Django's own cursors: psycopg keeps no text of a prepared execution to read it back from."""

    def execute(self, sql, params=None):
        with self.debug_sql(self.db.ops.compose_sql(sql, params), params):
            return CursorWrapper.execute(self, sql, params)
