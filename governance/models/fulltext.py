"""The full-text expressions, written once. An expression an index was built on must be spelled exactly as
the index spells it or PostgreSQL reads every row instead, so nothing else writes `to_tsvector` or a text
search configuration (tests/governance/models/test_fulltext_one_expression.py holds that, and compares
these definitions with the ones the database has).

Memories: the keyword terms of `Memory.lexical` (governance.models.lexical: lowercased, lightly stemmed
words; CJK unigrams and bigrams) are kept by PostgreSQL as a stored generated column, `lexical_tsv`
(migration 0030, GENERATED ALWAYS AS MEMORY_VECTOR), indexed with the scope (`memory_scope_lexical_tsv`,
GIN over (scope_id, lexical_tsv)). Every keyword read, the memory lists' search (MemoryQuerySet.keyword)
and recall's keyword path (governance.recall.search), matches that column: no read recomputes the vector.
The column is not a model field, so no ORM read loads it.

Turns: the dashboard's turn search matches TURN_QUERY_VECTOR, the expression of index turn_query_fts
(migration 0032)."""

from __future__ import annotations

# `simple`: no stemming or stopwords of its own; governance.models.lexical did the language work already.
CONFIG = "simple"

MEMORY_VECTOR = f"to_tsvector('{CONFIG}', lexical)"
MEMORY_COLUMN = "lexical_tsv"
MEMORY_INDEX = "memory_scope_lexical_tsv"
TURN_QUERY_VECTOR = f"to_tsvector('{CONFIG}', query)"
TURN_QUERY_INDEX = "turn_query_fts"
# The pending list of every GIN index a read or a write scans, in kB (migration 0052 sets it; a rebuilt
# index must be given it again).
GIN_PENDING_LIST_KB = 64


def to_tsquery(arg: str = "%s") -> str:
    """A tsquery from tsquery syntax (`'a' | 'b'`, as governance.recall.search writes it)."""
    return f"to_tsquery('{CONFIG}', {arg})"


def plainto_tsquery(arg: str = "%s") -> str:
    """A tsquery holding every word of `arg`."""
    return f"plainto_tsquery('{CONFIG}', {arg})"


def websearch_to_tsquery(arg: str = "%s") -> str:
    """A tsquery from what a person types into a search box (quotes, `or`, `-word`)."""
    return f"websearch_to_tsquery('{CONFIG}', {arg})"


def memory_matches(table: str, tsquery: str) -> str:
    """SQL: the memory row `table` (a table name or an alias) matches `tsquery`, through the stored vector."""
    return f"{table}.{MEMORY_COLUMN} @@ {tsquery}"


def turn_query_matches(tsquery: str) -> str:
    """SQL: the turn's query matches `tsquery`, through the expression of index turn_query_fts."""
    return f"{TURN_QUERY_VECTOR} @@ {tsquery}"
