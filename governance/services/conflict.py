"""Conflicts: a new memory that contradicts an active one in the same scope is queued for review with both
shown (a `contradicts` relation and status `proposed`), never silently applied.

Two kinds of contradiction are detected: the same key with a different text, and — for unkeyed facts,
preferences and conventions — a near-identical statement of the opposite polarity ("always X" vs
"never X"), found with the trigram index and a small negation test."""

from __future__ import annotations

import re

from django.contrib.postgres.search import TrigramDistance, TrigramSimilarity
from django.db.models import Q, QuerySet, Value
from django.db.models.expressions import RawSQL

from governance.models import Kind, Memory, Principal, Relation, RelationKind, Status, lexical
from governance.services import subject
from governance.services.audit import AuditEntry, audit_record
from governance.services.opposite import contradicts
from governance.services.outbox import outbox_emit
from governance.services.session_override import session_override_audit
from governance.services.values import values_in

# Kinds whose statements can contradict each other (traces of what happened cannot).
CHECKED_KINDS = (Kind.SEMANTIC, Kind.PREFERENCE, Kind.CONVENTION, Kind.METHOD, Kind.STAGE_FACT)
MAX_CANDIDATES = 20
# Up to this many statements to compare with, similarity is computed on each of them (read by id).
FEW = 500
# What `%` compares with. pg_trgm defines its settings in a session only once the library is loaded there
# (by its first trigram function), so on a new connection the plain current_setting() was an error (a 500
# of the four-eyes check); `missing_ok` gives NULL there, and pg_trgm's own default stands in for it. A
# value set in postgresql.conf or by ALTER ... SET exists before the load and is read as it is.
PG_TRGM_DEFAULT_THRESHOLD = 0.3
THRESHOLD = (
    "coalesce(nullif(current_setting('pg_trgm.similarity_threshold', true), '')::real, "
    f"{PG_TRGM_DEFAULT_THRESHOLD})"
)

REASON_SAME_KEY = "Same key as an active memory, different text."
REASON_NEGATION = "Says the opposite of an active memory (one is negated)."


def opposes(older: str, newer: str) -> str | None:
    """The one test of whether a statement sets aside another about the same thing, for conflict detection,
    four-eyes and a user's correction of a rule in force: it says the opposite (`contradicts`) or names another
    value of one sort for the same subject (`changed_value`). The reason, or None."""
    if contradicts(older, newer):
        return REASON_NEGATION
    if changed_value(older, newer, cued=bool(CHANGE_CUES.search(newer))):
        return REASON_OTHER_VALUE
    return None


# Keyed statements in force compared by their text with an unkeyed write (their own key is compared by key).
KEYED_READ = 200


def keyed_statements(rows: QuerySet) -> QuerySet:
    """The keyed statements of `rows`, the newest KEYED_READ: few per scope (one per key in force)."""
    return rows.filter(kind__in=CHECKED_KINDS, key__isnull=False).order_by("-pk")[:KEYED_READ]


def nearest_statements(rows: QuerySet, lexical_text: str) -> QuerySet:
    """`rows` whose `lexical` is trigram-similar (`%`) to `lexical_text`, the most similar first.

    Two steps, so that no estimate of the planner can send it through the trigram index of the whole
    table. First the ids of `rows`, at most FEW + 1 in id order, from the index of active unkeyed statements
    by scope (migration 0053; the order is what makes it the plan whatever the estimate: a scan hoping to
    stop early read 201,855 rows). When they are few, similarity is computed on those rows, read by
    primary key. Only a scope with more than FEW of them is searched through the trigram index of active
    unkeyed statements (migration 0046); the order by distance makes the planner read the similar rows from
    it. Measured at 100,000 candidates in the written scope and 50,000 active statements in another
    (`bench_write --near-duplicates`, docs/benchmarks.md): in one query, the planner estimated 33,458
    active rows in the scope for the one there was, read the whole table's trigram index (47,460 rows of
    every scope) and took 160 ms to 3.4 s per write."""
    ids = list(rows.order_by("pk").values_list("pk", flat=True)[: FEW + 1])
    if not ids:
        return rows.none()
    if len(ids) <= FEW:
        return similar_by_id(ids, lexical_text)
    rows = rows.filter(lexical__trigram_similar=lexical_text)
    return rows.order_by(TrigramDistance("lexical", Value(lexical_text)), "pk")


