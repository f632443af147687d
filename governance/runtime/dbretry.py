"""What decides whether a request whose database connection was dropped may run again
(memoryui.middleware.DroppedConnectionRetryMiddleware): the connection was lost, not a statement refused,
and either

- the request committed no write (none may have: a write whose outcome the lost connection left unknown
  counts as committed), other than writes marked `repeatable()` (setting a token's last use to now twice is
  the same as once). Such a request changed nothing; running it again is what its client would do. Or
- its write ran under an `Idempotency-Key` (governance/api/idempotency.py: the write, its key row and its
  answer in one transaction): then even a write whose COMMIT's outcome is unknown runs once more. If the
  first run committed, the second finds the key and replays the stored answer; if not, it writes once.
  A write is never run again blindly: the key decides."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import InterfaceError, OperationalError, transaction

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
_attempt: ContextVar[Attempt | None] = ContextVar("db_attempt", default=None)


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


def _never_ran(exc: BaseException) -> bool:
    """The server ended the connection before the statement could commit: terminated or shut down while
    idle or while running it (it aborts the statement's transaction). A socket that closed without a word
    leaves the outcome unknown."""
    return getattr(exc.__cause__, "sqlstate", None) in _LOST_STATES


class Attempt:
    """An execute wrapper for every database connection of the request's thread: whether the request
    committed a write (or sent one whose outcome is unknown), and whether a statement failed because its
    connection was lost. A write counts once it is committed: at once outside a transaction, through
    `on_commit` inside one (a transaction cut by the lost connection committed nothing). Writes marked
    `repeatable()` never count."""

    def __init__(self) -> None:
        self.wrote = False
        self.lost = False
        # A transaction holding a write that has neither committed nor been cut by the lost connection:
        # its COMMIT may have failed with its outcome unknown (a COMMIT is not a statement seen here).
        self.pending = False
        # The request's writes ran in one transaction with an idempotency key row (keyed_write).
        self.keyed = False

    def _committed(self) -> None:
        self.wrote = True
        self.pending = False

    def __call__(self, execute, sql, params, many, context):
        write = not _repeatable.get() and is_write(sql)
        conn = context["connection"]
        if self.pending and not conn.in_atomic_block:
            # The transaction with the write has ended and this runs after it (an on_commit hook registered
            # before the write runs before ours): it may have committed.
            self.wrote = True
        try:
            result = execute(sql, params, many, context)
        except Exception as exc:
            if connection_lost(exc):
                self.lost = True
                if conn.in_atomic_block:
                    self.pending = False  # the server ended the transaction: none of it commits
                elif write and not _never_ran(exc):
                    self.wrote = True  # it may have committed before the connection went
            raise
        if write:
            if conn.in_atomic_block:
                self.pending = True
                transaction.on_commit(self._committed, using=conn.alias)
            else:
                self.wrote = True
        return result

    @property
    def may_retry(self) -> bool:
        return self.lost and (self.keyed or (not self.wrote and not self.pending))

    @contextmanager
    def tracking(self) -> Iterator[None]:
        """Make this the running request's attempt (keyed_write and commit_failed report to it)."""
        token = _attempt.set(self)
        try:
            yield
        finally:
            _attempt.reset(token)


def keyed_write() -> None:
    """The running request's writes are under an idempotency key from here on: running it again after a
    lost connection replays the answer or writes once (governance/api/idempotency.py)."""
    if (attempt := _attempt.get()) is not None:
        attempt.keyed = True


def commit_failed(exc: BaseException) -> None:
    """A COMMIT (which the execute wrapper does not see) failed: if its connection was lost, say so."""
    if (attempt := _attempt.get()) is not None and connection_lost(exc):
        attempt.lost = True
