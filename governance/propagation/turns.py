"""Redacting hard-forgotten memories from stored turns (packets, traces, requests, rendered text), live
and archived (turn retention moves old turns into governance_turnarchive; the same redactor rewrites them).

Fast path, in SQL: the forgotten text is read back from one stored packet (and checked against the
memory's content hash), then every JSON copy of it is replaced in one UPDATE per batch (`replace` on the
jsonb's text form, whole JSON strings only) and its one-line form in the rendered text. Whatever the fast
path cannot prove clean afterwards (a block whose text differs, a very short text) goes through the
Python redactor, which rewrites block by block and re-renders the text with render_packet_text."""

from __future__ import annotations

import json

from django.db import connection
from django.db.models import Q

from governance.models import Memory
from governance.redaction.redactor import KEEP_FIELDS, REDACTED, Redactor  # noqa: F401  (their old home)


def redact_json(value, ids: set[int], hashes: set[str]):
    """Return (a redacted copy of value, changed?) — see Redactor."""
    import copy

    return Redactor(ids, hashes).redact(copy.deepcopy(value))


def render_turn_text(packet: dict) -> str:
    from governance.redaction.render import render_packet_text

    return render_packet_text(packet)


def _related_ids(ids: set[int]) -> set[int]:
    """Memories linked to the forgotten ones: a packet can quote a memory inside another's block (the
    "replaced by" of a superseded memory) without citing it, so turns citing the neighbours are checked too."""
    from governance.models import Relation

    rel = Relation.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids)).values_list(
        "source_id", "target_id"
    )
    return {i for pair in rel for i in pair} - ids


# A block (or nested member) of memory $mid that still has content; or a contradiction block of the old form,
# one string "W (contradicts: L)" with no `contradicted` member, where $mid is the loser L.
HOLDING = (
    "'$.** ? ((@.memory_id == $mid && @.text != $red)"
    " || (@.contradicts == $mid && !(exists(@.contradicted)) && @.text != $red))'"
)

# Below this length a text could occur inside unrelated sentences of the rendered text: Python path only.
MIN_FAST_TEXT = 12


