"""Elliptical choices: a user's sentence that names a value and next to nothing else ("PPTX 吧。", "Actually
pptx, I'll keep editing.", "等等,最后给我 PPTX 就行。", "On second thought, Markdown.", "那就中文吧。") says which
value the user wants, but only against what they asked before: alone it is no requirement. The extractor reads
it as a `choice` (services/extraction.py); services/requirements.py then reads it against what is in force in
its session: a choice that names another value of the sort a standing requirement names replaces that
requirement as a correction does, and a choice that fits nothing is dropped (nothing is written for it).

Also here: the words that say a request changes something ("格式换一下,用 PPTX。", "Let's do it in Chinese
after all."), which let a request replace an earlier one of the same sort without naming its subject.

What keeps a choice from being read into everyday talk: it is short, not a question, not a description
("PPTX is a pain on Linux", "我用 PPTX 做过"), and the clause holding its value holds little beside it (the
words below that only carry the choice: "just", "give me", "吧", "就行", …)."""

from __future__ import annotations

import re

from governance.services.orders import QUESTION
from governance.services.values import named, values_in

MAX_CHARS = 80
MAX_TURN_CHARS = (
    600  # a pasted document's sentences are not the user choosing (extraction.CONVERSATIONAL_CHARS)
)
# A clause holding the value may hold this many words (English) or characters (Chinese) of its own beyond it
# and the carrying words: "I need an editable PPTX" (one), "发我邮箱" (two characters).
MAX_OWN_WORDS = 1
MAX_OWN_CHARS = 2

# Words that carry a choice without saying anything of their own (removed before counting what is left).
_CARRY_EN = re.compile(
    r"\b(on second thought|after all|at the end|in the end|let'?s|let us|go with|give me|i'?d like|i would like|"
    r"i need|i want|we need|we want|actually|wait|ok|okay|so|then|well|hmm|rather|instead|please|just|make it|"
    r"use|the|a|an|one|for|me|us|it|at|as|in|to|with|into|replace|swap|switch|change|convert|end|final|finally|"
    r"now|maybe|better|better yet|no|not|"
    r"thanks|thank you)\b",
    re.I,
)
_CARRY_ZH = re.compile(
    r"我要的是|我说的是|我说了|不是|算了|还是|等等|等一下|那就|就行|就好|就可以|就够了|够了|好了|其实|最后|最终|给我|帮我|改成|换成|改用|直接|那个|这个|"
    r"一下|版本|格式|以内|之内|以下|[吧啊呢嗯哦好要用就的那请先版对]"
)
# What a clause says of the world or of what was done, not which value is wanted.
_DESCRIBES = re.compile(
    r"\b(is|are|was|were|isn'?t|aren'?t|wasn'?t|looks?|seems?|sounds?|has|have|had|did|does|doesn'?t|"
    r"i'?m|i'?ve|i was|i had|i used|we used|he|she|they)\b"
    r"|^\s*(我|我们|他|她|他们|她们|它)(?!要|想要|需要|希望)|已经|曾经|过\s*$|了吗",
    re.I,
)
# Words that say a request changes what was asked before. Not conflict.CHANGE_CUES: those say that a fact
# of the world changed ("moved to", "no longer", "迁到"), and a speaker's change of mind about their own
# request is said otherwise ("actually", "on second thought", "算了", "还是"); "moved to" in a request
# names a destination, not a change of mind.
CHANGE = re.compile(
    r"\b(actually|instead|rather|after all|on second thought|changed? my mind|wait|switch|change|raise|lower|"
    r"increase|reduce|bump|move on to)\b"
    r"|算了|还是|换|改|调|放宽|增加到|减少到|提高到|降低到|缩短到|延长到|等等|等一下|不要.{0,16}了|不用.{0,16}了|其实"
    r"|现在开始|接下来|就行|就好|就可以了|也行|也可以",
    re.I,
)
_CLAUSE = re.compile(r"[,，;；:：]")
_WORD = re.compile(r"[a-z][a-z'-]*", re.I)
_CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


