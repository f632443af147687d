"""Near-duplicates at write: a new memory that says nothing an existing one of the same scope and kind does
not say reinforces that one instead of being stored again; a repeat of a rule in force is proposed
instead, as the next revision of the rule it repeats (agents propose, people decide).

The rule, and why it is lexical (docs/governance.md "Near-duplicates", measured on the real LoCoMo file by
`manage.py measure_near_duplicates`):
- The embedder's cosine does not tell a near-duplicate from a distinct statement: the nearest *distinct*
  turn of a LoCoMo turn is at cosine p50 0.933 / p99 0.976, while a candidate and the turn it was read from
  (the same content) are at p50 0.853. A cosine threshold that merges paraphrases merges distinct turns.
- Word containment does: every content term (governance.models.lexical: lowercased, stemmed, stopwords
  out; CJK unigrams and bigrams) of the new text is in the existing one, with the same polarity (a
  negation word in one and not the other is a contradiction, governance/services/conflict.py), and the new
  text has at least MIN_TERMS terms and at least MIN_SHARE of the existing one's (a one-word note is not a
  duplicate of a paragraph that contains the word).
- So it runs in the write's transaction, before the embedding exists (the worker makes it later), over
  the stored tsvector (GIN index on scope and terms): one indexed query, no embedder call.

What it catches: repeats with fewer, the same or reordered words, the inflections the keyword stemmer folds,
punctuation and case. What it does not: paraphrases with other words ("The client wants PPTX." / "Client
prefers PPTX files."): no measured rule catches those without merging distinct LoCoMo turns; they stay
two memories for a reviewer."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction

from governance.models import (
    NEAR_DUPLICATE_OF,
    NEAR_DUPLICATES,
    Kind,
    Status,
    fulltext,
    lexical,
)
from governance.services.opposite import NEGATIONS

# Kinds whose memories are statements (episodes and working notes are records of what happened: two
# people saying the same thing are two events).
CHECKED_KINDS = (Kind.SEMANTIC, Kind.PREFERENCE, Kind.CONVENTION, Kind.METHOD, Kind.STAGE_FACT, Kind.EXTERNAL)
# Rules: written again, they are a proposal of the next revision, never merged nor in force by themselves.
RULE_KINDS = (Kind.CONVENTION, Kind.METHOD)
# Statuses an existing memory may have to absorb a repeat (what recall can still show).
TARGET_STATUSES = (Status.ACTIVE, Status.CANDIDATE, Status.PROPOSED)
MIN_TERMS = 2
MIN_SHARE = 0.5
MAX_CANDIDATES = 10
MERGED, OF = NEAR_DUPLICATES, NEAR_DUPLICATE_OF
MERGED_KEPT = 50  # the newest sources listed on the row; the count and the audit log keep the rest
REINFORCE_WEIGHT = 0.5

# Writes the service derives from memories already there (a promotion of repeated candidates, a reviewer's
# edit of a proposal) repeat them on purpose: never checked.
DERIVED = ("promotion", "edited_from", "reproposed")

CANDIDATES_SQL = (
    "SELECT id, text, key, revision, status FROM governance_memory"
    " WHERE scope_id = %s AND kind = %s AND task_type = %s AND status = ANY(%s) AND purged_at IS NULL"
    f" AND {fulltext.memory_matches('governance_memory', fulltext.plainto_tsquery())}"
    " ORDER BY (status = 'active') DESC, id LIMIT %s"
)


@dataclass(frozen=True)
class NearDuplicate:
    memory_id: int
    text: str
    key: str | None
    status: str
    share: float  # the new text's terms found in the existing one (1.0 by the rule)

    def as_dict(self) -> dict:
        return {"memory_id": self.memory_id, "share": round(self.share, 3), "status": self.status}


def enabled() -> bool:
    return settings.MEMORY_NEAR_DUPLICATES


def checked(kind: str, meta: dict | None) -> bool:
    """Is a write of this kind (and meta) checked for repeats? Statements, not derived, with the check on."""
    return (
        enabled()
        and kind in CHECKED_KINDS
        and not any(k in (meta or {}) for k in DERIVED)
        # A requirement the user states in a session is that session's (in force there at once: folded into
        # another session's row it would not be); services/requirements.py keeps the review queue to one item.
        and "requirement" not in (meta or {})
    )


def _negated(text: str) -> bool:
    lowered = text.lower().replace("’", "'")
    words = set(lowered.replace(",", " ").replace(".", " ").split())
    return bool(words & NEGATIONS) or any(n in lowered for n in NEGATIONS if not n.isascii())


def same_statement(new: str, old: str) -> float | None:
    """The share of `old`'s terms that `new` covers when `new` says nothing `old` does not (None otherwise)."""
    terms_new, terms_old = set(lexical.terms(new)), set(lexical.terms(old))
    if len(terms_new) < MIN_TERMS or not terms_new <= terms_old or _negated(new) != _negated(old):
        return None
    share = len(terms_new) / len(terms_old)
    return share if share >= MIN_SHARE else None


