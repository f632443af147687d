"""A read whose database connection is dropped under it (pg_terminate_backend of the request's own backend,
as a failover or a restarted pooler does) is run once more on a fresh connection and answers 200; a write
whose transaction the server cut committed nothing and is run again, stored once; a request that committed a
write, or sent one whose outcome is unknown, is never run again (it answers 503 and its client decides;
issue 23)."""

from __future__ import annotations

import contextlib

import psycopg
import pytest
from django.db import InterfaceError, OperationalError, connection, connections, transaction
from django.test import Client

from governance.models import ApiToken, Memory, Turn
from governance.runtime.dbretry import Attempt, connection_lost, is_write
from governance.runtime.metrics import DB_RETRIES
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
    return DB_RETRIES.labels(outcome=outcome)._value.get()


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
def test_a_write_whose_transaction_the_server_cut_is_run_again_and_stored_once(agent):
    """Terminated before its INSERT ran (57P01): the write committed nothing, so running it again is what
    its client would do, and it is stored once."""
    client = token_client(agent)
    body = {"scope": "acme/slides", "kind": "semantic", "text": "Once.", "source": {"kind": "user"}}
    with backend_killed_at('INSERT INTO "governance_memory"') as killed:
        response = client.post("/api/v1/memories", body, format="json")
    assert killed
    assert response.status_code == 201, response.content
    assert Memory.objects.filter(text="Once.").count() == 1


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
def test_context_whose_turn_statement_met_a_dropped_connection_is_retried_and_stores_one_turn(agent, memory):
    """The server had ended the connection before the turn's statement arrived (57P01): it never ran, so
    running the request again stores the one turn."""
    client = token_client(agent)
    body = {"scope": "acme/slides", "query": "16:9 layout", "budget_tokens": 400}
    turns = Turn.objects.count()
    with backend_killed_at('"governance_turn"', writes=True) as killed:
        response = client.post("/api/v1/context", body, format="json")
    assert killed
    assert response.status_code == 200, response.content
    assert Turn.objects.count() == turns + 1


@on_the_requests_connection
def test_the_dashboard_sign_in_is_retried_when_its_connection_drops_before_it_writes(owner):
    client = Client()
    # Killed before its first write (the password check before it takes the time: a drop lands there).
    with backend_killed_at("", writes=True) as killed:
        response = client.post("/accounts/login/", {"username": "olivia", "password": "pw-olivia"})
    assert killed
    assert response.status_code == 302, response.content
    assert client.get("/").status_code == 200  # signed in


def _kill_own_backend() -> None:
    pid = connection.connection.info.backend_pid
    side = connections.create_connection("default")
    try:
        with side.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
            wait_for(lambda: not _alive(cursor, pid), timeout=10, interval=0.01)
    finally:
        side.close()


@on_the_requests_connection
def test_a_request_that_committed_a_write_is_not_retried_after_a_lost_connection(agent):
    attempt = Attempt()
    with connection.execute_wrapper(attempt):
        ApiToken.objects.filter(principal=agent).update(last_used_at=None)  # autocommit: committed
        _kill_own_backend()
        with pytest.raises(OperationalError):
            ApiToken.objects.count()
    connection.close()
    assert attempt.lost and attempt.wrote and not attempt.may_retry


@on_the_requests_connection
def test_a_transaction_cut_by_a_lost_connection_committed_nothing_and_may_run_again(agent):
    attempt = Attempt()
    with connection.execute_wrapper(attempt):
        with pytest.raises(OperationalError), transaction.atomic():
            ApiToken.objects.filter(principal=agent).update(last_used_at=None)
            _kill_own_backend()
            ApiToken.objects.count()
    connection.close()
    assert attempt.lost and not attempt.wrote and attempt.may_retry


@on_the_requests_connection
def test_a_transaction_that_ended_without_committing_or_being_cut_keeps_a_request_from_running_again(agent):
    """A write's transaction that neither committed nor met the lost connection (its COMMIT may have failed
    with the outcome unknown, or it rolled back): a later lost connection does not make the request safe."""
    attempt = Attempt()
    with connection.execute_wrapper(attempt):
        with pytest.raises(RuntimeError), transaction.atomic():
            ApiToken.objects.filter(principal=agent).update(last_used_at=None)
            raise RuntimeError("rolled back, or a COMMIT whose answer was lost")
        _kill_own_backend()
        with pytest.raises(OperationalError):
            ApiToken.objects.count()
    connection.close()
    assert attempt.lost and not attempt.may_retry