def redact_turns(memory_ids: list[int], *, batch_size: int = 500) -> int:
    """Redact the purged memories from every stored turn that cites them (or a memory related to them).
    Returns how many turns were checked. Idempotent: a redacted turn is left as it is."""
    from governance.models import Turn

    purged = dict(
        Memory.objects.filter(pk__in=memory_ids, purged_at__isnull=False).values_list("pk", "content_hash")
    )
    if not purged:
        return 0
    ids, hashes = set(purged), set(purged.values())
    related = _related_ids(ids)
    _redact_archives(ids | related, ids, hashes)
    turn_ids = list(
        Turn.objects.filter(cited__memory_id__in=ids | related)
        .distinct()
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if not turn_ids:
        return 0
    for memory_id, digest in purged.items():
        text = _stored_text(memory_id, digest, turn_ids)
        if text is not None and len(text) >= MIN_FAST_TEXT:
            for start in range(0, len(turn_ids), batch_size):
                _replace_in_sql(turn_ids[start : start + batch_size], text)
    _redact_in_python(_still_holding(turn_ids, ids), ids, hashes)
    return len(turn_ids)


def _stored_text(memory_id: int, digest: str, turn_ids: list[int]) -> str | None:
    """The forgotten text as a stored packet still holds it, if its hash proves it is that memory's text."""
    from governance.models import content_hash

    with connection.cursor() as cur:
        cur.execute(
            """
            SELECT jsonb_path_query_first(packet, '$.** ? (@.memory_id == $mid && @.text != $red).text',
                                          jsonb_build_object('mid', %s::bigint, 'red', %s::text)) #>> '{}'
              FROM governance_turn WHERE id = ANY(%s)
               AND jsonb_path_exists(packet, '$.** ? (@.memory_id == $mid && @.text != $red)',
                                     jsonb_build_object('mid', %s::bigint, 'red', %s::text))
             LIMIT 1
            """,
            [memory_id, REDACTED, turn_ids, memory_id, REDACTED],
        )
        row = cur.fetchone()
    text = row[0] if row else None
    return text if text is not None and content_hash(text) == digest else None


def _replace_in_sql(turn_ids: list[int], text: str) -> None:
    # jsonb's text form quotes and escapes strings one way only, so the quoted form matches every whole
    # JSON string equal to the text, and nothing that merely contains it.
    with connection.cursor() as cur:
        cur.execute("SELECT to_jsonb(%s::text)::text", [text])
        quoted = cur.fetchone()[0]
        # Each JSON column is serialised once (in the subquery) and only re-parsed where the text occurs.
        cur.execute(
            """
            UPDATE governance_turn AS t
               SET packet = CASE WHEN strpos(s.p, %(q)s) > 0 THEN replace(s.p, %(q)s, %(r)s)::jsonb ELSE t.packet END,
                   trace = CASE WHEN strpos(s.tr, %(q)s) > 0 THEN replace(s.tr, %(q)s, %(r)s)::jsonb ELSE t.trace END,
                   request = CASE WHEN strpos(s.rq, %(q)s) > 0 THEN replace(s.rq, %(q)s, %(r)s)::jsonb
                                  ELSE t.request END,
                   query = CASE WHEN t.query = %(t)s THEN %(red)s ELSE t.query END,
                   text = replace(t.text, %(line)s, %(red)s)
              FROM (SELECT id, packet::text AS p, trace::text AS tr, request::text AS rq
                      FROM governance_turn WHERE id = ANY(%(ids)s)) AS s
             WHERE t.id = s.id
               AND (strpos(s.p, %(q)s) > 0 OR strpos(s.tr, %(q)s) > 0 OR strpos(s.rq, %(q)s) > 0
                    OR t.query = %(t)s OR strpos(t.text, %(line)s) > 0)
            """,
            {
                "q": quoted,
                "r": json.dumps(REDACTED),
                "t": text,
                "red": REDACTED,
                "line": " ".join(text.split()),
                "ids": turn_ids,
            },
        )


def _still_holding(turn_ids: list[int], ids: set[int]) -> list[int]:
    """Turns where a block of a forgotten memory still has content (the fast path did not cover them)."""
    with connection.cursor() as cur:
        cur.execute(
            """
            SELECT t.id FROM governance_turn t, unnest(%s::bigint[]) AS m(id)
             WHERE t.id = ANY(%s)
               AND jsonb_path_exists(t.packet, HOLDING, jsonb_build_object('mid', m.id, 'red', %s::text))
            """.replace("HOLDING", HOLDING),
            [sorted(ids), turn_ids, REDACTED],
        )
        return sorted({row[0] for row in cur.fetchall()})


def _redact_in_python(turn_ids: list[int], ids: set[int], hashes: set[str], batch_size: int = 200) -> None:
    from governance.models import Turn

    redactor = Redactor(ids, hashes)
    for start in range(0, len(turn_ids), batch_size):
        rows = list(
            Turn.objects.filter(pk__in=turn_ids[start : start + batch_size]).values_list(
                "pk", "packet", "trace", "request", "query"
            )
        )
        dirty = []
        for pk, packet, trace, request, query in rows:
            packet, c1 = redactor.redact(packet)
            trace, c2 = redactor.redact(trace)
            request, c3 = redactor.redact(request)
            query, c4 = redactor.redact(query)
            if c1 or c2 or c3 or c4:
                dirty.append((pk, packet, trace, request, query, render_turn_text(packet)))
        _write_turns(dirty)


def _redact_archives(cited: set[int], ids: set[int], hashes: set[str], batch_size: int = 200) -> int:
    """Archived turns (turn retention) that cite a forgotten memory or a neighbour: the Python redactor,
    block by block, keyset-paged on the archive's GIN index of cited ids. Returns how many it rewrote."""
    from governance.models import TurnArchive

    redactor, after, rewritten = Redactor(ids, hashes), -1, 0
    while True:
        rows = list(
            TurnArchive.objects.filter(cited__overlap=sorted(cited), turn_id__gt=after)
            .order_by("turn_id")
            .values_list("turn_id", "packet", "trace", "request", "query")[:batch_size]
        )
        if not rows:
            return rewritten
        for pk, packet, trace, request, query in rows:
            packet, c1 = redactor.redact(packet)
            trace, c2 = redactor.redact(trace)
            request, c3 = redactor.redact(request)
            query, c4 = redactor.redact(query)
            if c1 or c2 or c3 or c4:
                TurnArchive.objects.filter(turn_id=pk).update(
                    packet=packet, trace=trace, request=request, query=query, text=render_turn_text(packet)
                )
                rewritten += 1
        after = rows[-1][0]


def _write_turns(rows: list[tuple]) -> None:
    """One UPDATE … FROM jsonb_to_recordset(…) per batch: Django's bulk_update builds a CASE per row and field, which
    costs seconds for a thousand packets (see docs/governance.md, benchmark)."""
    if not rows:
        return
    batch = [
        {"id": r[0], "packet": r[1], "trace": r[2], "request": r[3], "query": r[4], "text": r[5]}
        for r in rows
    ]
    with connection.cursor() as cur:
        # The whole batch as one JSON parameter: adapting thousands of array elements is slow in the driver.
        cur.execute(
            """
            UPDATE governance_turn AS t
               SET packet = v.packet, trace = v.trace, request = v.request, query = v.query, text = v.text
              FROM jsonb_to_recordset(%s::jsonb)
                   AS v(id bigint, packet jsonb, trace jsonb, request jsonb, query text, text text)
             WHERE t.id = v.id
            """,
            [json.dumps(batch)],
        )


def turns_still_holding_purged(limit: int = 100) -> list[tuple[int, int]]:
    """Drift check: (turn id, memory id) pairs where a stored packet, live or archived, still shows a purged
    memory's content."""
    with connection.cursor() as cur:
        cur.execute(
            """
            SELECT tm.turn_id, tm.memory_id FROM governance_turnmemory tm
            JOIN governance_memory m ON m.id = tm.memory_id AND m.purged_at IS NOT NULL
            JOIN governance_turn t ON t.id = tm.turn_id
            WHERE jsonb_path_exists(t.packet, HOLDING, jsonb_build_object('mid', tm.memory_id, 'red', %s::text))
            LIMIT %s
            """.replace("HOLDING", HOLDING),
            [REDACTED, limit],
        )
        pairs = [(row[0], row[1]) for row in cur.fetchall()]
        # Archived turns (turn retention): the same check through the archive's cited ids.
        cur.execute(
            """
            SELECT a.turn_id, m.id FROM governance_memory m
            JOIN governance_turnarchive a ON a.cited @> ARRAY[m.id]
            WHERE m.purged_at IS NOT NULL
              AND jsonb_path_exists(a.packet, HOLDING, jsonb_build_object('mid', m.id, 'red', %s::text))
            LIMIT %s
            """.replace("HOLDING", HOLDING),
            [REDACTED, limit],
        )
        return pairs + [(row[0], row[1]) for row in cur.fetchall()]


# The tables that hold stored turns, with their key: the live turns and the retention archive.
TURN_TABLES = (("governance_turn", "id"), ("governance_turnarchive", "turn_id"))


def redact_said_text(
    *,
    scope_ids: list[int],
    texts: list[str],
    cited_ids: list[int] | tuple[int, ...] = (),
    batch_size: int = 500,
) -> int:
    """In the transaction that forgets a memory (its text is still known there, and is kept nowhere after):
    every stored turn of these scopes (what could have seen the words: permissions.forget_reach) that holds
    one of `texts` (the memory's text, and each sentence of a longer one) loses it — its query or request,
    cited or not, asked before the memory was even written, and the packet, trace and rendered text of a
    turn that cites one of `cited_ids` (the turns its words were taken from, which a packet quotes inside
    a longer string). A string equal to a text becomes REDACTED whole; a text of at least
    MIN_FAST_TEXT characters is also replaced inside any longer string (a shorter one could be part of
    unrelated words). Found in SQL (`strpos` on the turns of these scopes only), rewritten here string by
    string so the JSON stays valid, live and archived turns alike. Returns how many turns changed."""
    texts = sorted({t for t in texts if t and t.strip()}, key=len, reverse=True)  # the whole before a part
    if not texts or not scope_ids:
        return 0
    inside = [t for t in texts if len(t) >= MIN_FAST_TEXT]
    lines = [" ".join(t.split()) for t in inside]
    with connection.cursor() as cur:
        cur.execute(
            "SELECT (SELECT array_agg(to_jsonb(t)::text) FROM unnest(%s::text[]) AS t),"
            " (SELECT array_agg(to_jsonb(t)::text) FROM unnest(%s::text[]) AS t)",
            [texts, lines],
        )
        quoted, quoted_lines = cur.fetchone()
        quoted_lines = quoted_lines or []
        # Inside any JSON string for a long text, a whole JSON string for a short one.
        needles = [q[1:-1] if len(t) >= MIN_FAST_TEXT else q for t, q in zip(texts, quoted, strict=True)]
        found = {}
        for table, pk in TURN_TABLES:
            cited = (
                "t.id IN (SELECT turn_id FROM governance_turnmemory WHERE memory_id = ANY(%(cited)s))"
                if table == "governance_turn"
                else "t.cited && %(cited)s::bigint[]"
            )
            cur.execute(
                f"""
                SELECT t.{pk}, t.query, t.request, t.packet, t.trace, t.text FROM {table} t
                 WHERE t.scope_id = ANY(%(scopes)s)
                   AND (t.query = ANY(%(texts)s)
                        OR EXISTS (SELECT 1 FROM unnest(%(inside)s::text[]) n WHERE strpos(t.query, n) > 0)
                        OR EXISTS (SELECT 1 FROM unnest(%(needles)s::text[]) n
                                    WHERE strpos(t.request::text, n) > 0
                                       OR ({cited} AND (strpos(t.packet::text, n) > 0
                                                        OR strpos(t.trace::text, n) > 0)))
                        OR ({cited} AND EXISTS (SELECT 1 FROM unnest(%(lines)s::text[]) n
                                                 WHERE strpos(t.text, n) > 0)))
                """,
                {
                    "scopes": list(scope_ids),
                    "texts": texts,
                    "inside": inside,
                    "needles": needles,
                    "lines": lines,
                    "cited": list(cited_ids),
                },
            )
            found[(table, pk)] = cur.fetchall()

    # Each JSON column is rewritten in its text form (str.replace: the structural walk cost ~0.9 ms a
    # packet): a whole JSON string equal to a text, then a long text (or its one-line form) inside any
    # string, both in the escaped form PostgreSQL wrote them in. A result that does not parse (a needle
    # cut through an escape) falls back to the walk over the parsed value.
    whole = [(q, json.dumps(REDACTED)) for q in quoted]
    inner = [(n, REDACTED) for n in needles if not n.startswith('"')] + [
        (q[1:-1], REDACTED) for q in quoted_lines
    ]
    short = len(inside) < len(texts)

    def scrub(value):
        if isinstance(value, str):
            if value in texts:
                return REDACTED
            for text, line in zip(inside, lines, strict=True):
                value = value.replace(text, REDACTED).replace(line, REDACTED)
            return value
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    def rewritten(raw) -> tuple[str, bool]:
        raw = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        new = raw
        for old, replacement in (*whole, *inner):
            new = new.replace(old, replacement)
        if new == raw:
            return raw, False
        try:
            json.loads(new)
        except ValueError:
            return json.dumps(scrub(json.loads(raw)), ensure_ascii=False), True
        return new, True

    def turn(pk, query, request, packet, trace, rendered) -> dict:
        packet, changed = rewritten(packet)
        # A short text is no safe substring of the rendering: a packet it changed is rendered again.
        text = render_turn_text(json.loads(packet)) if changed and short else scrub(rendered)
        return {
            "id": pk,
            "query": scrub(query),
            "request": rewritten(request)[0],
            "packet": packet,
            "trace": rewritten(trace)[0],
            "text": text,
        }

    total = 0
    for (table, pk_column), rows in found.items():
        changed = [turn(*row) for row in rows]
        with connection.cursor() as cur:
            for start in range(0, len(changed), batch_size):
                cur.execute(
                    f"""
                    UPDATE {table} AS t SET query = v.query, request = v.request::jsonb,
                           packet = v.packet::jsonb, trace = v.trace::jsonb, text = v.text
                      FROM jsonb_to_recordset(%s::jsonb)
                           AS v(id bigint, query text, request text, packet text, trace text, text text)
                     WHERE t.{pk_column} = v.id
                    """,
                    [json.dumps(changed[start : start + batch_size])],
                )
        total += len(changed)
    return total