def lock_text(scope_id: int, digest: str) -> None:
    """Two writes of one text in one scope take turns, so the second finds the first (one row, not two)."""
    with transaction.get_connection().cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"near:{scope_id}:{digest}"])


def near_duplicate_find(
    *,
    scope_id: int,
    kind: str,
    text: str,
    task_type: str = "",
    statuses=TARGET_STATUSES,
) -> NearDuplicate | None:
    """The memory of this scope, kind and task type that a new `text` repeats, preferring one in force; None if none.
    The candidates are the rows holding every term of the new text (the tsvector's GIN index)."""
    if kind not in CHECKED_KINDS:
        return None
    words = " ".join(dict.fromkeys(lexical.terms(text)))
    if len(words.split()) < MIN_TERMS:
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            CANDIDATES_SQL, [scope_id, kind, task_type or "", list(statuses), words, MAX_CANDIDATES]
        )
        rows = cursor.fetchall()
    for pk, old_text, key, _revision, status in rows:
        share = same_statement(text, old_text)
        if share is not None:
            return NearDuplicate(pk, old_text, key, status, share)
    return None


def in_force_copy(memory) -> NearDuplicate | None:
    """The memory in force of `memory`'s scope, kind and task type that says all `memory` says (the repeat
    rule above; keyed or not), if `memory` is an unkeyed statement; None otherwise (a keyed one is a
    revision of its key: confirming it supersedes what is in force). Put in force beside it,
    `memory` would be a second copy: forgetting one would leave the statement in force through the other,
    and the packet would carry it twice (`memory_confirm` refuses; a person writing it `active` again
    reinforces it)."""
    if memory.key is not None or not enabled() or not memory.text:
        return None
    return near_duplicate_find(
        scope_id=memory.scope_id,
        kind=memory.kind,
        text=memory.text,
        task_type=memory.task_type,
        statuses=(Status.ACTIVE,),  # never `memory` itself: only a candidate or a proposal is confirmed
    )


def is_rule(kind: str, key: str | None) -> bool:
    return key is not None or kind in RULE_KINDS


def proposes(kind: str, found: NearDuplicate) -> bool:
    """A repeat of a rule in force is proposed as its next revision (for a person); a repeat of anything
    else, a rule still waiting for review included, reinforces it (one review item, not two)."""
    return found.status == Status.ACTIVE and is_rule(kind, found.key)


def absorbs(kind: str, found: NearDuplicate, *, in_force: bool) -> bool:
    """Does the memory a write repeats take the repeat in place of a row of its own?
    - A fact (not a rule) in force, or anything waiting for review: yes, except when a person with the right
      writes in force (`in_force`) what is still waiting for review: merged into the proposal, their
      decision was lost, the statement stayed a candidate and nothing was in force (an owner writing
      "Always copy the finance team on supplier invoices." after the agent's extractor had read it from the
      user's turn; the replay suite's unkeyed correction_in_conversation cases failed so). Their write is
      stored in force (`in_force_entry` marks the proposal).
    - A rule in force (`proposes`): only a person's write in force of the same words (every term of the
      rule, share 1): it says nothing new, and a second copy in force would outlive the first one's
      forget. Fewer words (a qualification left out) are a new revision the person writes for themselves."""
    if found.status != Status.ACTIVE:
        return not in_force
    if proposes(kind, found):
        return in_force and found.share >= 1.0
    return True


def in_force_entry(waiting_text: str, written) -> dict | None:
    """What a statement still waiting for review records (meta[OF]) when a person writes in force a row
    (`written`) that says all it says: the row in force, shown in the review queue; confirming the waiting
    one is then refused (`in_force_copy`). None when it says more than the row in force (it stays a
    proposal a reviewer may still confirm)."""
    share = same_statement(waiting_text, written.text)
    if share is None:
        return None
    return {
        "memory_id": written.pk,
        "share": round(share, 3),
        "status": Status.ACTIVE,
        "decision": "in_force",
    }


def proposal_entry(found: NearDuplicate) -> dict:
    """What a proposed revision records of the rule it repeats (meta[OF]), shown in review."""
    return {**found.as_dict(), "decision": "proposed"}
