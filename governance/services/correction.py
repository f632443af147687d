"""Corrections find the keyed fact they correct. "Change the export format to PDF instead." or
"导出格式改成PDF。" is extracted as a candidate; without a key, confirming it would leave the old keyed
fact ("Export format: PPTX") in force next to it. Before the candidates are written, each correction (and
each standing instruction "from now on …") is matched against the active keyed memories visible from the
event's scope and, when one key clearly wins, takes that key (and the corrected memory's kind). Then the
usual machinery applies: same scope → conflict detection links it `contradicts` and queues it, and
confirming it supersedes the old revision; ancestor scope → the key is set in the event's scope (it
overrides the ancestor's value there once confirmed) and `corrections_link` adds the `contradicts`
relation to the ancestor's memory so the reviewer sees both.

Matching is lexical (governance.models.lexical terms: stemmed words, CJK unigrams and bigrams), English and
Chinese alike. A guessed key that is wrong is worse than none, so ties and weak matches stay unkeyed;
what was considered is kept in the candidate's meta for the reviewer."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db.models import Q
from django.utils import timezone

from governance.models import Memory, Principal, Scope, Status, lexical
from governance.selectors.rules import rules_in_force, users_standing_requirements
from governance.services import subject
from governance.services.conflict import (
    CHANGE_CUES,
    CHECKED_KINDS,
    REASON_NEGATION,
    conflict_queue,
    opposes,
)
from governance.services.extraction import (
    Extracted,
    about_the_work,
    asks_for_work,
    requirement_of,
    user_sentences,
)
from governance.services.orders import addressed_to_the_agent

# Extractor rules whose sentences can restate a keyed fact with a new value.
RULES = ("correction", "standing_instruction")
# Share of the corrected fact's subject terms the sentence must contain.
MIN_SHARE = 0.5
# Matched terms needed below a full match: one shared word ("format") is not enough to pick a key.
MIN_EVIDENCE = 2
# Alternatives kept in meta["corrects_candidates"] when no key is chosen.
KEEP_CONSIDERED = 3
# A keyed fact is read "subject: value"; the value is what the correction changes, so only the subject
# has to appear in the sentence. The first separator counts (values may contain colons: "10:00").
_SEPARATOR = re.compile(r"[:：=→]")
_KEY_PARTS = re.compile(r"[_\-./\s]+|(?<=[a-z0-9])(?=[A-Z])")
_CJK_CHAR = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]$")
# The wording of a correction or standing instruction says *that* something changes, not *what*:
# these terms never count as evidence that a sentence is about a given fact.
PHRASING = frozenset(
    lexical.terms(
        "change changed switch actually use make instead correction from now on going forward future always never "
        "please set should be 改成 改为 换成 更正 不是 而是 从现在开始 从现在起 以后 今后 始终 永远 不要 请 用 使用"
    )
)

REASON_CORRECTS = "Extracted correction of this keyed fact."


@dataclass(frozen=True)
class _Fact:
    memory_id: int
    key: str
    kind: str
    scope_id: int
    scope_path: str
    key_terms: frozenset[str]
    subject_terms: frozenset[str]
    has_value: bool  # the text names its value after a separator


@dataclass(frozen=True)
class _Match:
    fact: _Fact
    score: float  # 1.0 when the key's own words are all in the sentence, else the subject share
    evidence: int  # matched terms (CJK single characters excluded): the more specific match wins a tie

    def describe(self) -> dict:
        return {
            "memory_id": self.fact.memory_id,
            "key": self.fact.key,
            "scope": self.fact.scope_path,
            "score": round(self.score, 3),
        }


def key_terms(key: str) -> frozenset[str]:
    """A key's own words: split on _ - . / and camel case, then read like text (`exportFormat` → export, format)."""
    return frozenset(t for part in _KEY_PARTS.split(key) if part for t in lexical.terms(part))


def _subject(text: str) -> tuple[str, bool]:
    sep = _SEPARATOR.search(text)
    if sep is not None and text[: sep.start()].strip() and text[sep.end() :].strip():
        return text[: sep.start()], True
    return text, False


def _visible_facts(scope: Scope) -> list[_Fact]:
    """Active keyed facts in force (confirmed by a person) of the scope and its ancestors; for a key set
    at several levels only the narrowest (the one in force here) is kept."""
    now = timezone.now()
    rows = (
        Memory.objects.filter(
            scope__in=Scope.objects.ancestors_of(scope),
            status=Status.ACTIVE,
            key__isnull=False,
            kind__in=CHECKED_KINDS,
            purged_at__isnull=True,
            confirmed_at__isnull=False,  # in force only
        )
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gt=now))
        .values_list("pk", "key", "kind", "text", "scope_id", "scope__path")
    )
    narrowest: dict[str, tuple] = {}
    for row in rows:
        held = narrowest.get(row[1])
        if held is None or row[5].count("/") > held[5].count("/"):
            narrowest[row[1]] = row
    facts = []
    for pk, key, kind, text, scope_id, path in narrowest.values():
        subject, has_value = _subject(text)
        facts.append(
            _Fact(
                pk,
                key,
                kind,
                scope_id,
                path,
                key_terms(key),
                frozenset(lexical.terms(subject)) - PHRASING,
                has_value,
            )
        )
    return facts


