"""Who an order is said to: a boundary or standing instruction that lasts beyond its session (the review
queue) is said to whoever serves the user, not of oneself or of the world (services/extraction.py reads the
order, this module who it is for)."""

from __future__ import annotations

import re

QUESTION = re.compile(r"\?\s*$")
# A sentence. A full stop inside a word ("report_final.docx", "v2.1", "3.5") ends none; a question asked after
# a comma is a sentence of its own ("Make it PPTX instead, can you export now?": the request is not a question).
SENTENCE = re.compile(
    r"(?:[^.!?。！？\n,]|,(?!\s*(?:can|could|would|will|shall|do) (?:you|we|i)\b|\s*(?:is|are) (?:it|that|we)\b)|\.(?=\w))+"
    r"(?:[.!?。！？]|(?=,))?",
    re.I,
)
# Chinese typed without punctuation parts its clauses by spaces ("pdf 别导了 导pptx"): read as commas, same length.
_CJK_SPACE = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")


def clauses_marked(sentence: str) -> str:
    return _CJK_SPACE.sub(lambda m: "，" + m.group(0)[1:], sentence)


CJK = re.compile(r"[\u4e00-\u9fff]")
# A request in the form of a question asks for what it names ("Can you make it PPTX instead?"), and for a
# rule when the request is the rule's own words ("Can you always answer in French?").
ASKS_YOU = r"^\W*(please\s+)?(can|could|would|will)\s+you\b"
ASKS_FOR_A_RULE = re.compile(ASKS_YOU + r"\s+(please\s+)?(always|never|make sure)\b", re.I)
# Encouragement and advice about a person's life, in the words of an order ("Don't give up!", "别担心"): neither
# a boundary of the work (services/extraction.py) nor a withdrawal of what was asked (services/retraction.py).
MOTIVATION = re.compile(
    r"\b(?:give up|quit|stop (?:dreaming|believing|trying)|worry|be (?:scared|afraid|shy|too hard)|"
    r"hesitate|let (?:it|that|this|anything|anyone|them|the \w+(?: \w+)?) (?:get|bring|stop|hold) "
    r"(?:you|me|us)|take (?:a )?breaks?|take care of yourself|be yourself|believe in yourself)\b"
    r"|别(?:担心|放弃|灰心|难过|客气)|不要(?:担心|放弃|灰心|难过|客气)|加油",
    re.I,
)

# Who a boundary or standing instruction is said to. One that lasts beyond its session (the review queue)
# is an order to whoever serves the user: "Don't overwrite the original file.", "Please don't use title
# case", "Also, don't start writing email 4 yet.", "It is important that you ALWAYS ask …", "别覆盖原文件",
# "先不要发布". The same words in what the user tells of themselves or of the world are not: "I've been
# trying to read at least 30 minutes a day", "I'll make sure to bring cash", "It should be at least 100
# words long" (a task's own spec), "I've heard some countries require …", nor a question. On the
# LongMemEval-S dev haystacks these were most of the review items before (docs/evaluation.md, "The user's
# requirements on the real files").
_SAID_OF_ONESELF_START = re.compile(
    r"^\W*(?:(?:and|but|so|also|anyway|well|ok|okay|oh|by the way|for example|for context|actually|honestly|"
    r"now|yes|yeah|plus|besides|personally|i think|i guess)\W+)*"
    r"(?:i|i'm|im|i've|i'll|i'd|we|we're|we've|we'll|we'd|my|our|it|it's|its|this|that|there|these|those|he|"
    r"she|they|they're|his|her|their|someone|everyone|one|let's|lets)\b",
    re.I,
)
_TO_YOU = re.compile(
    r"\byou\b[^.?!]{0,30}?\b(?:always|never|must|should|only|don'?t|do not|make sure)\b|"
    r"\b(?:want|need|ask|like|expect) you to\b",
    re.I,
)
_ASKS = re.compile(
    r"^\W*(?:what|which|who|whom|whose|when|where|why|how|is|are|can|could|would|will|should|"
    r"(?:do|does|did)(?!\s+not\b|n'?t\b))\b",
    re.I,
)
# A permission given to whoever does the work: "It's fine to send it to the client today.", "Feel free to publish."
_PERMITS = re.compile(
    r"^\W*(?:ok(?:ay)?\W+)?(?:it'?s|it is) (?:fine|ok(?:ay)?|alright|all right) (?:now )?to\b|\bfeel free to\b"
    r"|\bgo ahead and\b",
    re.I,
)
# A team's convention is how conventions are often stated: "We always deploy on Tuesdays."
_TEAM_RULE = re.compile(r"^\W*we\s+(?:always|never|only|must|don'?t|do not)\b", re.I)
_ZH_SAID_OF_ONESELF = re.compile(
    r"^(?:我|我们|他|她|他们|她们|它|这|那|大家)(?:觉得|想|会|一直|已经|正在|最近|每天|经常|尽量|打算|希望|听说|知道|发现|"
    r"试着|努力|也|都|还|平时|通常|总是)|吗\s*[。!！]?$|[?？]\s*$"
)


# A question asked after a lead or a clause: "So what must I ensure …", "in tabular format, what are all …".
_ASKS_WITHIN = re.compile(
    r"(?:^|[,;:]\s*)(?:so\s+|and\s+|but\s+|now\s+|then\s+|ok\s+)?(?:what|which|who|how|why|where|when)\s+"
    r"(?:are|is|was|were|do|does|did|must|should|can|could|would|will)\b",
    re.I,
)
# What limits the work, as a boundary that lasts: a prohibition, a "not yet", an "only", an upper bound, a
# "make sure" or a "must" said to the agent. "At least", "required" and "deadline" describe a task's spec or
# a person's life ("generate at least 10 tasks", "Required functionality: …", "a tight deadline") far more
# often than they set a boundary.
LIMITS = re.compile(
    r"\b(?:don'?t|do not|never|must not|mustn'?t|cannot|can'?t|only|not yet|no more than|at most|avoid|stop|"
    r"make sure|be sure|you must|we must|always)\b|"
    r"别|不要|不能|不得|禁止|不准|不许|务必|一定要|必须|只|仅|先不|最多|切勿",
    re.I,
)


def addressed_to_the_agent(sentence: str) -> bool:
    """Whether an order's words are said to whoever serves the user (see above), not of oneself or the world."""
    if CJK.search(sentence):
        return not _ZH_SAID_OF_ONESELF.search(sentence.strip())
    if QUESTION.search(sentence) or _ASKS.search(sentence) or _ASKS_WITHIN.search(sentence):
        return bool(ASKS_FOR_A_RULE.search(sentence))
    if _TO_YOU.search(sentence) or _TEAM_RULE.search(sentence) or _PERMITS.search(sentence):
        return True
    return not _SAID_OF_ONESELF_START.search(sentence)


__all__ = [
    "ASKS_FOR_A_RULE",
    "ASKS_YOU",
    "CJK",
    "LIMITS",
    "QUESTION",
    "SENTENCE",
    "addressed_to_the_agent",
    "clauses_marked",
]
