"""What a statement is about, and whether two statements are about the same thing: the one test that
contradiction detection (services/conflict.py), four-eyes (services/four_eyes.py) and the session's
requirements (services/requirements.py, recall/session_requirements.py) share, in English and Chinese.

A statement's subject is its content words (governance.models.lexical.words: English stemmed, Chinese cut
by jieba) without the words of a change, of a request or of time, and without the values it names (a
format, a store, a person, a place): "订单服务的数据存在MySQL里" is about 订单 服务 数据; its value is MySQL.
Two statements are about the same thing when they share enough of their subjects and no word of one
qualifies a shared word differently in the other: "订单服务" and "报表服务" share 服务, but 订单 and 报表 say
which service, so "订单服务的数据存在MySQL里" and "报表服务的数据存在ClickHouse里" are two subjects, not one
that changed. Measured on a labelled set in both languages (manage.py measure_contradictions,
docs/governance.md "Contradictions")."""

from __future__ import annotations

import math
import re

from governance.models import lexical
from governance.services import values as value_words

# Words that say a change, a request, a permission, time or degree: never what a statement is about.
_FUNCTION_TEXT = (
    # a change or its cue
    "moved moving move switched switch migrated migrate changed change transitioned shifted converted over "
    "no longer instead replaced replace stopped using now use used uses using run runs has become dropped "
    "any more anymore 改用 换成 换到 改成 改为 改到 迁移 迁到 搬到 转到 转向 不再 已经 现在 取代 代替 替换 替代 "
    "弃用 用 使用 改 换 "
    # requests, permissions, modals
    "please can could may might should would will shall must need needs let fine ok okay allowed allow "
    "able go ahead sure just also only again first still even really very too quite yet feel free alright clear "
    "可以 能 能够 必须 需要 应该 请 允许 没问题 行 "
    # people and groups in general, pronouns
    "has have had been already just recently finally officially all the team we our us i my me mine you "
    "your yours they their them it its this that these those there everyone everybody someone somebody "
    "anyone anything everything something company group 团队 我们 他们 大家 "
    # time
    "day days today tonight tomorrow yesterday week weeks month months year years time times now then "
    "later soon currently nowadays lately recently ago since until while long"
)
FUNCTION = frozenset(lexical.terms(_FUNCTION_TEXT)) | frozenset(_FUNCTION_TEXT.split())
NEGATION = frozenset(
    "not no never don't dont doesn't doesnt isn't isnt aren't arent won't wont cannot can't avoid without "
    "nor neither 不 没 没有 别 不要 勿 禁止 无需 不用 不必 不得 不能 不准 不许 不再 一律不".split()
)
# Shared share of the smaller subject for "about the same thing".
SHARE = 0.5
_MASK = "\x00"  # a value's place in the word sequence
_CJK_CHAR = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]$")
# Words that add to what was said rather than replace it ("We also keep a roadmap in Notion.").
ADDITIVE = re.compile(
    r"\b(?:also|too|as well|another|additionally|besides|in addition)\b|另外|此外|也|还要|还有", re.I
)


def _value_terms(text: str) -> set[str]:
    """The words of the values `text` names (a sorted value, or a name): not its subject."""
    out: set[str] = set()
    for value in value_words.values_in(text):
        out.update(lexical.terms(value.text))
        out.update(w for w in lexical.words(value.text))
    out.update(names(text))
    return out


_NAME = re.compile(r"[A-Za-z][\w.+#-]*[\w+#]|\d[\w.:%]*")
_SENTENCE_END = re.compile(r"(?:^|[.!?:;。！？：；]\s*)$")


def names(text: str) -> set[str]:
    """The names a statement gives (lowercased words): in English a capitalised word inside a sentence, an
    acronym, a CamelCase word or one with a digit; in Chinese a person, place or organisation as jieba tags
    it, or a Latin word."""
    out: set[str] = set()
    if lexical.has_cjk(text):
        for word in lexical.words(text):
            if word.tag in lexical.NAME_TAGS and (len(word) > 1 or word.tag == "eng"):
                out.add(str(word))
        return out
    for m in _NAME.finditer(text):
        word = m.group(0)
        if (
            any(ch.isdigit() for ch in word)
            or (word[0].isupper() and word != "I" and not _SENTENCE_END.search(text[: m.start()]))
            or (len(word) > 1 and word.isupper())
            or any(ch.isupper() for ch in word[1:])
        ):
            out.update(lexical.terms(word))
    return out


def sequence(text: str) -> list[str]:
    """The statement's words in order, negation words left out and each value's words replaced by one
    mark: the order `same_subject` reads qualifiers in (function words stay: "设计团队" / "销售团队" qualify
    团队, a word too general to be a subject by itself)."""
    skip = _value_terms(text)
    out: list[str] = []
    for word in lexical.words(text):
        if word in NEGATION:
            continue
        mark = _MASK if word in skip else str(word)
        if mark == _MASK and out and out[-1] == _MASK:
            continue
        out.append(mark)
    return out