def _evidence(terms: set[str] | frozenset[str]) -> int:
    return sum(1 for t in terms if not _CJK_CHAR.match(t))


def _score(fact: _Fact, sentence: frozenset[str]) -> _Match | None:
    hits = fact.subject_terms & sentence
    key_hit = bool(fact.key_terms) and fact.key_terms <= sentence
    if key_hit:
        return _Match(fact, 1.0, _evidence(hits | fact.key_terms))
    if not hits or not _evidence(hits):
        return None  # shared single CJK characters alone say nothing
    missing = len(fact.subject_terms) - len(hits)
    # Without a "subject: value" form one missing term is allowed for the value that changed.
    denominator = len(fact.subject_terms) - (1 if not fact.has_value and missing else 0)
    return _Match(fact, len(hits) / denominator, _evidence(hits))


def _clears(match: _Match) -> bool:
    return match.score >= 1.0 or (match.score >= MIN_SHARE and match.evidence >= MIN_EVIDENCE)


def _best(sentence: str, facts: list[_Fact]) -> tuple[_Match | None, list[_Match]]:
    """The single best match that clears the bar, or None (nothing clears it, or two keys tie), with
    the matches considered, best first."""
    terms = frozenset(lexical.terms(sentence))
    matches = [m for m in (_score(f, terms) for f in facts) if m is not None]
    matches.sort(key=lambda m: (-m.score, -m.evidence, m.fact.key))
    if not matches or not _clears(matches[0]):
        return None, matches
    if len(matches) > 1 and (matches[1].score, matches[1].evidence) == (
        matches[0].score,
        matches[0].evidence,
    ):
        return None, matches
    return matches[0], matches


def corrections_resolve(*, scope: Scope, found: list[Extracted]) -> None:
    """Give each extracted correction the key of the active fact it corrects (in place: key, kind,
    meta["corrects"]); leave it unkeyed when no single fact clearly matches, noting the alternatives
    in meta["corrects_candidates"]. One query, and only when there is a correction to resolve."""
    todo = [e for e in found if e.rule in RULES and e.key is None]
    if not todo:
        return
    facts = _visible_facts(scope)
    if not facts:
        return
    for extracted in todo:
        best, considered = _best(extracted.text, facts)
        if best is None:
            if considered:
                extracted.meta["corrects_candidates"] = [m.describe() for m in considered[:KEEP_CONSIDERED]]
            continue
        extracted.key = best.fact.key
        # The correction replaces the fact, so it keeps the fact's kind (a keyed preference stays one).
        extracted.meta["extracted_kind"] = extracted.kind
        extracted.kind = best.fact.kind
        extracted.meta["corrects"] = {
            "memory_id": best.fact.memory_id,
            "key": best.fact.key,
            "scope": best.fact.scope_path,
            "score": round(best.score, 3),
        }


def _replaces_users_word(earlier: str, sentence: str) -> bool:
    """Whether a user's sentence sets aside what they required before in another conversation: the opposite
    of it ("先别动表结构" / "表结构现在可以改了"), or another value for the same thing said as a change ("from now
    on", "instead", "改成"). Stricter than against a rule a person confirmed: a scope holds many of the user's
    own words, most of them about their day, and another value alone ("I think I'll go with the Snake Plant",
    a name by a name) set aside 25 earlier ones in ten LongMemEval haystacks, none rightly. So: said to the
    agent about the work, not of oneself, against an earlier word about the work."""
    if _OF_ONESELF.search(sentence) or not addressed_to_the_agent(sentence):
        return False  # "I'll be moving to Berkeley …": of the user's life, not to the work
    if not about_the_work(earlier) or len(set(lexical.terms(sentence))) < 2:
        return False  # a lead-in of one word ("For example", split from its question) says nothing of it
    reason = opposes(earlier, sentence)
    if not about_the_work(sentence) and not (reason == REASON_NEGATION and _SHORT_ZH.match(sentence)):
        return False  # nothing of the work; a short Chinese reply leaves its object out ("可以发了" for "先别发布")
    if reason == REASON_NEGATION:
        # the negating side says it; the opposite of a "don't" is a permission or a request, not a mention
        # ("Here's an example:" for "Never use the text in the 'Answer example'")
        return bool(
            subject.negated(sentence)
            or _PERMITS.search(sentence)
            or CHANGE_CUES.search(sentence)
            or asks_for_work(sentence)
        )
    return reason is not None and bool(CHANGE_CUES.search(sentence))


