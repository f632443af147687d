"""Scanners that look for a string in every place data can hide: all text/json columns of every public
table in PostgreSQL, and every key and value of a Redis database."""

from __future__ import annotations

import uuid

from django.db import connection


def unique_marker() -> str:
    # Ends in a digit so the keyword index's light stemmer leaves it whole; upper-case and long enough
    # never to occur by chance.
    return f"ZQX{uuid.uuid4().hex.upper()}7"


def postgres_hits(marker: str) -> list[str]:
    """`table.column` of every row in the public schema whose text, varchar or json(b) value contains it."""
    with connection.cursor() as cur:
        cur.execute(
            """
            SELECT c.table_name, c.column_name FROM information_schema.columns c
            JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema
            WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
              AND c.data_type IN ('text', 'character varying', 'json', 'jsonb', 'character', 'ARRAY', 'tsvector')
            """
        )
        columns = cur.fetchall()
        hits = []
        for table, column in columns:
            cur.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE %s', [f"%{marker}%"])
            if cur.fetchone()[0]:
                hits.append(f"{table}.{column}")
        return hits


def redis_hits(client, marker: str) -> list[str]:
    """Keys of the client's database whose name or value contains the marker (any Redis type)."""
    needle = marker.lower().encode()
    hits = []
    for key in client.scan_iter(count=1000):
        kind = client.type(key)
        if kind == b"string":
            values = [client.get(key) or b""]
        elif kind == b"list":
            values = client.lrange(key, 0, -1)
        elif kind == b"hash":
            values = [b for pair in client.hgetall(key).items() for b in pair]
        elif kind == b"set":
            values = list(client.smembers(key))
        elif kind == b"zset":
            values = client.zrange(key, 0, -1)
        elif kind == b"stream":
            values = [repr(client.xrange(key)).encode()]
        else:
            values = []
        if needle in key.lower() or any(needle in (v or b"").lower() for v in values):
            hits.append(key.decode(errors="replace"))
    return hits
