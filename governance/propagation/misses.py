"""Forgetting reaches the misses an evaluation run kept (governance.models.EvaluationMiss): a missed
question quotes turns of the uploaded file (its evidence and the top hits, cut to a bound), its question
and its gold answer; a run's questions are also listed in its results. These are copies of the team's
words outside every memory row, so a forget in the run's workspace must take its words out of them, as
it does out of the stored turns (propagation.turns.redact_said_text), in the forget's transaction while
the text is known (services/memory/words.py calls `redact_misses_said_text`).

The rule for one quoted string, given the forgotten text and its sentences (`pieces`) and the content
hashes of the forgotten memories: the string is replaced whole by REDACTED when
- the whole turn it was cut from had one of the hashes (a forget of a turn longer than the kept text);
- it equals a piece, or holds a piece of at least MIN_FAST_TEXT characters (a shorter one could be part
  of unrelated words, as for the stored turns);
- it was cut and ends with the start (at least MIN_FAST_TEXT characters) of a piece: the forgotten words
  began before the cut.
A whole quote goes, not only the words: a miss is for studying the ranking, and the words around a
forgotten sentence are its context. The ref, rank and score stay."""

from __future__ import annotations

import json

from django.db import connection

from governance.models import EvaluationMiss, EvaluationRun, Memory, Status, lexical
from governance.propagation.turns import MIN_FAST_TEXT, REDACTED

MAX_SENTENCES = 48


def holds(value: str, pieces: list[str], *, cut: bool = False) -> bool:
    """Whether a quoted string holds one of the forgotten pieces (see the module's rule)."""
    if not value or value == REDACTED:
        return False
    for piece in pieces:
        if value == piece or (len(piece) >= MIN_FAST_TEXT and piece in value):
            return True
        if cut and len(piece) >= MIN_FAST_TEXT:
            longest = min(len(piece), len(value))
            if any(value.endswith(piece[:j]) for j in range(longest, MIN_FAST_TEXT - 1, -1)):
                return True
    return False


def _scrub_turns(turns: list[dict], pieces: list[str], hashes: set[str]) -> bool:
    changed = False
    for turn in turns:
        if turn.get("text") == REDACTED:
            continue
        if (turn.get("hash") and turn["hash"] in hashes) or holds(
            turn.get("text") or "", pieces, cut=bool(turn.get("cut"))
        ):
            turn.update(text=REDACTED, hash="", redacted=True)
            changed = True
    return changed


def scrub_miss(miss: EvaluationMiss, pieces: list[str], hashes: set[str]) -> list[str]:
    """Redact `miss` in place; the names of the fields that changed."""
    fields = []
    for name in ("evidence", "hits"):
        if _scrub_turns(getattr(miss, name), pieces, hashes):
            fields.append(name)
    for name in ("question", "answer"):
        if holds(getattr(miss, name), pieces, cut=True):
            setattr(miss, name, REDACTED)
            fields.append(name)
    if fields:
        miss.redacted = True
        fields.append("redacted")
    return fields


def with_sentences(texts: list[str]) -> list[str]:
    """Each text, and each sentence of a longer one long enough to be looked for inside other words."""
    pieces = [t for t in texts if t and t.strip()]
    for text in list(pieces):
        pieces += [s for s in lexical.sentences(text)[:MAX_SENTENCES] if len(s) >= MIN_FAST_TEXT]
    return sorted(set(pieces), key=len, reverse=True)


def _needles(pieces: list[str]) -> list[str]:
    """What a row holding a piece must contain (its start covers "inside" and "cut through" alike)."""
    return sorted({p[:MIN_FAST_TEXT] if len(p) >= MIN_FAST_TEXT else p for p in pieces})


def redact_misses_said_text(*, workspace_id: int, texts: list[str], hashes: list[str] = ()) -> int:
    """In the transaction that forgets a memory of `workspace_id`: every miss of that workspace's runs,
    and every question its runs' results list, that holds the forgotten words loses them. Candidates are
    found in SQL (`strpos` on the JSON text of this workspace's runs only), decided here string by string.
    Returns how many misses and runs changed."""
    pieces = with_sentences(texts)
    hashes = {h for h in hashes if h}
    if not pieces and not hashes:
        return 0
    needles = _needles(pieces)
    escaped = [json.dumps(n, ensure_ascii=False)[1:-1] for n in needles] + sorted(hashes)
    with connection.cursor() as cur:
        cur.execute(
            """
            SELECT m.id FROM governance_evaluationmiss m JOIN governance_evaluationrun r ON r.id = m.run_id
             WHERE r.workspace_id = %(ws)s
               AND (EXISTS (SELECT 1 FROM unnest(%(escaped)s::text[]) n
                             WHERE strpos(m.evidence::text, n) > 0 OR strpos(m.hits::text, n) > 0)
                    OR EXISTS (SELECT 1 FROM unnest(%(needles)s::text[]) n
                                WHERE strpos(m.question, n) > 0 OR strpos(m.answer, n) > 0))
            """,
            {"ws": workspace_id, "escaped": escaped, "needles": needles},
        )
        miss_ids = [row[0] for row in cur.fetchall()]
        cur.execute(
            """
            SELECT r.id FROM governance_evaluationrun r
             WHERE r.workspace_id = %(ws)s
               AND EXISTS (SELECT 1 FROM unnest(%(escaped)s::text[]) n WHERE strpos(r.results::text, n) > 0)
            """,
            {"ws": workspace_id, "escaped": escaped},
        )
        run_ids = [row[0] for row in cur.fetchall()]
    changed = 0
    for miss in EvaluationMiss.objects.filter(pk__in=miss_ids).order_by("pk"):
        fields = scrub_miss(miss, pieces, hashes)
        if fields:
            miss.save(update_fields=fields)
            changed += 1
    for run in EvaluationRun.objects.filter(pk__in=run_ids).order_by("pk"):
        tasks = (run.results or {}).get("tasks") or []
        hit = [t for t in tasks if holds(str(t.get("question") or ""), pieces)]
        if hit:
            for task in hit:
                task["question"] = REDACTED
            run.save(update_fields=["results"])
            changed += 1
    return changed


def forgotten_words_in(
    *, workspace_id: int, quotes: list[str], hashes: list[str]
) -> tuple[list[str], set[str]]:
    """When a run stores its misses: the words and hashes of the memories of its workspace already
    forgotten that these quotes hold (a forget that happened while the run measured, or before: the
    uploaded file may hold words the team has forgotten). Hard-forgotten memories are found by hash only
    (their text is kept nowhere)."""
    found_hashes = set(
        Memory.objects.filter(
            scope__workspace_id=workspace_id, status=Status.FORGOTTEN, content_hash__in=set(hashes)
        ).values_list("content_hash", flat=True)
    )
    quotes = [q for q in quotes if q]
    texts: list[str] = []
    if quotes:
        with connection.cursor() as cur:
            cur.execute(
                """
                SELECT m.text FROM governance_memory m JOIN governance_scope s ON s.id = m.scope_id
                 WHERE s.workspace_id = %(ws)s AND m.status = %(forgotten)s AND m.text <> ''
                   AND (m.text = ANY(%(quotes)s)
                        OR length(m.text) >= %(min)s AND EXISTS (
                             SELECT 1 FROM unnest(%(quotes)s::text[]) q WHERE strpos(q, left(m.text, %(min)s)) > 0))
                """,
                {"ws": workspace_id, "forgotten": Status.FORGOTTEN, "quotes": quotes, "min": MIN_FAST_TEXT},
            )
            texts = [row[0] for row in cur.fetchall()]
    return with_sentences(texts), found_hashes
