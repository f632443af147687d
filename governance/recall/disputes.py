"""Finding unkeyed contradictions once a memory has its vector: its nearest neighbours in its own scope
(the one pgvector query, governance/recall/vector.py) that the conflict rule reads as replaced or replacing
(governance.services.conflict.unkeyed_contradiction: a change wording naming another value, a negation,
the same subject with another value) are proposed as disputes for a person to decide
(governance/services/dispute.py). It runs after every embedding delivery (registered on
governance.propagation.stores.after_embedding), so the write path itself pays nothing.

It lives here, not beside the rule in services, because services sit below the read path and may not
run the vector query. Only statements are compared: tool calls and results, small talk and long texts
(a document's paragraphs, a whole LongMemEval turn) are not, and two speakers never contradict each other
(one says what she uses, the other what he moved to)."""

from __future__ import annotations

import logging

from django.db import connection
from django.db.models.functions import Length
from django.utils import timezone

from governance.models import RECALLABLE, Kind, Memory, RelationKind, SourceKind
from governance.propagation.stores import after_embedding
from governance.recall.eligible import Eligibility
from governance.recall.vector import nearest
from governance.services.conflict import CHECKED_KINDS, unkeyed_contradiction
from governance.services.dispute import dispute_propose

logger = logging.getLogger(__name__)

DISPUTED_KINDS = (*CHECKED_KINDS, Kind.EPISODIC)
# Nearest neighbours read per memory, and how close one must be to be "about the same thing". The
# similarity was measured (`manage.py measure_disputes`, docs/governance.md): the model's cosine of two
# statements about the same subject with another value sits above it; the cue test does the rest.
NEIGHBOURS = 8
MIN_SIMILARITY = 0.80
MAX_CHARS = 400
NOT_STATEMENTS = ("tool_call", "tool_result")
_COLUMNS = (
    "m.text, m.speaker, m.kind, m.status, COALESCE(m.occurred_at, m.created_at) AS at,"
    " COALESCE(m.meta->>'role', '') AS role, (m.meta @> '{\"small_talk\": true}') AS small_talk,"
    " m.call_id, m.source_kind,"
    " EXISTS (SELECT 1 FROM governance_relation r WHERE r.source_id = m.id AND r.kind = 'derived_from')"
    " AS extracted",
    [],
)


def _tool_turn(role: str, call_id: str, source_kind: str) -> bool:
    """A tool call or its result: a trace of what happened, never a statement that can be replaced. Known
    by its role, or by its call id or source (a turn written straight through the memory service, as the
    demo's are, has no role): two exports in two formats are two calls, not a contradiction."""
    return role in NOT_STATEMENTS or bool(call_id) or source_kind == SourceKind.TOOL_RESULT


def _statement(text: str, role: str, small_talk: bool, call_id: str = "", source_kind: str = "") -> bool:
    return (
        bool(text)
        and len(text) <= MAX_CHARS
        and not _tool_turn(role, call_id, source_kind)
        and not small_talk
    )


def is_statement(memory: Memory) -> bool:
    """Whether a stored memory is compared at all (the same test its neighbours pass)."""
    meta = memory.meta or {}
    return _statement(
        memory.text, meta.get("role", ""), bool(meta.get("small_talk")), memory.call_id, memory.source_kind
    )


def candidate_pairs(memory: Memory, vector) -> list[tuple[int, float, tuple[str, list[str]], bool]]:
    """(other id, similarity, (reason, cues), memory_is_newer) for each neighbour the rule flags."""
    eligibility = Eligibility(scope_ids=(memory.scope_id,), statuses=RECALLABLE, at=timezone.now())
    at = memory.occurred_at or memory.created_at
    found = []
    for other_id, similarity, row in nearest(eligibility, vector, NEIGHBOURS + 1, columns=_COLUMNS):
        if other_id == memory.pk or similarity < MIN_SIMILARITY:
            continue
        if row["kind"] not in DISPUTED_KINDS or not _statement(
            row["text"], row["role"], row["small_talk"], row["call_id"], row["source_kind"]
        ):
            continue
        if row["extracted"]:
            continue  # a fact read from a turn: the turn itself is compared
        if (memory.speaker or "") != (row["speaker"] or ""):
            continue
        newer = (at, memory.pk) > (row["at"], other_id)
        older_text, newer_text = (row["text"], memory.text) if newer else (memory.text, row["text"])
        facts = Kind.EPISODIC not in (memory.kind, row["kind"])
        verdict = unkeyed_contradiction(older_text, newer_text, facts=facts)
        if verdict is not None:
            found.append((other_id, similarity, verdict, newer))
    return found