@on_the_requests_connection
def test_a_hook_that_runs_after_a_commit_and_meets_the_lost_connection_does_not_make_it_retryable(agent):
    """An on_commit hook registered before the transaction's first write runs before the tracker's own
    hook; a statement it sends after the commit that meets the dropped connection must not make the
    committed request look retryable."""
    attempt = Attempt()

    def after_commit() -> None:
        _kill_own_backend()
        ApiToken.objects.count()

    with connection.execute_wrapper(attempt):
        with pytest.raises(OperationalError), transaction.atomic():
            transaction.on_commit(after_commit)  # before the write: it runs first
            ApiToken.objects.filter(principal=agent).update(last_used_at=None)
    connection.close()
    assert attempt.lost and attempt.wrote and not attempt.may_retry


def test_a_write_whose_outcome_the_lost_connection_left_unknown_counts_as_committed():
    attempt = Attempt()

    def socket_closed(sql, params, many, context):
        raise _wrapped(psycopg.OperationalError("server closed the connection unexpectedly"))

    with pytest.raises(OperationalError):
        attempt(socket_closed, 'UPDATE "x" SET y = 1', None, False, {"connection": connection})
    assert attempt.lost and attempt.wrote and not attempt.may_retry


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


# --- Writes under an Idempotency-Key: the key decides (governance/api/idempotency.py) --------------------
KEYED = {"scope": "acme/slides", "kind": "semantic", "text": "Keyed once.", "source": {"kind": "user"}}


@contextlib.contextmanager
def commit_lost(*, committed: bool):
    """The first COMMIT of the request's connection meets a lost connection, its outcome unknown to the
    client: `committed` — the server committed and then the connection went before the answer arrived
    (the client sees "server closed the connection unexpectedly"); otherwise the server's backend was
    terminated just before the COMMIT reached it (the transaction was aborted). Yields the killed pids."""
    killed: list[int] = []
    real = connection._commit

    def flaky_commit():
        if killed:
            return real()
        pid = connection.connection.info.backend_pid
        if committed:
            real()
        _kill_own_backend()
        killed.append(pid)
        if committed:
            cause = psycopg.OperationalError("server closed the connection unexpectedly")
            raise _wrapped(cause)
        return real()  # meets the terminated backend

    connection._commit = flaky_commit
    try:
        yield killed
    finally:
        del connection._commit
        connection.close_if_unusable_or_obsolete()


@pytest.mark.parametrize("committed", [True, False], ids=["committed", "aborted"])
@on_the_requests_connection
def test_a_keyed_write_whose_commit_met_a_lost_connection_is_run_again_and_stored_once(agent, committed):
    client = token_client(agent)
    before = retries()
    with commit_lost(committed=committed) as killed:
        response = client.post(
            "/api/v1/memories", KEYED, format="json", HTTP_IDEMPOTENCY_KEY="drop-at-commit"
        )
    assert killed, "the COMMIT never met the lost connection: the test did not exercise the retry"
    assert response.status_code == 201, response.content
    assert Memory.objects.filter(text="Keyed once.").count() == 1
    # Committed: the second run found the key and replayed the answer; aborted: it wrote once.
    assert (response.get("Idempotent-Replayed") == "true") is committed
    assert retries() == before + 1
    again = client.post("/api/v1/memories", KEYED, format="json", HTTP_IDEMPOTENCY_KEY="drop-at-commit")
    assert again.content == response.content and again["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize("committed", [True, False], ids=["committed", "aborted"])
@on_the_requests_connection
def test_without_a_key_a_write_whose_commit_met_a_lost_connection_answers_503(agent, committed):
    """As before keys: its outcome is unknown, so it is never run again here and its client decides."""
    client = token_client(agent)
    with commit_lost(committed=committed) as killed:
        response = client.post("/api/v1/memories", KEYED, format="json")
    assert killed
    assert response.status_code == 503, response.content
    assert Memory.objects.filter(text="Keyed once.").count() == (1 if committed else 0)


def test_a_keyed_attempt_may_run_again_after_a_lost_connection_even_if_it_wrote():
    attempt = Attempt()
    attempt.wrote = attempt.lost = True
    assert not attempt.may_retry
    attempt.keyed = True
    assert attempt.may_retry
    attempt.lost = False
    assert not attempt.may_retry  # a keyed write that failed on a live connection is its own answer
