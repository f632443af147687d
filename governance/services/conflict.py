"""Conflicts: a new memory that contradicts an active one in the same scope is queued for review with both
shown (a `contradicts` relation and status `proposed`), never silently applied.

Two kinds of contradiction are detected: the same key with a different text, and — for unkeyed facts,
preferences and conventions — a near-identical statement of the opposite polarity ("always X" vs
"never X"), found with the trigram index and a small negation test."""

from __future__ import annotations

from django.db.models import Q

from governance.models import Kind, Memory, Principal, Relation, RelationKind, Status, lexical
from governance.services.audit import AuditEntry, audit_record
from governance.services.session_override import session_override_audit

# Kinds whose statements can contradict each other (traces of what happened cannot).
CHECKED_KINDS = (Kind.SEMANTIC, Kind.PREFERENCE, Kind.CONVENTION, Kind.METHOD, Kind.STAGE_FACT)
NEGATIONS = frozenset(
    "not no never don't dont doesn't doesnt isn't isnt aren't arent won't wont cannot can't avoid without "
    "不 没 没有 别 不要 勿 禁止 无需".split()
)
# Share of the content words two statements must have in common to be "about the same thing".
OVERLAP = 0.6
MAX_CANDIDATES = 20

REASON_SAME_KEY = "Same key as an active memory, different text."
REASON_NEGATION = "Says the opposite of an active memory (one is negated)."


def _polarity_and_terms(text: str) -> tuple[bool, set[str]]:
    lowered = text.lower().replace("’", "'")
    words = set(lowered.replace(",", " ").replace(".", " ").split())
    negated = bool(words & NEGATIONS) or any(n in lowered for n in NEGATIONS if not n.isascii())
    content = {t for t in lexical.terms(text) if t not in NEGATIONS and t.rstrip("'t") not in NEGATIONS}
    return negated, content


def contradicts(a: str, b: str) -> bool:
    """Do two statements say opposite things about the same subject? Deliberately conservative: a
    false alarm costs a reviewer one click, a miss lets a contradiction into the packet."""
    neg_a, terms_a = _polarity_and_terms(a)
    neg_b, terms_b = _polarity_and_terms(b)
    if neg_a == neg_b or not terms_a or not terms_b:
        return False
    return len(terms_a & terms_b) / min(len(terms_a), len(terms_b)) >= OVERLAP


def find_conflicts(memory: Memory) -> list[tuple[Memory, str]]:
    """The active memories of the same scope that `memory` contradicts, with the reason."""
    if memory.kind not in CHECKED_KINDS or memory.purged_at:
        return []
    active = Memory.objects.filter(scope_id=memory.scope_id, status=Status.ACTIVE).exclude(pk=memory.pk)
    if memory.key:
        same_key = active.filter(key=memory.key).exclude(content_hash=memory.content_hash).first()
        return [(same_key, REASON_SAME_KEY)] if same_key else []
    if not memory.lexical:
        return []
    # `%` is pg_trgm's similarity operator (uses the trigram index); the negation test runs on the few hits.
    near = (
        active.filter(kind__in=CHECKED_KINDS, key__isnull=True)
        .filter(Q(lexical__trigram_similar=memory.lexical))
        .only("pk", "text", "scope_id", "status", "key", "revision", "confirmed_at")[:MAX_CANDIDATES]
    )
    return [(other, REASON_NEGATION) for other in near if contradicts(memory.text, other.text)]


def conflict_detect(*, memory: Memory, actor: Principal | None) -> list[Memory]:
    """Call inside the transaction that wrote `memory`: link it to every active memory it contradicts and
    put it in the review queue (candidate → proposed). Returns the contradicted memories."""
    if memory.status not in (Status.CANDIDATE, Status.PROPOSED):
        return []
    found = find_conflicts(memory)
    if not found:
        return []
    conflict_queue(memory=memory, found=found, actor=actor)
    return [other for other, _ in found]


def conflict_queue(*, memory: Memory, found: list[tuple[Memory, str]], actor: Principal | None) -> None:
    """Link `memory` `contradicts` to each (other, reason) and move a candidate to `proposed`, audited.
    Call inside the transaction that wrote `memory`."""
    for other, reason in found:
        Relation.objects.get_or_create(
            source=memory,
            target=other,
            kind=RelationKind.CONTRADICTS,
            defaults={"reason": reason, "actor": actor},
        )
    before = memory.status
    if before == Status.CANDIDATE:
        memory.status = Status.PROPOSED
        memory.save(update_fields=["status", "updated_at"])
    audit_record(
        actor=actor,
        entry=AuditEntry(
            "memory.conflict",
            "memory",
            str(memory.pk),
            memory.scope.path,
            before,
            memory.status,
            found[0][1],
            {"contradicts": [other.pk for other, _ in found]},
        ),
    )
    # A user's correction in a session sets the rule aside in that session: audited here, once.
    session_override_audit(memory=memory, rules=[other for other, _ in found], actor=actor)