def propose_disputes(memory_ids: list[int]) -> int:
    """Propose a dispute for every pair the rule flags among these memories' neighbours. Idempotent (a pair
    already proposed, decided or linked is skipped). Returns how many were proposed."""
    memories = (
        Memory.objects.filter(
            pk__in=memory_ids,
            purged_at__isnull=True,
            status__in=RECALLABLE,
            kind__in=DISPUTED_KINDS,
            embedding__isnull=False,
        )
        .annotate(chars=Length("text"))
        .filter(chars__lte=MAX_CHARS)
        .exclude(meta__contains={"small_talk": True})
        # A fact read from a turn (extraction links it derived_from) says what the turn says: the turn is
        # compared, and one dispute is proposed, not two.
        .exclude(relations_out__kind=RelationKind.DERIVED_FROM)
        .select_related("scope")
    )
    proposed = 0
    for memory in memories:
        if not is_statement(memory):
            continue
        for other_id, similarity, (reason, cues), newer in candidate_pairs(memory, memory.embedding):
            other = Memory.objects.select_related("scope").get(pk=other_id)
            pair = (memory, other) if newer else (other, memory)
            if dispute_propose(newer=pair[0], older=pair[1], similarity=similarity, reason=reason, cues=cues):
                proposed += 1
    return proposed


@after_embedding
def _after_embedding(memory_ids: list[int]) -> None:
    from django.conf import settings

    if not settings.MEMORY_DISPUTES:
        return
    try:
        propose_disputes(memory_ids)
    except Exception:  # derived proposals: a failure here must not fail the embedding that succeeded
        logger.exception("proposing disputes after embedding %d memories failed", len(memory_ids))


# --- In the packet: a pair in dispute -------------------------------------------------------------------
_OPEN_SQL = (
    "SELECT id, newer_id, older_id, reason FROM governance_dispute WHERE state = 'proposed' AND newer_id = ANY(%s)"
    " UNION SELECT id, newer_id, older_id, reason FROM governance_dispute WHERE state = 'proposed'"
    " AND older_id = ANY(%s) ORDER BY id"
)
# The other end of a dispute of which only one end was recalled ranks just below it.
OTHER_END_SHARE = 0.9


def mark_disputes(state, pool: dict) -> int:
    """Adjudication's reading of proposed disputes: both memories stay evidence, each block says it is
    in dispute with the other and which one is newer (`in_dispute`, and a flag). A pair of which the
    query found one end brings the other (when eligible for the caller), so the agent sees both. Nothing
    here decides: a person does (governance/services/dispute.py). One query, none when no row read is in
    dispute (the `disputed` column of recall.COLUMNS); returns the pairs marked."""
    from governance.recall.recall import fetch
    from governance.recall.state import Hit

    # A memory may be both a recent turn and a search hit: both of its blocks are marked.
    seen: dict[int, list] = {}
    for hit in [*pool.values(), *state.recent]:
        if hit not in seen.setdefault(hit.id, []):
            seen[hit.id].append(hit)
    # Each row the search stages read says whether a dispute touches it (recall.COLUMNS): no query otherwise.
    ids = [i for i, hits in seen.items() if hits[0].row.get("disputed", True)]
    if not ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(_OPEN_SQL, [ids, ids])
        open_disputes = cursor.fetchall()
    if not open_disputes:
        return 0
    missing = {i for _, n, o, _ in open_disputes for i in (n, o)} - set(seen)
    rows = fetch(state, sorted(missing), statuses=RECALLABLE) if missing else {}
    marked = 0
    for dispute_id, newer_id, older_id, reason in open_disputes:
        for memory_id, partner_id in ((newer_id, older_id), (older_id, newer_id)):
            if memory_id not in seen and memory_id in rows:
                partner = seen[partner_id][0]
                brought = state.hits[memory_id] = Hit(
                    id=memory_id,
                    row=rows[memory_id],
                    paths={"in_dispute"},
                    fused=partner.fused * OTHER_END_SHARE,
                )
                seen[memory_id] = [brought]
        if newer_id not in seen or older_id not in seen:
            continue  # the other end is not the caller's to see (or no longer eligible)
        for memory_id in (newer_id, older_id):
            other = older_id if memory_id == newer_id else newer_id
            side = "this one is newer" if memory_id == newer_id else f"memory {newer_id} is newer"
            for hit in seen[memory_id]:
                # A memory in several disputes: the oldest one is described, every one is flagged.
                hit.extra.setdefault(
                    "in_dispute",
                    {
                        "dispute_id": dispute_id,
                        # The other side in a member of its own id, so forgetting it redacts exactly its text.
                        "with": {"memory_id": other, "text": seen[other][0].row["text"]},
                        "newer": newer_id,
                        "state": "proposed",
                        "reason": reason,
                    },
                )
                hit.flags.append(
                    f"in dispute with {other}: a proposed contradiction a person has not decided; {side}"
                )
        marked += 1
    return marked
