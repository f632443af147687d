"""Read replicas with read-your-forgets (docs/scaling.md, "Read replicas").

With DATABASE_REPLICA_URL set, the `replica` database alias is a PostgreSQL streaming replica (a hot
standby) of `default`. Only the reads that a caller runs through `routed_read` may go there (recall,
context assembly, the dashboard's lists); everything else, every write and every governance decision
(who may see what, review, the audit chain) stays on the primary, as without a replica.

The rule that keeps a forgotten text from coming back: every change that takes something out of force
raises its workspace's read fence (services.outbox.read_fence_raise, the table governance_readfence) to
its commit's WAL position. Before a read goes to the replica, the replica's replay position is compared
with the fence of the workspace (and the fence of every workspace, id 0); while the replica is behind it,
the read waits up to REPLICA_MAX_WAIT_MS, polling, and then goes to the primary. A request that wrote
reads from the primary for the rest of the request. Without a replica nothing here changes a query.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, OperationalError, connections

from governance.runtime.metrics import REPLICA_READS

logger = logging.getLogger(__name__)

REPLICA = "replica"
PRIMARY = "primary"
FENCE_TABLE = "governance_readfence"
FENCE_ALL_WORKSPACES = 0
POLL_SECONDS = 0.01

# The position after which a committed transaction's commit record lies: its WAL flush position, which a
# synchronous commit (on, remote_write, remote_apply, local) waits for before it returns, and which the
# replica can reach without waiting for anyone else's WAL. With synchronous_commit=off a commit returns
# before its flush: then the insert position, which is past every record already written.
PRIMARY_LSN_SQL = (
    "CASE WHEN current_setting('synchronous_commit') = 'off' THEN pg_current_wal_insert_lsn()"
    " ELSE pg_current_wal_flush_lsn() END"
)
# Run in autocommit right after the change's commit: never lowers a fence another change raised.
STAMP_FENCE_SQL = (
    f"UPDATE {FENCE_TABLE} SET commit_lsn = {PRIMARY_LSN_SQL}"
    f" WHERE workspace_id = %s AND (commit_lsn IS NULL OR commit_lsn < {PRIMARY_LSN_SQL})"
)
# On the primary: the highest fence of a workspace and of all (a NULL fence, not yet stamped: the position
# now). A NULL workspace (a dashboard list over every workspace the caller reads): the highest of all.
FENCE_SQL = (
    f"SELECT max(COALESCE(commit_lsn, {PRIMARY_LSN_SQL}))::text FROM {FENCE_TABLE}"
    " WHERE %(w)s::bigint IS NULL OR workspace_id = ANY(ARRAY[%(w)s, %(all)s]::bigint[])"
)
# On the replica: whether it has replayed past the fence (NULL, not a standby: never).
REPLAYED_SQL = "SELECT COALESCE(pg_last_wal_replay_lsn() >= %s::pg_lsn, false)"

# The alias reads of the running routed_read go to (None: the primary), whether this request wrote,
# and which server answered the last routed read.
_read_alias: ContextVar[str | None] = ContextVar("read_alias", default=None)
_wrote: ContextVar[bool] = ContextVar("wrote", default=False)
_served_by: ContextVar[str] = ContextVar("served_by", default=PRIMARY)

T = TypeVar("T")


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


class ReadReplicaRouter:
    """DATABASE_ROUTERS: ORM reads follow the running routed_read; every write goes to the primary and
    pins the rest of the request to it (it reads its own writes)."""

    def db_for_read(self, model, **hints) -> str:
        alias = _read_alias.get()
        if alias is None or _wrote.get() or connections[DEFAULT_DB_ALIAS].in_atomic_block:
            return DEFAULT_DB_ALIAS
        return alias

    def db_for_write(self, model, **hints) -> str:
        _wrote.set(True)
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints) -> bool:
        return True  # one database, two servers

    def allow_migrate(self, db, app_label, model_name=None, **hints) -> bool:
        return db == DEFAULT_DB_ALIAS


def read_alias() -> str:
    """The alias for raw SQL on the read path (`connections[read_alias()].cursor()`): the replica inside
    a routed_read that chose it, otherwise the primary."""
    alias = _read_alias.get()
    if alias is None or _wrote.get() or connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return DEFAULT_DB_ALIAS
    return alias


def read_connection():
    return connections[read_alias()]


def begin_request(**_) -> None:
    """`request_started`: a new request has written nothing yet (gunicorn threads serve many requests)."""
    _wrote.set(False)
    _read_alias.set(None)
    _served_by.set(PRIMARY)


@contextmanager
def bookkeeping():
    """A write the rest of the request never reads back (a token's last use): it does not pin the
    request to the primary."""
    token = _wrote.set(_wrote.get())
    try:
        yield
    finally:
        _wrote.reset(token)


def note_write() -> None:
    """Raw SQL that writes outside the ORM (the stored turn) pins the request to the primary too."""
    _wrote.set(True)


def served_by() -> str:
    """Which server answered this request's last routed read: "primary" or "replica"."""
    return _served_by.get()


def _fence(workspace_id: int | None) -> str | None:
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(FENCE_SQL, {"w": workspace_id, "all": FENCE_ALL_WORKSPACES})
        return cursor.fetchone()[0]


def replica_caught_up(workspace_id: int | None, max_wait: float | None = None) -> str:
    """Whether the replica has replayed every change that took something out of force in this workspace,
    waiting up to `max_wait` seconds (REPLICA_MAX_WAIT_MS) for it: "replica", "replica_after_wait",
    "primary_behind", or "primary_unavailable" when the replica does not answer."""
    fence = _fence(workspace_id)
    if fence is None:
        return "replica"  # nothing was ever taken out of force here
    wait = settings.REPLICA_MAX_WAIT_MS / 1000 if max_wait is None else max_wait
    deadline = time.monotonic() + wait
    try:
        with connections[REPLICA].cursor() as cursor:
            for attempt in itertools.count():
                cursor.execute(REPLAYED_SQL, [fence])
                if cursor.fetchone()[0]:
                    return "replica_after_wait" if attempt else "replica"
                if time.monotonic() >= deadline:
                    return "primary_behind"
                time.sleep(POLL_SECONDS)
    except DatabaseError:
        logger.warning("the read replica did not answer; reading from the primary", exc_info=True)
        connections[REPLICA].close()
    return "primary_unavailable"


def routed_read(workspace_id: int | None, read: Callable[[], T]) -> T:
    """Run `read` (a read, idempotent) on the replica when one is configured, this request has not
    written, and the replica has replayed the workspace's read fence; otherwise on the primary, and on the
    primary again when the replica's connection fails midway (a lost connection, a query the standby
    cancelled for a conflict with recovery). served_by() then says which one answered."""
    if not replica_configured():
        _served_by.set(PRIMARY)
        return read()
    if _wrote.get() or connections[DEFAULT_DB_ALIAS].in_atomic_block:
        outcome = "primary_wrote"
    else:
        outcome = replica_caught_up(workspace_id)
    if not outcome.startswith(REPLICA):
        REPLICA_READS.labels(outcome=outcome).inc()
        _served_by.set(PRIMARY)
        return read()
    token = _read_alias.set(REPLICA)
    try:
        _served_by.set(REPLICA)
        result = read()
        REPLICA_READS.labels(outcome=outcome).inc()
        return result
    except OperationalError:
        if _wrote.get():
            raise  # it wrote: not a read to run twice
        logger.warning("a read failed on the replica; reading from the primary", exc_info=True)
        REPLICA_READS.labels(outcome="primary_unavailable").inc()
        connections[REPLICA].close()
        _read_alias.set(None)
        _served_by.set(PRIMARY)
        return read()
    finally:
        _read_alias.reset(token)
