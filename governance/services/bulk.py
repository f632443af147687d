"""COPY-based bulk insert for the write paths that take thousands of rows at once.

Django's bulk_create builds one INSERT with a placeholder per value (about 40 000 for 1 000 memories),
and psycopg's client-side binding then spends most of the batch's time splitting that query string.
COPY streams the rows instead. Ids are drawn from the table's sequence first, in ascending order, so
callers get their primary keys back and rows keep the order they were given (the audit chain relies
on it). Triggers, CHECK, UNIQUE and foreign keys apply to COPY exactly as to INSERT.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Model

# Below this many rows a plain INSERT … RETURNING (one round trip) beats nextval + COPY (two).
COPY_MIN_ROWS = 32


def copy_insert(model: type[Model], objs: list[Model]) -> list[Model]:
    """Insert unsaved `objs` of `model` with COPY; sets their pk (ascending, in list order)."""
    if len(objs) < COPY_MIN_ROWS:
        return model._default_manager.bulk_create(objs) if objs else objs
    meta = model._meta
    connection = transaction.get_connection()  # the real wrapper, not the per-access proxy (hot loop below)
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [meta.db_table, meta.pk.column, len(objs)],
        )
        ids = sorted(row[0] for row in cursor.fetchall())
        for obj, pk in zip(objs, ids, strict=True):
            obj.pk = pk
        fields = list(meta.concrete_fields)
        columns = ", ".join(quote(f.column) for f in fields)
        with cursor.cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN") as copy:
            for obj in objs:
                copy.write_row([f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields])
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias
    return objs