def _subject_of(seq: list[str]) -> set[str]:
    return {w for w in seq if w != _MASK and w not in FUNCTION and not _CJK_CHAR.match(w)}


def of(text: str) -> set[str]:
    """What `text` is about: its content words beyond values, names and the words of a change or request
    (a single Chinese character says too little alone)."""
    return _subject_of(sequence(text))


def qualified_otherwise(a: str, b: str) -> bool:
    """Whether a word both statements share is qualified by each with a word of its own ("orders service" /
    "analytics service", "支付模块" / "报表模块"): two things of one kind, not one thing."""
    seq_a, seq_b = sequence(a), sequence(b)
    return _qualified(seq_a, seq_b)


_DETERMINERS = frozenset("the a an this that these those my our your its their his her".split())


# An English verb is no qualifier: "Don't touch the legacy importer" / "You can clean up the legacy importer
# now" are about one importer, where "the orders service" / "the analytics service" are two services. With
# no tagger for English here (spaCy's models are not on PyPI), a verb is read from where it stands: right
# after a modal, a negation, "to" or "please" (a rule's predicate: "don't touch", "can clean", "need to
# move"), and a particle after such a verb ("clean up", "throw away") belongs to it.
_PREDICATE_OPENERS = frozenset(
    "can could may might should would will shall must need needs please let to don doesn didn won t not "
    "never cannot".split()
)
_PARTICLES = frozenset("up out off down away back over".split())


def _verbs(seq: list[str]) -> set[int]:
    """The positions of `seq` (English words) that read as a verb or its particle (see above)."""
    out: set[int] = set()
    for i, word in enumerate(seq):
        if i and (seq[i - 1] in _PREDICATE_OPENERS or (i - 1 in out and word in _PARTICLES)):
            if word.isascii() and word not in _PREDICATE_OPENERS:
                out.add(i)
    return out


def _qualified(a: list[str], b: list[str]) -> bool:
    shared = (set(a) & set(b)) - {_MASK}
    verbs_a, verbs_b = _verbs(a), _verbs(b)
    before_a = {w: (a[i - 1], i - 1 in verbs_a) for i, w in enumerate(a) if i and w in shared}
    before_b = {w: (b[i - 1], i - 1 in verbs_b) for i, w in enumerate(b) if i and w in shared}
    for word, (qa, verb_a) in before_a.items():
        if word in _DETERMINERS:
            continue  # "touch the" / "clean up the": a determiner is qualified by nothing
        qb, verb_b = before_b.get(word, (None, False))
        if qb is None or qa == qb or _MASK in (qa, qb) or qa in shared or qb in shared:
            continue
        if qa in FUNCTION or qb in FUNCTION:
            continue  # "these days the orders service" / "the orders service": no qualifier
        if verb_a or verb_b:
            # "touch | legacy importer" / "clean up | legacy importer": what is done to one thing, unless
            # the shared words go on to name another ("review the legacy importer docs": the docs).
            if _after_run(a, word, shared) != _after_run(b, word, shared):
                return True
            continue
        return True
    return False


def _after_run(seq: list[str], word: str, shared: set[str]) -> str:
    """The content word after the run of shared words that `word` starts in `seq` ("" for none: the end,
    a value's mark or a function word)."""
    i = seq.index(word)
    while i < len(seq) and seq[i] in shared:
        i += 1
    after = seq[i] if i < len(seq) else ""
    return "" if after in FUNCTION or after == _MASK else after


def same_subject(a: str, b: str, *, share: float = SHARE) -> bool:
    """Whether two statements are about the same thing (see the module's docstring): they share at least
    `share` of the larger subject, and no shared word is qualified otherwise. Two statements with no subject
    words beyond their values are not (the caller may ask for a change cue instead)."""
    seq_a, seq_b = sequence(a), sequence(b)
    sa, sb = _subject_of(seq_a), _subject_of(seq_b)
    if not sa or not sb:
        return False
    if len(sa & sb) < max(1, math.ceil(share * max(len(sa), len(sb)) - 1e-9)):
        return False
    return not _qualified(seq_a, seq_b)


