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
prepared; those keep `connection.cursor()`."""

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
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    with connection.wrap_database_errors:
        raw = connection.connection
        # Django opens its connections with prepare_threshold=None (no statement is ever prepared), and
        # its own cursors bind on the client, which psycopg never prepares: this only affects cursors
        # made here.
        if raw.prepare_threshold is None:
            raw.prepare_threshold = PREPARE_THRESHOLD
        cursor = ServerBindingCursor(raw)
    connection.validate_thread_sharing()
    return (
        _LoggedCursor(cursor, connection) if connection.queries_logged else CursorWrapper(cursor, connection)
    )


class _LoggedCursor(CursorDebugWrapper):
    """The query log (DEBUG, tests' captured queries) with each statement's values written in, as for
    Django's own cursors: psycopg keeps no text of a prepared execution to read it back from."""

    def execute(self, sql, params=None):
        with self.debug_sql(self.db.ops.compose_sql(sql, params), params):
            return CursorWrapper.execute(self, sql, params)
