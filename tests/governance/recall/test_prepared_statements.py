"""The read path's statements are prepared on the server (governance/runtime/prepared.py): the same text on
every request, planned once per connection instead of once per request, with the same answers; and
ordinary client-side statements when DB_PREPARED_STATEMENTS is off (a pooler in transaction mode)."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance.recall import recall_memories
from governance.runtime.prepared import prepared_cursor

QUERY = "how are invoices numbered"


def _prepared() -> dict[str, int]:
    """This session's prepared statements: their text → how often they ran (custom + generic plans)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        return dict(cursor.fetchall())


def _store(remember, scope) -> None:
    remember(scope, "Invoices are numbered INV-YYYY-NNNN", kind="convention", key="invoice_format")
    remember(scope, "We sent the invoice for March late", kind="episodic")
    remember(scope, "The invoice template lives in the finance folder")


def _recall(agent, scope) -> list[int]:
    return [r["memory_id"] for r in recall_memories(principal=agent, scope=scope, query=QUERY, k=5)]


def test_a_recalls_searches_and_row_reads_run_as_prepared_statements(agent, project_scope, remember):
    _store(remember, project_scope)
    first = _recall(agent, project_scope)
    assert first
    second = _recall(agent, project_scope)  # the second run on this connection prepares them
    prepared = _prepared()
    vector = [s for s in prepared if s.startswith("WITH q AS MATERIALIZED")]
    counts = [s for s in prepared if s.startswith("SELECT t, least(")]  # the keyword terms' rarity
    rows = [s for s in prepared if "m.id = ANY($" in s]
    assert vector and counts and rows, sorted(prepared)
    assert all("$1" in s for s in vector + counts + rows)  # values are bound, not written into the text
    third = _recall(agent, project_scope)
    after = _prepared()
    assert all(after[s] > prepared[s] for s in vector + counts), "the third run reused the statements"
    assert first == second == third


def test_the_keyword_search_and_its_fallback_are_planned_with_each_runs_values(
    agent, project_scope, other_workspace_scope, remember
):
    """A search narrowed to the caller's scopes keeps no plan: the plan PostgreSQL would keep for every
    run reads every workspace's matches (measured: the trigram fallback 157 ms against 10.5 planned with
    its values, with long turns of other scopes in the table; runtime/prepared.py)."""
    for i in range(30):
        remember(
            other_workspace_scope,
            f"invoices numbered by hand, batch {i}: " + "a long line of ledger notes " * 20,
        )
    _store(remember, project_scope)
    for query in (QUERY, "invoise numberd", "how are invoices numbered"):  # a misspelling takes the fallback
        for _ in range(7):  # past the five custom plans after which PostgreSQL would settle on one
            recall_memories(principal=agent, scope=project_scope, query=query, k=5)
    prepared = _prepared()
    assert not [s for s in prepared if "ts_rank(" in s or "word_similarity(" in s], sorted(prepared)
    assert [s for s in prepared if s.startswith("SELECT t, least(")]
    misspelled = "invoise numberd"
    with CaptureQueriesContext(connection) as queries:
        ids = [
            r["memory_id"]
            for r in recall_memories(principal=agent, scope=project_scope, query=misspelled, k=5)
        ]
    sent = [q["sql"] for q in queries.captured_queries]
    assert any("word_similarity(" in s for s in sent) and any("ts_rank(" in s for s in sent)  # both ran
    assert ids == [
        r["memory_id"] for r in recall_memories(principal=agent, scope=project_scope, query=misspelled, k=5)
    ]


def test_with_prepared_statements_off_nothing_is_prepared_and_the_answer_is_the_same(
    agent, project_scope, remember, settings
):
    _store(remember, project_scope)
    on = [_recall(agent, project_scope) for _ in range(3)]
    before = _prepared()
    assert before
    settings.DB_PREPARED_STATEMENTS = False
    off = [_recall(agent, project_scope) for _ in range(3)]
    assert _prepared() == before  # none added, none run again
    assert on == off


def test_the_query_log_shows_a_prepared_statement_with_its_values(agent, project_scope, remember):
    """Tests and DEBUG read the statements a request sent: a prepared execution is logged as Django logs
    its own, values written in (psycopg keeps no text of it)."""
    _store(remember, project_scope)
    _recall(agent, project_scope)
    with CaptureQueriesContext(connection) as queries:
        _recall(agent, project_scope)
    sql = [q["sql"] for q in queries.captured_queries]
    assert all(isinstance(s, str) for s in sql)
    vector = [s for s in sql if s.startswith("WITH q AS MATERIALIZED")]
    assert len(vector) == 1 and "$1" not in vector[0] and "::vector" in vector[0]
    with prepared_cursor(connection) as cursor:
        cursor.execute("SELECT %s::text LIKE 'INV%%'", ["INV-2026"])
        assert cursor.fetchone() == (True,)


def test_the_token_lookup_of_every_api_request_is_prepared(agent, project_scope):
    from tests.conftest import token_client

    client = token_client(agent)
    for _ in range(2):
        assert client.get("/api/v1/memories").status_code == 200
    lookups = [s for s in _prepared() if "t.key_hash = $1" in s]
    assert len(lookups) == 1