# Negation words that hedge, add or ask rather than negate what is said: "I'm not sure the format matters",
# "not only the format but also the notes", "no matter which", "don't know", "why not".
_HEDGES = re.compile(
    r"\b(?:not|n't) (?:sure|only|just|certain|quite|necessarily|exactly|really|always)\b|\bno matter\b|"
    r"\b(?:do|does|did)(?: not|n't) (?:know|think|mind|care|remember)\b|\bwhy not\b|\bno (?:idea|doubt)\b|"
    r"\bnot (?:that|to mention)\b|\bwhether or not\b|\bnever\s?mind\b"
    # a negation inside a relative clause says what the thing is, not that the statement is negated
    # ("give me more examples that have not been provided yet")
    r"|\b(?:that|which|who)\s+(?:have|has|had|is|are|was|were|do|does|did)(?:\s+not|n't)\b",
    re.I,
)
# Idioms of assent ("发吧,没问题了", "覆盖掉也没关系"): they negate nothing.
_ASSENT_ZH = re.compile(r"没问题|没关系|不客气|不错|不用谢")


# What asks, wonders or leaves open rather than says how things are: a question ("Should we refactor the
# payment module?", "支付模块要不要重构?"), an A-not-A form ("重不重构", "能不能"), "regardless" ("不管…",
# "no matter whether …"). Such a sentence in a conversation corrects no rule, whatever its words.
_OPEN = re.compile(
    r"[?？]\s*$|吗\s*[。.!！]?\s*$|(\w)不\1|不管|无论|不论|\bregardless\b|\bno matter\b|\bwhether\b|"
    r"\bi wonder\b|\bwondering\b",
    re.I,
)
# ... unless it asks for the change itself ("Can you make it PPTX instead?", "能不能改成PPTX?").
_ASKS_FOR_IT = re.compile(
    r"^\W*(?:please\s+)?(?:can|could|would|will)\s+you\b|^(?:能不能|可不可以|可以)(?:帮我|请|把)", re.I
)


def says_how_things_are(sentence: str) -> bool:
    """Whether a sentence states or asks for something, rather than asking or leaving it open (see _OPEN)."""
    return not _OPEN.search(sentence) or bool(_ASKS_FOR_IT.search(sentence))


# What someone did, told as a story: a third person doing it, or a time in the past. "他昨天把报告发给李娜了",
# "She sent it to Kenji yesterday": it changes no requirement, whatever value it names. Not "我们已经迁到
# PostgreSQL了" (a change of how things are, said as one).
_EVENT = re.compile(
    r"^\s*(?:他|她|他们|她们)|昨天|前天|上周|上个月|刚才|那天"
    r"|^\s*(?:he|she|they)\b|\b(?:yesterday|last (?:week|month|time)|the other day|\w+ ago)\b",
    re.I,
)


def reports_an_event(sentence: str) -> bool:
    """Whether the sentence tells what someone did (see _EVENT), rather than how things are or should be."""
    return bool(_EVENT.search(sentence))


# How a thing behaves, told as a fact ("The PDF export on my laptop never works.", "It always crashes on
# Mondays"): a frequency and a verb of the third person, not an order ("Never deploy on Fridays") nor what the
# user wants of it ("Make sure it never overwrites the original").
_BEHAVES = re.compile(
    r"\b(?:never|always|usually|often|sometimes|rarely|still)\s+(?:\w+ly\s+)?[a-z]+(?<!ss)(?<!\bi)s\b", re.I
)
_WANTS_IT = re.compile(r"\b(?:make sure|ensure|so that|should|must|need|want|has to|have to)\b", re.I)


def tells_how_it_behaves(sentence: str) -> bool:
    """Whether the sentence tells how something behaves (see _BEHAVES), rather than how it should."""
    return bool(_BEHAVES.search(sentence)) and not _WANTS_IT.search(sentence)


def negated(text: str) -> bool:
    """Whether the statement is said negated (a negation word of either language in it, hedges aside)."""
    text = value_words.REMINDER.sub(" ", text)  # "don't forget the PDF" asks for it
    text = value_words.A_NOT_A.sub(" ", text)  # "要不要重构" asks whether, it says no "不要"
    text = _ASSENT_ZH.sub(" ", text)
    lowered = _HEDGES.sub(" ", text.lower().replace("’", "'"))
    if set(re.findall(r"[a-z']+", lowered)) & NEGATION:
        return True
    if not lexical.has_cjk(text):
        return False
    if _ZH_DONT.search(text):
        return True
    return any(str(w) in NEGATION for w in lexical.words_all(text))


# "别" as an order at the start of a clause, cut by jieba into one word with its verb ("别动", "别改"); not
# 别人, 别的, 别处 (others), nor 特别, 区别, 分别, 告别.
_ZH_DONT = re.compile(r"(?:^|[,，;；:：。!！]|先|千万|请|也|都|就)\s*别(?![人的处墅致样])[\u4e00-\u9fff]")


__all__ = [
    "FUNCTION",
    "NEGATION",
    "names",
    "negated",
    "of",
    "qualified_otherwise",
    "reports_an_event",
    "says_how_things_are",
    "tells_how_it_behaves",
    "same_subject",
    "sequence",
]