_SHORT_ZH = re.compile(r"^[^a-zA-Z]{2,12}$")
_PERMITS = re.compile(
    r"\b(?:can|may|could|allowed|fine|ok(?:ay)?|go ahead|feel free|free to|is open|clear(?:ed)? to|good to go)\b|可以|能|行了|允许|没问题|没关系|也行|无妨|放开",
    re.I,
)


# The user speaking of themselves ("I'd say I'm willing to invest …", "Since I'll be moving …").
_OF_ONESELF = re.compile(r"\bI(?:'m|'ll|'d|'ve|\s)|^\s*我(?!们)", re.I)


def _withdraws_a_value(extracted: Extracted) -> bool:
    requirement = extracted.meta.get("requirement") or {}
    return requirement.get("type") == "withdrawal" and bool(requirement.get("negated"))


def rules_corrected_by_meaning(*, scope: Scope, found: list[Extracted], turns: list[dict]) -> None:
    """A user's sentence that says the opposite of a rule in force, or another value of it for the same
    subject (services/subject.py), corrects that rule whatever its words and the key's: "支付模块可以重构,
    但必须先补测试。" against the confirmed "支付模块风险太高,暂时不要重构。" under the key `payment_refactor`,
    "Deploying billing on Fridays is fine now" against "Never deploy billing on Fridays". Such a sentence is
    a correction (extracted here when no extractor rule read it), takes the rule's key and kind, and the
    usual path follows: in force in its session, in the review queue for everyone. A sentence that could
    correct two rules corrects neither (the reviewer sees the turn). One query, only for users' turns."""
    said = user_sentences(turns)
    if not said:
        return
    rules = None
    earlier: list = []
    by_text = {e.text: e for e in found}
    for ref, sentence, turn_text in said:
        if (
            not subject.says_how_things_are(sentence)
            or subject.reports_an_event(sentence)
            or subject.tells_how_it_behaves(sentence)
        ):
            continue  # a question, "regardless of …", a story of what someone did or how a thing behaves
        existing = by_text.get(sentence)
        if existing is not None and (
            existing.key
            or existing.meta.get("corrects")
            or (existing.meta.get("requirement") or {}).get("replaces")
            or _withdraws_a_value(existing)
        ):
            continue  # resolved by its words already, or by the value it takes back ("PDF 不用导了")
        if rules is None:
            rules = rules_in_force(scope, CHECKED_KINDS)
            own = {r[3] for r in rules}
            # what the user said before, in any conversation here, as long as no person decided it
            earlier = [
                r for r in users_standing_requirements(scope) if r[3] not in own and r[3] not in by_text
            ]
        if not rules and not earlier:
            return
        hits = [r for r in rules if r[3] != sentence and opposes(r[3], sentence)]
        origin = "rule"
        if not hits:
            hits = [r for r in earlier if r[3] != sentence and _replaces_users_word(r[3], sentence)]
            origin = "user"
        if len(hits) != 1:
            continue
        pk, key, kind, _text, path = hits[0]
        if existing is None:
            existing = Extracted(
                kind=kind, text=sentence, rule="correction", confidence=0.6, meta={"from_ref": ref}
            )
            found.append(existing)
            by_text[sentence] = existing
        else:
            existing.rule = "correction"
            existing.meta.setdefault("extracted_kind", existing.kind)
            existing.kind = kind
        requirement = requirement_of("correction", sentence, turn_text) or {}
        existing.meta["requirement"] = {**requirement, "lasting": True, "by_meaning": True}
        target = {"memory_id": pk, "key": key, "scope": path}
        if origin == "user":
            # The user's own earlier word, never confirmed: this one replaces it (requirements_link marks it,
            # and every conversation's packet sets the earlier one aside); neither is in force outside its
            # session until a person decides.
            existing.meta["requirement"]["replaces"] = {**target, "origin": "user", "text": None}
            continue
        if key:
            existing.key = key
            existing.meta["corrects"] = {**target, "by": "meaning"}
        else:
            existing.meta["requirement"]["replaces"] = {**target, "origin": "rule", "text": None}


def corrections_link(*, candidates: list[Memory], actor: Principal | None) -> None:
    """After the candidates are written: a correction of a fact that lives in an ancestor scope gets a
    `contradicts` relation to it and goes to the review queue (conflict detection covers the same scope)."""
    for memory in candidates:
        target = memory.meta.get("corrects")
        if not target or memory.status not in (Status.CANDIDATE, Status.PROPOSED):
            continue
        other = (
            Memory.objects.filter(pk=target["memory_id"], status=Status.ACTIVE)
            .exclude(scope_id=memory.scope_id)
            .first()
        )
        if other is not None and other.content_hash != memory.content_hash:
            conflict_queue(memory=memory, found=[(other, REASON_CORRECTS)], actor=actor)
