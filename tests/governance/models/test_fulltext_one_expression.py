"""One full-text expression (governance.models.fulltext): the database's generated column and turn index are
the expressions the module defines, no other product code spells a tsvector or a text search configuration,
and the memory keyword search (MemoryQuerySet.keyword) is answered by the stored vector's GIN index."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import connection, transaction

from governance.models import Memory, Status, fulltext
from governance.services.memory import MemoryInput, memory_forget, memory_record

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.django_db


def _generation_expression(cursor, table: str, column: str) -> str:
    cursor.execute(
        "SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d"
        " JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum"
        " WHERE d.adrelid = %s::regclass AND a.attname = %s AND a.attgenerated = 's'",
        [table, column],
    )
    (expression,) = cursor.fetchone()
    return expression


def _index_expression(cursor, index: str) -> str:
    cursor.execute(
        "SELECT pg_get_expr(i.indexprs, i.indrelid) FROM pg_index i WHERE i.indexrelid = %s::regclass",
        [index],
    )
    (expression,) = cursor.fetchone()
    return expression


def test_the_stored_vector_is_generated_by_the_modules_expression():
    """PostgreSQL prints both the same way (`'simple'::regconfig`), so the probe column, built from the
    constant, is compared with the column the migrations built."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE fulltext_probe (lexical text, v tsvector"
            f" GENERATED ALWAYS AS ({fulltext.MEMORY_VECTOR}) STORED) ON COMMIT DROP"
        )
        expected = _generation_expression(cursor, "pg_temp.fulltext_probe", "v")
        actual = _generation_expression(cursor, "governance_memory", fulltext.MEMORY_COLUMN)
    assert actual == expected == "to_tsvector('simple'::regconfig, lexical)"
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [fulltext.MEMORY_INDEX])
        assert f"gin (scope_id, {fulltext.MEMORY_COLUMN})" in cursor.fetchone()[0]
        # Migration 0041: the expression index the lists used is gone (nothing reads it).
        cursor.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'memory_lexical_fts'")
        assert cursor.fetchone()[0] == 0


def test_the_turn_query_index_is_the_modules_expression():
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE fulltext_turn_probe (query text) ON COMMIT DROP")
        cursor.execute(
            f"CREATE INDEX fulltext_turn_probe_fts ON fulltext_turn_probe USING gin (({fulltext.TURN_QUERY_VECTOR}))"
        )
        expected = _index_expression(cursor, "pg_temp.fulltext_turn_probe_fts")
        actual = _index_expression(cursor, fulltext.TURN_QUERY_INDEX)
    assert actual == expected == "to_tsvector('simple'::regconfig, query)"


FULLTEXT_SQL = re.compile(
    r"(?<![.\w])(?:to_tsvector|plainto_tsquery|websearch_to_tsquery|to_tsquery)\(|'(?:simple|english)'"
)


def test_no_other_product_module_spells_a_fulltext_expression():
    """Migrations record what was done (the test above holds them to the module); everything else asks
    governance.models.fulltext."""
    offenders = []
    for package in ("governance", "memoryui", "devtools"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts or path == ROOT / "governance/models/fulltext.py":
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if FULLTEXT_SQL.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert offenders == []


def _remember(scope, text, status="active"):
    item = MemoryInput(scope=scope, kind="semantic", text=text, source_kind="user", status=status)
    return memory_record(item=item, actor=None)


def test_keyword_matches_word_forms_every_term_and_never_a_forgotten_memory(project_scope, owner):
    exports = _remember(project_scope, "Exports go out as PPTX.")
    _remember(project_scope, "Invoices are due monthly.")
    pin = _remember(project_scope, "The door PIN is 4711.")
    memory_forget(memory_id=pin.pk, reason="a secret", actor=owner)
    mine = Memory.objects.filter(scope=project_scope)
    assert list(mine.keyword("exporting").values_list("pk", flat=True)) == [exports.pk]
    assert list(mine.keyword("exporting invoices")) == []  # every term, not any
    assert list(mine.keyword("PIN 4711")) == []
    assert list(mine.filter(status=Status.FORGOTTEN).keyword("PIN 4711")) == []
    assert list(mine.keyword("the ... !")) == []  # no terms: nothing, not everything


def test_keyword_is_answered_by_the_stored_vectors_gin_index(project_scope):
    _remember(project_scope, "Exports go out as PPTX.")
    sql, params = Memory.objects.keyword("exporting").values("pk").query.sql_with_params()
    assert f"{fulltext.MEMORY_COLUMN} @@ plainto_tsquery" in sql and "LIKE" not in sql.upper()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a tiny table: ask what the plan can use
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert fulltext.MEMORY_INDEX in plan, plan