# How a choice is said with a verb ("CSV is fine", "Thursday works for me", "French would be better", "I'd
# rather have PPTX", "PPTX 更合适", "还是 PPTX 好一点"), removed before counting what is left.
_CHOOSES = re.compile(
    r"\b(is|are|'s|would be|will be|should be|seems|sounds)\s+(much\s+|a lot\s+|a bit\s+)?"
    r"(fine|better|best|ok|okay|good|enough|perfect|great|ideal)\b"
    r"|\bworks?(\s+(better|fine|best|for (me|us)))?\b|\bmakes? more sense\b"
    r"|\bi'?d (much\s+)?(rather|prefer)( have| get| go with| use| do)?\b|\bi (would )?prefer\b"
    r"|^\s*我?(更|还是)?(倾向于?|偏向于?|宁愿|宁可|更想要|更喜欢)"
    r"|(?<![不没])(更|比较|还是|会)?(合适|好一点|好些|好|方便|稳妥|省事)(一点|一些|些)?(?=\s*[吧啊呢。!！,，]|\s*$)",
    re.I,
)
# Why the user wants it, after the choice ("PPTX would be better since I need to edit it", "PPTX 吧,因为还要改"):
# it says nothing of which value, so it is not counted as the clause's own words.
_BECAUSE = re.compile(r"\b(since|because|cause|'cause|so that|so i can|so we can)\b.*$|因为.*$", re.I)


def _bare(clause: str, values) -> bool:
    """Whether a clause holds a value and little else of its own."""
    rest = _CHOOSES.sub(" ", _BECAUSE.sub(" ", clause))
    if _DESCRIBES.search(rest):
        return False
    for value in sorted(values, key=lambda v: -len(v.text)):
        rest = rest.replace(value.text, " ")
    rest = _CARRY_ZH.sub(" ", _CARRY_EN.sub(" ", rest))
    return len(_WORD.findall(rest)) <= MAX_OWN_WORDS and len(_CJK_CHAR.findall(rest)) <= MAX_OWN_CHARS


def choice_of(sentence: str, turn_text: str, negated_of) -> dict | None:
    """The choice a user's sentence makes (a requirement of type "choice": its values, those it names
    negated), or None. `negated_of(sentence, values)` is the extractor's reading of negated values."""
    if (
        len(sentence) > MAX_CHARS
        or len(turn_text) > MAX_TURN_CHARS
        or QUESTION.search(sentence)
        or "？" in sentence
    ):
        return None
    values = values_in(sentence)
    if not values:
        return None
    clauses, at = [], 0
    for part in _CLAUSE.split(sentence):
        clauses.append((at, at + len(part), part))
        at += len(part) + 1
    held = [
        (part, [v for v in values if start <= v.start < end])
        for start, end, part in clauses
        if any(start <= v.start < end for v in values)
    ]
    if not any(_bare(part, found) for part, found in held):
        return None
    return {
        "type": "choice",
        **named(values, negated_of(sentence, values)),
        "stage": [],
        "lasting": False,
        "conversational": True,
    }


def says_a_change(text: str) -> bool:
    return bool(CHANGE.search(text))


# A request whose object is a pronoun refers back to what was asked before ("Send it to Kenji", "Post it in
# #design", "把它发给李娜"): like a choice, it names no subject of its own to be compared.
_REFERS_BACK = re.compile(
    r"^\s*(?:please\s+|ok(?:ay)?,?\s+|then\s+)?[a-z]+(?:\s+(?:up|out|over))?\s+(?:it|this|that|them)\b|^\s*(?:把|将)(?:它|这个|那个)",
    re.I,
)


def refers_back(text: str) -> bool:
    return bool(_REFERS_BACK.search(text))


__all__ = ["CHANGE", "choice_of", "refers_back", "says_a_change"]
