"""A memory's vector and keyword tsvector stay in its row (migration 0051): an exact search computes a
distance per eligible row and the keyword score several `@@` per match, and a column moved to the TOAST
table made each one a TOAST probe (on the LoCoMo dev import the vector query took 9.5 ms instead of 1.4,
the keyword query 12.3 instead of 1.3)."""

from __future__ import annotations

from django.db import connection

from governance.recall.eligible import WITHOUT_SUPERSEDED, Eligibility
from governance.recall.vector import nearest


def _toast_chunks() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'governance_memory'::regclass"
        )
        toast = cursor.fetchone()[0]
        cursor.execute(f"SELECT count(*) FROM {toast}")
        return cursor.fetchone()[0]


def test_the_vector_column_is_stored_plain_and_rows_stay_whole_up_to_a_page(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attstorage FROM pg_attribute WHERE attrelid = 'governance_memory'::regclass"
            " AND attname = 'embedding'"
        )
        assert cursor.fetchone()[0] == "p"
        cursor.execute("SELECT reloptions FROM pg_class WHERE oid = 'governance_memory'::regclass")
        assert "toast_tuple_target=8160" in cursor.fetchone()[0]


def test_embedding_a_turn_puts_nothing_in_toast_and_search_still_finds_it(project_scope, remember):
    # A conversation turn as imported: its text, lexical form and tsvector make the row pass 2 KB with the
    # vector, which pgvector's default storage (EXTERNAL) then moved out of the row.
    text = "Caroline: I went to a support group yesterday and it was so powerful, we talked for hours. " * 3
    memory = remember(project_scope, text, embed=False, kind="episodic")
    before = _toast_chunks()
    from governance.propagation import embed_memories

    embed_memories([memory.pk])
    memory.refresh_from_db()
    assert memory.embedding is not None
    assert _toast_chunks() == before
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_toast_chunk_id(embedding), pg_column_toast_chunk_id(lexical_tsv),"
            " pg_column_compression(lexical_tsv) FROM governance_memory WHERE id = %s",
            [memory.pk],
        )
        assert cursor.fetchone() == (None, None, None)  # in the row, uncompressed: nothing to fetch or unpack
    from django.utils import timezone

    eligibility = Eligibility(scope_ids=(project_scope.pk,), statuses=WITHOUT_SUPERSEDED, at=timezone.now())
    found = nearest(eligibility, memory.embedding, 1, mode="exact")
    assert found[0][0] == memory.pk and found[0][1] > 0.99
