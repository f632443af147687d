"""A read whose database connection is dropped under it (pg_terminate_backend of the request's own backend,
as a failover or a restarted pooler does) is run once more on a fresh connection and answers 200; a write
is never run again (it answers 503 and its client's retry, with its idempotency key, decides); /context is
retried until it sends its turn, and not after (issue 23)."""

from __future__ import annotations

import contextlib

import psycopg
import pytest
from django.db import InterfaceError, OperationalError, connection, connections

from governance.models import Memory, Turn
from governance.runtime.dbretry import connection_lost, is_write
from governance.runtime.metrics import DB_READ_RETRIES
from governance.services.memory import MemoryInput, memory_record
from tests.conftest import token_client, wait_for

# The request's own connection is the one killed: no test transaction around it.
on_the_requests_connection = pytest.mark.django_db(transaction=True)


@contextlib.contextmanager
def backend_killed_at(marker: str, *, writes: bool | None = None):
    """Terminate the request's own PostgreSQL backend just before the first statement that contains
    `marker` (and is a write or a read, when `writes` says so) reaches it; yields the killed pids."""
    killed: list[int] = []
    side = connections.create_connection("default")

    def killer(execute, sql, params, many, context):
        if not killed and marker in sql and (writes is None or is_write(sql) == writes):
            pid = context["connection"].connection.info.backend_pid
            with side.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
                # pg_terminate_backend only signals: wait until the backend is really gone.
                wait_for(lambda: not _alive(cursor, pid), timeout=10, interval=0.01)
            killed.append(pid)
        return execute(sql, params, many, context)

    try:
        with connection.execute_wrapper(killer):
            yield killed
    finally:
        side.close()
        # A server's request_finished closes a broken connection; the test client does not send it.
        connection.close_if_unusable_or_obsolete()


def _alive(cursor, pid: int) -> bool:
    cursor.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid])
    return cursor.fetchone() is not None


def retries(outcome: str = "2xx") -> float:
    return DB_READ_RETRIES.labels(outcome=outcome)._value.get()


@pytest.fixture
def memory(project_scope):
    return memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="semantic",
            text="Slides use the 16:9 layout.",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )


@on_the_requests_connection
def test_a_get_whose_connection_is_dropped_mid_request_answers_200_on_a_fresh_one(agent, memory):
    client = token_client(agent)
    before = retries()
    with backend_killed_at('FROM "governance_memory"') as killed:
        response = client.get(f"/api/v1/memories/{memory.pk}")
    assert killed, "the backend was not killed: the test did not exercise the retry"
    assert response.status_code == 200, response.content
    assert response.json()["id"] == memory.pk
    assert retries() == before + 1


@on_the_requests_connection
def test_a_write_whose_connection_is_dropped_is_not_run_again(agent):
    client = token_client(agent)
    body = {"scope": "acme/slides", "kind": "semantic", "text": "Not twice.", "source": {"kind": "user"}}
    before = Memory.objects.filter(text="Not twice.").count()
    with backend_killed_at('INSERT INTO "governance_memory"') as killed:
        response = client.post("/api/v1/memories", body, format="json")
    assert killed
    assert response.status_code == 503 and response.json()["error"] == "service_unavailable"
    assert Memory.objects.filter(text="Not twice.").count() == before  # the statement never ran


@on_the_requests_connection
def test_context_is_retried_when_its_connection_drops_during_the_read_stages(agent, memory):
    client = token_client(agent)
    body = {"scope": "acme/slides", "query": "16:9 layout", "budget_tokens": 400}
    turns = Turn.objects.count()
    with backend_killed_at('FROM "governance_memory"', writes=False) as killed:
        response = client.post("/api/v1/context", body, format="json")
    assert killed
    assert response.status_code == 200, response.content
    assert Turn.objects.count() == turns + 1  # one turn: the first attempt stored none


@on_the_requests_connection
def test_context_is_not_retried_once_its_turn_was_sent(agent, memory):
    client = token_client(agent)
    body = {"scope": "acme/slides", "query": "16:9 layout", "budget_tokens": 400}
    turns = Turn.objects.count()
    with backend_killed_at('"governance_turn"', writes=True) as killed:
        response = client.post("/api/v1/context", body, format="json")
    assert killed
    assert response.status_code == 503
    assert Turn.objects.count() == turns


def _wrapped(cause: Exception, kind=OperationalError) -> Exception:
    exc = kind(str(cause))
    exc.__cause__ = cause
    return exc


@pytest.mark.parametrize(
    ("exc", "lost"),
    [
        (_wrapped(psycopg.errors.AdminShutdown("terminating connection due to administrator command")), True),
        (_wrapped(psycopg.OperationalError("server closed the connection unexpectedly")), True),
        (InterfaceError("connection already closed"), True),
        (_wrapped(psycopg.errors.DeadlockDetected("deadlock detected")), False),
        (_wrapped(psycopg.errors.LockNotAvailable("could not obtain lock")), False),
        (_wrapped(psycopg.errors.QueryCanceled("canceling statement due to statement timeout")), False),
    ],
    ids=["admin-shutdown", "socket-closed", "closed", "deadlock", "lock-timeout", "statement-timeout"],
)
def test_only_a_lost_connection_counts_as_dropped(exc, lost):
    assert connection_lost(exc) is lost


@pytest.mark.parametrize(
    ("sql", "write"),
    [
        ('SELECT "governance_memory"."id" FROM "governance_memory"', False),
        ("SELECT 1 FOR UPDATE", False),
        ("SAVEPOINT s1", False),
        ("WITH t AS (SELECT 1) SELECT * FROM t", False),
        ('WITH t AS (INSERT INTO "governance_turn" VALUES (1) RETURNING id) INSERT INTO x SELECT 1', True),
        ('INSERT INTO "governance_memory" VALUES (1)', True),
        ('UPDATE "governance_memory" SET x = 1', True),
        ("COPY governance_memory FROM STDIN", True),
    ],
)
def test_a_statement_that_may_change_data_counts_as_a_write(sql, write):
    assert is_write(sql) is write
