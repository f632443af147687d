"""Terms for the keyword index: lowercased words and, for Chinese/Japanese text, character unigrams and
bigrams (PostgreSQL's parsers do not segment CJK, so we do it once here, for memories and queries alike)."""

from __future__ import annotations

import functools
import re
import unicodedata

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_]+", re.UNICODE)
_IS_CJK = re.compile(rf"^[{_CJK}]+$")
STOPWORDS = frozenset(
    "a an the and or of to in on for is are was were be been it this that with as at by from do does did "
    "we you i he she they my our your me us not no yes so but if then than there here what which who how "
    "的 了 是 在 和 也 就 都 而 及 与 着 或 一个 我们 你们 他们".split()
)


def _stem(word: str) -> str:
    """A light English stemmer: enough to match plural and verb forms without a dependency. A final "e" left
    after the suffix goes too, so the verbs that drop it when inflected meet their base form: move, moves,
    moved and moving are all "mov" (before, "move" stayed "move" and the other three were "mov": "Where did
    Rachel move to?" and "Rachel actually just moved back to the suburbs" shared no term but the name). An
    "e" left before "ed" or "es" is the second of "ee" and stays: agree, agreed, agrees -> agre. A standard
    stemmer (Snowball) was measured and not kept (docs/evaluation.md); this is the one rule of it that was
    missing. Changing the rule means recomputing the stored terms (a migration: 0055)."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            # An "e" left before "ed" or "es" is the second of "ee" (agreed, agrees): it stays.
            if suffix in ("ed", "es") and word.endswith("e"):
                return word
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def terms(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if _IS_CJK.match(token):
            out.extend(ch for ch in token if ch not in STOPWORDS)
            out.extend(token[i : i + 2] for i in range(len(token) - 1))
        elif token not in STOPWORDS:
            out.append(_stem(token))
    return out


_HAS_CJK = re.compile(rf"[{_CJK}]")
# What may follow a term in a word that stems to it (_stem): a dropped final "e", then a suffix.
_SUFFIXES = "e?(?:ing|ed|es|s)?"


def terms_held(text: str, wanted) -> set[str]:
    """The terms of `wanted` that `text` holds: `set(wanted) & set(terms(text))`, without tokenizing the
    whole text. Ranking asks this of the few query terms against the long memories of its window (ten per
    request): a 1,600-character LongMemEval turn takes 140-230 us to tokenize and 34 us to scan for those
    terms' words. A text with CJK characters is tokenized in full (its tokens' edges differ)."""
    return {term for _, term in terms_at(text, wanted)}


def terms_at(text: str, wanted) -> list[tuple[int, str]]:
    """Where `text` holds the terms of `wanted`: (character offset in the normalised text, term) for each
    occurrence, in order; the scan of terms_held. Each term is looked for with `str.find` (a term is the
    start of every word that stems to it), and a place found counts when it starts a word (a run of
    letters and digits, as `terms` tokenizes) that is the term and a suffix `_stem` removes and stems to
    the term: a 1,150-character turn in ~6 us for five terms, against ~36 us for one regular expression of
    them all. A text with CJK characters is tokenized in full (its tokens' edges differ)."""
    wanted = {t for t in wanted if t}
    if not wanted:
        return []
    norm = text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).lower()
    if _HAS_CJK.search(norm) or any(_IS_CJK.match(t) for t in wanted):
        return [(m.start(), t) for m in _TOKEN.finditer(norm) for t in terms(m.group(0)) if t in wanted]
    found: dict[int, str] = {}
    for term in wanted:
        start = norm.find(term)
        while start >= 0:
            if start == 0 or not _WORD_CHAR.match(norm, start - 1):
                word = _WORD.match(norm, start).group(0)
                if word[len(term) :] in _SUFFIX_FORMS and word not in STOPWORDS and _stem(word) == term:
                    found[start] = term
            start = norm.find(term, start + 1)
    return sorted(found.items())


# What follows a term in a word that stems to it: _SUFFIXES spelled out.
_SUFFIX_FORMS = frozenset(["", "e", "ing", "ed", "es", "s", "eing", "eed", "ees"])
_WORD = re.compile(r"[^\W_]+")
_WORD_CHAR = re.compile(r"[^\W_]")


def searchable_text(text: str, speaker: str = "") -> str:
    """What a memory is found by, for the keyword index and the embedder alike: the speaker's name in
    front of what they said ("Caroline: I went to a support group"). Questions about a conversation
    name people ("When did Caroline …"); a bare turn text cannot match them. The role is not added: it is
    a structured field already, and one of two words on every turn only dilutes the text.
    The embedded input is a pure function of (text, speaker), both immutable on a row, so a vector made
    from a row's content hash is still the right one as long as this rule is; migration 0015 marks the
    rows this rule changed (their embedding_hash cleared) so that they are embedded again."""
    speaker = (speaker or "").strip()
    return f"{speaker}: {text}" if speaker else text


# How much of the turn before a conversation turn goes into what the turn is embedded as (characters).
CONTEXT_CHARS = 200


def in_context(text: str, speaker: str = "", *, before: str = "", before_speaker: str = "") -> str:
    """What a conversation turn is embedded as: the turn before it in its session, cut to CONTEXT_CHARS,
    on the line above the turn itself (searchable_text). A short turn ("Yes, last week!") carries its
    meaning in the turn it answers. Only the vector gets it: the stored text and the keyword terms stay
    the turn's own (docs/evaluation.md: the turn before in the keyword terms, and the session's day in
    the embedded text, were measured and not kept)."""
    before = " ".join((before or "").split())
    if not before:
        return searchable_text(text, speaker)
    if len(before) > CONTEXT_CHARS:
        before = before[:CONTEXT_CHARS].rsplit(" ", 1)[0] + " …"
    return f"{searchable_text(before, before_speaker)}\n{searchable_text(text, speaker)}"