def similar_by_id(ids: list[int], lexical_text: str) -> QuerySet:
    """The memories of `ids` (read by primary key) trigram-similar to `lexical_text`, the most similar first."""
    # `%` is similarity ≥ pg_trgm's threshold; written as the function, no index can serve it.
    similar = Memory.objects.filter(pk__in=ids).alias(
        similarity=TrigramSimilarity("lexical", Value(lexical_text))
    )
    return similar.filter(similarity__gte=RawSQL(THRESHOLD, [])).order_by(
        TrigramDistance("lexical", Value(lexical_text)), "pk"
    )


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
    # `%` is pg_trgm's similarity operator; the negation test runs on the few hits.
    fields = ("pk", "text", "scope_id", "status", "key", "revision", "confirmed_at")
    near = nearest_statements(active.filter(kind__in=CHECKED_KINDS, key__isnull=True), memory.lexical).only(
        *fields
    )[:MAX_CANDIDATES]
    found = [(other, reason) for other in near if (reason := opposes(other.text, memory.text))]
    # A keyed statement it sets aside by its text: only when one does (two keyed formats in force and "Change
    # the export format to PDF": which one is meant is the reviewer's to say, as in correction.py).
    keyed = [
        (other, reason)
        for other in keyed_statements(active).only(*fields)
        if (reason := opposes(other.text, memory.text))
    ]
    return found + keyed if len(keyed) == 1 else found


def later_contradictions(memory: Memory) -> list[Memory]:
    """The statements still waiting for review in `memory`'s scope that say the opposite of it and were said
    after it: the contradictions `find_conflicts` could not see when they were written, because `memory`
    was not in force yet (an agent's extractor read "Always copy the finance team on supplier invoices."
    from a user's turn; days later the user said "From now on, do not copy the finance team…" in a
    session; then a person confirmed the rule). The newest FEW of them are compared."""
    if memory.kind not in CHECKED_KINDS or memory.key or not memory.lexical or memory.purged_at:
        return []
    said = memory.occurred_at or memory.created_at
    pending = Memory.objects.filter(
        scope_id=memory.scope_id,
        status__in=(Status.CANDIDATE, Status.PROPOSED),
        kind__in=CHECKED_KINDS,
        key__isnull=True,
        purged_at__isnull=True,
    ).exclude(pk=memory.pk)
    if said is not None:
        pending = pending.filter(Q(occurred_at__gt=said) | Q(occurred_at__isnull=True, created_at__gt=said))
    ids = list(pending.order_by("-pk").values_list("pk", flat=True)[:FEW])
    if not ids:
        return []
    # Whole rows with their scope: `conflict_queue` and `fix_at_proposal` read both for each one queued.
    near = similar_by_id(ids, memory.lexical).select_related("scope")[:MAX_CANDIDATES]
    return [other for other in near if contradicts(other.text, memory.text)]


def queue_later_contradictions(*, memory: Memory, actor: Principal | None) -> list[Memory]:
    """Call inside the transaction that put `memory` in force: each statement waiting for review that was
    said after it and says the opposite (`later_contradictions`) is linked to it and queued, as if it were
    written now; a user's correction in a session then sets it aside there (recall/session.py reads that
    link). Returns the statements queued."""
    if memory.status != Status.ACTIVE:
        return []
    found = later_contradictions(memory)
    for later in found:
        before = later.status
        conflict_queue(memory=later, found=[(memory, REASON_NEGATION)], actor=actor)
        if later.status != before:  # a new item waits for review: caches, webhooks (review.waiting)
            outbox_emit(
                topic="memory.status",
                memory=later,
                payload={"memory_ids": [later.pk], "status": later.status},
            )
    return found


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


def conflict_queue(
    *, memory: Memory, found: list[tuple[Memory, str]], actor: Principal | None, propose: bool = True
) -> None:
    """Link `memory` `contradicts` to each (other, reason) and move a candidate to `proposed` (unless not
    `propose`: a session's requirement that replaces its own earlier one is linked, and stays its session's),
    audited. Call inside the transaction that wrote `memory`."""
    for other, reason in found:
        Relation.objects.get_or_create(
            source=memory,
            target=other,
            kind=RelationKind.CONTRADICTS,
            defaults={"reason": reason, "actor": actor},
        )
    before = memory.status
    if before == Status.CANDIDATE and propose:
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


