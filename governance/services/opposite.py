"""Whether two statements say opposite things about the same subject: one negated, the other not, on the same
content words (`contradicts`). Part of the one opposition test, services/conflict.opposes, which conflict
detection, four-eyes, a user's correction and the session's requirements share."""

from __future__ import annotations

import re

from governance.models import lexical
from governance.services import subject

NEGATIONS = frozenset(
    "not no never don't dont doesn't doesnt isn't isnt aren't arent won't wont cannot can't avoid without "
    "不 没 没有 别 不要 勿 禁止 无需".split()
)
# What the word index leaves of a contraction ("don't" → "don", "t"; "it's" → "s"): not content words.
_CONTRACTION_PARTS = frozenset(
    "don doesn didn isn aren wasn weren won wouldn shouldn couldn haven hasn t s re ve ll d m".split()
)
# Share of the content words two statements must have in common to be "about the same thing".
OVERLAP = 0.6


def _polarity_and_words(text: str) -> tuple[bool, set[str]]:
    """Whether `text` is negated, and its content words without the negation (lexical.words: Chinese cut
    by jieba, so "不要" is a word and "们团" none)."""
    content = {str(w) for w in lexical.words(text) if w not in NEGATIONS and w not in subject.NEGATION}
    content = {w for w in content if w.rstrip("'t") not in NEGATIONS and w not in _CONTRACTION_PARTS}
    return subject.negated(text), content


def contradicts(a: str, b: str) -> bool:
    """Do two statements say opposite things about the same subject? Deliberately conservative: a
    false alarm costs a reviewer one click, a miss lets a contradiction into the packet. A word that each
    qualifies a shared one with ("the payment module" / "the reporting module") makes them two subjects.
    A statement of several clauses is also read clause by clause: the reason said with a rule has words
    and negations of its own ("Don't touch the legacy importer, finance still runs it." / "老的导入脚本现在可以
    删掉了,财务不用了。"), which the whole statements' comparison counts as the rule's."""
    if _contradicts(a, b):
        return True
    parts_a, parts_b = _clauses(a), _clauses(b)
    if parts_a == [a] and parts_b == [b]:
        return False  # one clause each: compared above
    return any(_contradicts(x, y) for x in parts_a for y in parts_b)


_CLAUSE_BREAK = re.compile(r"[,，;；:：。.!?！？]+\s*")


def _clauses(text: str) -> list[str]:
    """The clauses of `text` that hold at least two content words (a lone word, or a pronoun and a verb, is
    no statement); [text] when it is one clause."""
    parts = [p for p in _CLAUSE_BREAK.split(text) if p.strip()]
    if len(parts) < 2:
        return [text]
    # Content words beyond those of a request, a change or time ("don't refactor it for now": one, and
    # "it" says nothing of what).
    return [p for p in parts if len(_polarity_and_words(p)[1] - subject.FUNCTION) >= 2]


def _said_short(terms: set[str], other: set[str]) -> set[str]:
    """`terms` with a Chinese verb said short read as the other's word it begins ("可以发了" for "先别发布")."""
    return {
        next((o for o in other if len(o) == 2 and o[0] == t and _CJK.match(o)), t) if len(t) == 1 else t
        for t in terms
    }


_CJK = re.compile(r"^[\u4e00-\u9fff]+$")


def _contradicts(a: str, b: str) -> bool:
    neg_a, terms_a = _polarity_and_words(a)
    neg_b, terms_b = _polarity_and_words(b)
    if neg_a == neg_b or not terms_a or not terms_b:
        return False
    # What they are about, without the words of a permission, a request or time: "Don't publish yet." / "You
    # can publish it now." are both about publishing.
    terms_a, terms_b = (terms_a - subject.FUNCTION) or terms_a, (terms_b - subject.FUNCTION) or terms_b
    terms_a, terms_b = _said_short(terms_a, terms_b), _said_short(terms_b, terms_a)
    if len(terms_a & terms_b) / min(len(terms_a), len(terms_b)) < OVERLAP:
        return False
    return not subject.qualified_otherwise(a, b)


__all__ = ["NEGATIONS", "OVERLAP", "contradicts"]
