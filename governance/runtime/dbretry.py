"""What decides whether a request whose database connection was dropped may run again
(memoryui.middleware.DroppedConnectionRetryMiddleware): the connection was lost, not a statement refused,
and the request sent no write, or only writes marked `repeatable()` (setting a token's last use to now
twice is the same as once)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import InterfaceError, OperationalError

# Statements that change nothing; anything else (INSERT, UPDATE, a data-modifying WITH, COPY, DDL, a call)
# counts as a write.
_READ_ONLY = re.compile(r"^\s*(SELECT|SAVEPOINT|RELEASE|ROLLBACK|SET|SHOW|EXPLAIN)\b", re.IGNORECASE)
_WITH = re.compile(r"^\s*WITH\b", re.IGNORECASE)
_WRITING = re.compile(r"\b(INSERT|UPDATE|DELETE|MERGE)\b", re.IGNORECASE)
# SQLSTATEs of a connection that went away: class 08 (connection exception) and the server's shutdowns
# (57P01 terminated by an administrator or a failover, 57P02 crash, 57P03 cannot connect now). A deadlock,
# a serialization failure, a lock or statement timeout are not: the connection is fine and so is the answer.
_LOST_STATES = ("57P01", "57P02", "57P03")

_repeatable: ContextVar[bool] = ContextVar("repeatable_write", default=False)


@contextmanager
def repeatable() -> Iterator[None]:
    """Writes inside are harmless to run twice (bookkeeping such as a token's last use): they do not stop
    the request from being retried after a dropped connection."""
    token = _repeatable.set(True)
    try:
        yield
    finally:
        _repeatable.reset(token)


def is_write(sql: str) -> bool:
    if _READ_ONLY.match(sql):
        return False
    return not (_WITH.match(sql) and not _WRITING.search(sql))


def connection_lost(exc: BaseException) -> bool:
    """Whether a database error means the connection itself was lost (the server ended it, the network
    dropped it), rather than a statement failing on a live connection."""
    if isinstance(exc, InterfaceError):  # "connection already closed"
        return True
    if not isinstance(exc, OperationalError):
        return False
    sqlstate = getattr(exc.__cause__, "sqlstate", None)
    # No SQLSTATE: the client library saw the socket close ("server closed the connection unexpectedly").
    return sqlstate is None or sqlstate.startswith("08") or sqlstate in _LOST_STATES


class Attempt:
    """An execute wrapper for every database connection of the request's thread: whether the request sent
    a write (other than a repeatable one), and whether a statement failed because its connection was lost."""

    def __init__(self) -> None:
        self.wrote = False
        self.lost = False

    def __call__(self, execute, sql, params, many, context):
        if not self.wrote and not _repeatable.get() and is_write(sql):
            self.wrote = True
        try:
            return execute(sql, params, many, context)
        except Exception as exc:
            if connection_lost(exc):
                self.lost = True
            raise

    @property
    def may_retry(self) -> bool:
        return self.lost and not self.wrote