# --- Unkeyed contradictions: similarity plus the wording of a change -----------------------------------
# "We use MySQL." and, later, "The team has moved to PostgreSQL." share no key and no word; what tells a
# reader they disagree is that the two are about the same thing (their embeddings are close: the caller,
# governance/recall/disputes.py, finds the pair by vector) and that the later one says something changed
# and names another value. Proposed for a person to confirm (a Dispute), never applied.
REASON_CHANGE = "A later statement about the same thing says it changed, and names another value."
REASON_UNKEYED_NEGATION = "A later statement about the same thing says the opposite."
REASON_OTHER_VALUE = "The same subject with another value."
# The wording of a change, in the newer statement. Deliberately the explicit ones: "now" or "new" alone
# are everywhere in conversation ("I'm now painting a lot") and would flood review.
CHANGE_CUES = re.compile(
    r"\b(?:mov(?:ed|ing)|switch(?:ed|ing)?|migrat(?:ed|ing)|chang(?:ed|ing)|transition(?:ed|ing)|"
    r"shift(?:ed|ing)|convert(?:ed|ing))(?: \w+){0,3}? (?:to|over to|from)\b"
    r"|\bno longer\b|\bnot \w+(?: \w+)? any ?more\b|\binstead(?: of)?\b|\breplac(?:ed|ing)\b|"
    r"\bstopped using\b|\bnow (?:use|uses|using|run|runs|on|in|is|are|lives?)\b|\bfrom now on\b|"
    r"\bhas become\b|\bdropped\b"
    r"|改用|换成|换到|换为|改成|改为|改到|迁移到|迁到|搬到|转到|转向|不再|已经不|现在用|现在改|取代|代替|替换|替代|弃用",
    re.IGNORECASE,
)
# Words that only say *that* something changed: never the subject, never the new value.
CHANGE_WORDS = frozenset(
    lexical.terms(
        "moved moving move switched switch migrated migrate changed change transitioned shifted converted "
        "to over from no longer instead replaced stopped using now on in has become dropped any more anymore "
        "use used uses run runs 改用 换成 换到 改成 改为 改到 迁移 迁到 搬到 转到 转向 不再 已经 现在 "
        "取代 代替 替换 替代 弃用 用 使用"
    )
)
# Words around a change that name neither its subject nor its value.
FUNCTION_WORDS = frozenset(
    lexical.terms(
        "has have had been already now just recently finally officially also all the team we our us i my "
        "they their it its this that there everyone everybody company group 团队 我们 他们 大家 已经 现在 "
        "终于 正式 也 都 把 了 啦 吧"
    )
)
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff"
_HAS_CJK = re.compile(f"[{_CJK}]")
_CJK_CHAR = re.compile(f"^[{_CJK}]$")
# A value is named: a capitalised word inside a sentence (MySQL, GitHub), an acronym, a number, a
# CamelCase or versioned name; in Chinese text any Latin or number run, and the words right after a
# change wording ("改为美元").
_WORD = re.compile(r"[A-Za-z][\w.+#-]*[\w+#]|[A-Za-z]|\d[\w.:%]*")
_SENTENCE_END = re.compile(r"(?:^|[.!?:;。！？：；]\s*)$")
_CJK_AFTER_CUE = re.compile(
    f"(?:改用|换成|换到|换为|改成|改为|改到|迁移到|迁到|搬到|转到|转向)([{_CJK}A-Za-z0-9]{{1,8}}?)(?:了|的|[，。,.!！？]|$)"
)
_SUBJECT_VALUE = re.compile(r"^\s*([^:：=]{2,60})[:：=]\s*(\S.*)$")
# A Chinese statement that names a value says so ("用的是", "使用", "采用", "是", "为", "在…上"); one
# that does not ("周五团队沟通比较少") has no value to be replaced.
_CJK_STATES = re.compile(r"用|是|为|在|采用")


_TEMPORAL = re.compile(
    # Whole names of days and months only: "MongoDB", "Marketing" and "Sunbeam" are not dates.
    r"^(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?s?$|^(?:wednes|satur)days?$|"
    r"^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)$|"
    r"^(?:january|february|march|april|june|july|august|september|october|november|december)$|"
    r"^\d|^(?:am|pm|noon|midnight)$|周[一二三四五六日天]|星期|[点时]|[上下]午|晚上|早上|[月号日]$"
)


def _temporal(value: str) -> bool:
    """A day, month, hour or number: the value of a when, not of a what."""
    return bool(_TEMPORAL.search(value))