def lexical_text(text: str, speaker: str = "") -> str:
    return " ".join(terms(searchable_text(text, speaker)))


# A turn a person said that holds several sentences is also embedded sentence by sentence (its passages),
# and the vector search scores it by the nearest of its whole text and its sentences (recall/vector.py
# nearest_and_passages): the fact a question asks about is often one sentence of a longer message ("Also,
# by the way, I completed my undergrad in CS from UCLA" at the end of a question about loans), and the
# whole turn's vector is the average of everything it says. Parts shorter than PASSAGE_MIN_CHARS
# ("Thanks, Caroline!") say too little to be found by alone; they still count towards "several".
# docs/evaluation.md ("A turn is as near as its nearest sentence") has the figures.
PASSAGE_MIN_CHARS = 40
# Parts shorter than this are not sentences (a list bullet, "Hi!"): a turn needs two longer ones.
PASSAGE_PART_MIN_CHARS = 12
# A pasted document is not read past its first parts: the cost stays bounded by the turn count.
PASSAGE_LIMIT = 24
# A sentence ends at . ! ? before a space and a capital, digit, quote, bracket or Chinese character, at
# 。！？, or at a line end.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\u3400-\u9fff])|(?<=[。！？])|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of a text, as its passages are cut (stripped, empty parts left out)."""
    return [p for p in (part.strip() for part in _SENTENCE_BREAK.split(text or "")) if p]


def passage_texts(text: str, speaker: str = "") -> list[str]:
    """What a turn is embedded as sentence by sentence (searchable_text of each: the speaker in front, as
    the whole turn is found by), or [] when it holds fewer than two sentences. Only the sentences of at
    least PASSAGE_MIN_CHARS characters among its first PASSAGE_LIMIT parts."""
    parts = [p for p in sentences(text) if len(p) >= PASSAGE_PART_MIN_CHARS]
    if len(parts) < 2:
        return []
    return [searchable_text(p, speaker) for p in parts[:PASSAGE_LIMIT] if len(p) >= PASSAGE_MIN_CHARS]


# --- Words, for comparing two statements ---------------------------------------------------------------
# The keyword index cuts Chinese into characters and bigrams (above): what a search needs, since a query's
# words may be cut anywhere. Comparing two statements ("about the same thing?", "is one the other negated?")
# needs words: the bigrams of "我们团队已经迁到PostgreSQL了" include "们团" and "队已", which are no words
# and made any two Chinese sentences look alike. Chinese runs are cut by jieba (a maintained segmenter with
# its dictionary inside the PyPI package, docs/dependencies.md), with its part-of-speech tags, so a name
# (张伟, 杭州, 财务部) can be told from the words around it. English words are the index's own terms.
# Function words for comparing: pronouns, particles, prepositions, adverbs of degree and time, modal verbs.
_CJK_FUNCTION_TAGS = frozenset(
    {
        "r",
        "p",
        "u",
        "uj",
        "ul",
        "uz",
        "ug",
        "uv",
        "ud",
        "c",
        "d",
        "df",
        "f",
        "t",
        "x",
        "y",
        "e",
        "o",
        "m",
        "q",
        "mq",
        "tg",
        "zg",
    }
)
NAME_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz", "eng"})


class Word(str):
    """A word of a statement (lowercased; an English word stemmed as the index stems it), with its tag:
    jieba's part of speech for a Chinese word, "eng" for a Latin word in Chinese text, "w" for English."""

    tag: str

    def __new__(cls, text: str, tag: str) -> Word:
        word = super().__new__(cls, text)
        word.tag = tag
        return word


_jieba = None


def _segmenter():
    global _jieba
    if _jieba is None:
        import logging

        import jieba
        import jieba.posseg

        jieba.setLogLevel(logging.WARNING)
        _jieba = jieba.posseg
    return _jieba


def _y(term: str) -> str:
    """The index's stems keep "copi" for copied and copies but "copy" for copy: one word to compare."""
    return term[:-1] + "y" if len(term) > 3 and term.endswith("i") else term


def has_cjk(text: str) -> bool:
    return bool(_HAS_CJK.search(text))


def words_all(text: str) -> list[Word]:
    """Every word of `text` (`words` with the Chinese function words kept: "不要" is an adverb to jieba)."""
    return words(text, keep_function=True)


def words(text: str, *, keep_function: bool = False) -> list[Word]:
    """The content words of `text` in order: English as `terms` reads it (stemmed, stopwords out), each
    Chinese run cut into words by jieba with its tag, Chinese function words (pronouns, particles, adverbs,
    prepositions, time words) out. For comparing statements; the index keeps `terms`. The same texts are
    compared again and again (a scope's rules with every sentence a user says), so each is cut once."""
    return list(_words(text, keep_function))


@functools.lru_cache(maxsize=8192)
def _words(text: str, keep_function: bool) -> tuple[Word, ...]:
    text = unicodedata.normalize("NFKC", text)
    if not _HAS_CJK.search(text):
        return tuple(Word(_y(t), "w") for t in terms(text))
    out: list[Word] = []
    for pair in _segmenter().cut(text):
        token, tag = pair.word.strip().lower(), pair.flag
        if not token or not _TOKEN.fullmatch(token):
            continue
        if _IS_CJK.match(token):
            if keep_function or (tag not in _CJK_FUNCTION_TAGS and token not in STOPWORDS):
                out.append(Word(token, tag))
        else:
            out.extend(Word(_y(t), "eng") for t in terms(token))
    return tuple(out)