def change_cues(text: str) -> list[str]:
    """The change wording found in `text`, lowercased ("moved … to", "no longer", "改用"): the words between
    a verb and its "to" are the text's own and are left out, so a dispute keeps no fragment of a memory
    that may be forgotten later."""
    out = set()
    for m in CHANGE_CUES.finditer(text):
        words = m.group(0).lower().split()
        out.add(
            " ".join(words)
            if len(words) <= 2 or words[0] in ("no", "now", "from")
            else f"{words[0]} … {words[-1]}"
        )
    return sorted(out)


def named_values(text: str) -> set[str]:
    """The values a statement names (lowercased): see _WORD; "I" is no value."""
    cjk = bool(_HAS_CJK.search(text))
    out = set()
    for m in _WORD.finditer(text):
        word = m.group(0)
        named = (
            cjk
            or any(ch.isdigit() for ch in word)
            or (word[0].isupper() and word != "I" and not _SENTENCE_END.search(text[: m.start()]))
            or (len(word) > 1 and word.isupper())
            or any(ch.isupper() for ch in word[1:])
        )
        if named:
            out.add(word.lower())
    out.update(m.group(1).lower() for m in _CJK_AFTER_CUE.finditer(text))
    return out


def _subject_terms(text: str, values: set[str]) -> set[str]:
    value_terms = {t for v in values for t in lexical.words(v)} | {
        t for v in values for t in lexical.terms(v)
    }
    return {
        str(t)
        for t in lexical.words(text)
        if t not in CHANGE_WORDS
        and t not in FUNCTION_WORDS
        and t not in value_terms
        and not _CJK_CHAR.match(t)
    }


# The newer statement names the older one's value as what it no longer is: "send PPTX from now on, not
# PDF", "GitLab instead of Jenkins", "不是PDF". Matched against each value of the older statement.
_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|\bno (?:more|longer)|\binstead of|\brather than|\bno|不是|不要|不再用|而不是|别用)\W{0,3}$",
    re.IGNORECASE,
)
# How much of what the older statement says about its subject the newer one must repeat: "We host the
# decks on Dropbox." (host, deck) shares half with "We have moved the decks to SharePoint."; "Export the
# Q3 review deck as PPTX (the client edits it in PowerPoint)." (export, review, deck, client, edit) shares
# one word in five, and is about a format, not where the decks live.
SUBJECT_SHARE = 0.5


def _negated_values(older_values: set[str], newer: str) -> set[str]:
    """The older statement's values that the newer one names right after a negation ("not PDF")."""
    lowered = newer.lower()
    out = set()
    for value in older_values:
        start = lowered.find(value)
        while start >= 0:
            if _NEGATED_BEFORE.search(lowered[:start]):
                out.add(value)
                break
            start = lowered.find(value, start + 1)
    return out


def _own_subject(text: str, values: set[str]) -> set[str]:
    """What `text` says about its subject, beyond its values and the words of a change: its content words
    (Chinese cut into words by jieba; a single character says too little alone)."""
    return _subject_terms(text, values)


def _shares_subject(older: str, newer: str, old_values: set[str]) -> bool:
    """Does the newer statement repeat at least SUBJECT_SHARE of what the older one says about its subject?"""
    own = _own_subject(older, old_values)
    if not own:
        return True
    newer_words = {str(w) for w in lexical.words(newer)} | set(lexical.terms(newer))
    shared = {t for t in own if t in newer_words}
    return len(shared) >= SUBJECT_SHARE * len(own)


def _values_of(text: str) -> dict[str, str | None]:
    """What a statement names: each value's canonical form → its sort (a format, a store, a weekday), and
    each name → None (a person, a place, a product the word lists do not know)."""
    out: dict[str, str | None] = {v.norm: v.sort for v in values_in(text)}
    sorted_words = {t for v in values_in(text) for t in lexical.terms(v.text)}
    for name in subject.names(text):
        if name not in sorted_words and name not in out:
            out[name] = None
    return out


def changed_value(older: str, newer: str, *, cued: bool = False) -> bool:
    """Two statements of fact about the same subject, the newer one naming another value of the same sort
    where the older one named its own (a new store, a new place, a new owner): "订单服务的数据存在MySQL里" /
    "订单服务现在把数据放在PostgreSQL上", "The quarterly offsite is held in Lisbon." / "This year the quarterly
    offsite takes place in Porto.". Same subject by services/subject.py; a statement whose subject is only
    its value ("我用MySQL") counts when the newer one says that it changed (`cued`)."""
    was, now = _values_of(older), _values_of(newer)
    lowered_old, lowered_new = older.lower(), newer.lower()
    dropped = {v: sort for v, sort in was.items() if v not in now and v not in lowered_new}
    fresh = {v: sort for v, sort in now.items() if v not in was and v not in lowered_old}
    if not dropped or not fresh or (not cued and subject.ADDITIVE.search(newer)):
        return False
    # One value replaced by one of its kind: a sort by the same sort, a name by a name or a value the lists
    # know; never a time by a thing.
    if not any(
        (a == b or a is None or b is None) and _temporal(x) == _temporal(y)
        for x, a in dropped.items()
        for y, b in fresh.items()
    ):
        return False
    # What is said of the value, not a clause added beside it ("…，方便财务修改", "…, so finance can edit").
    older, newer = _value_clauses(older), _value_clauses(newer)
    if subject.same_subject(older, newer):
        return True
    return cued and not (subject.of(older) and subject.of(newer))


_CLAUSE = re.compile(r"[,，;；]\s*")


def _value_clauses(text: str) -> str:
    """The clauses of `text` that name a value (all of it when none does, or it has one clause)."""
    clauses = [c for c in _CLAUSE.split(text) if c.strip()]
    if len(clauses) < 2:
        return text
    named = [c for c in clauses if _values_of(c)]
    return "，".join(named) if named else text


def unkeyed_contradiction(older: str, newer: str, *, facts: bool = True) -> tuple[str, list[str]] | None:
    """Whether `newer`, said after `older` about the same thing (the caller checked their similarity),
    reads as replacing it: the reason and the cues, or None. Three tests, each cheap and conservative:
    the same "subject: value" with another value; one negated and the other not, on the same words
    (conflict detection's own test, when both are statements of fact: `facts`); a change wording in the newer one naming a value the older one
    does not have, while the older one names one the newer does not."""
    a, b = _SUBJECT_VALUE.match(older), _SUBJECT_VALUE.match(newer)
    if a and b and set(lexical.terms(a.group(1))) == set(lexical.terms(b.group(1))):
        if set(lexical.terms(a.group(2))) != set(lexical.terms(b.group(2))):
            return REASON_OTHER_VALUE, ["same subject, other value"]
        return None
    # Negation is a cue between statements of fact (conflict detection's own test, for its kinds only);
    # between turns of a conversation it is mostly talk ("no matter what", "don't forget to rest"): on the
    # LoCoMo dev file it proposed 4 pairs, all wrong, and nothing else did.
    if facts and contradicts(older, newer):
        return REASON_UNKEYED_NEGATION, ["negation"]
    cues = change_cues(newer)
    if facts and changed_value(older, newer, cued=bool(cues)):
        return REASON_OTHER_VALUE, cues or ["same subject, other value"]
    if not cues:
        return None
    old_values, new_values = named_values(older), named_values(newer)
    lowered_old = older.lower()
    # The newer one names a value the older one does not mention, and the older one names one the newer
    # one does not (or, in Chinese, where values need not be Latin words: says what it changed to).
    fresh = {v for v in new_values if v not in lowered_old}
    negated = _negated_values(old_values, newer)
    dropped = (old_values - new_values) | negated
    if not fresh or not (dropped or (_CJK_AFTER_CUE.search(newer) and _CJK_STATES.search(older))):
        return None
    # One value replaced by another of its kind: a time by a time, a name by a name. "Production has
    # migrated to Hetzner." does not replace the day of "Production deploys happen on Tuesdays.".
    if dropped and not any(_temporal(d) == _temporal(f) for d in dropped for f in fresh):
        return None
    # About the same thing: the newer one's own subject words (beyond the change and its value) appear in
    # the older one, or it has none ("The team has moved to PostgreSQL.").
    if negated:
        return REASON_CHANGE, cues  # it names the value it replaces: about the same thing by its own words
    about = _subject_terms(newer, new_values)
    if about and not about & ({str(w) for w in lexical.words(older)} | set(lexical.terms(older))):
        return None
    # And the other way round: the older one is about what changed, not a longer statement that mentions
    # the same thing on the way.
    if not _shares_subject(older, newer, old_values):
        return None
    return REASON_CHANGE, cues
