"""Finding candidate memories in a conversation. The default extractor is rule based (explicit
constraints, corrections like "change it to …", preferences, standing instructions "from now on …", in
English and Chinese); an LLM extractor can be plugged in behind the same interface (off by default:
MEMORY_EXTRACTOR=llm with MEMORY_LLM_EXTRACTOR=dotted.path.to.callable). Everything extracted is a
candidate: a guess waits for a person before it is treated as fact."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from governance.models import Kind


@dataclass
class Extracted:
    kind: str
    text: str
    rule: str
    confidence: float = 0.5
    key: str | None = None
    meta: dict = field(default_factory=dict)


class Extractor(Protocol):
    name: str

    def extract(self, turns: list[dict]) -> list[Extracted]:
        """Candidates from one interaction's turns ({role, content, ref, ...})."""


_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")
RULES: tuple[tuple[str, str, float, re.Pattern], ...] = (
    (
        "standing_instruction",
        Kind.CONVENTION,
        0.7,
        re.compile(
            r"\b(from now on|going forward|in future|always|never)\b|从现在(开始|起)|以后(都|请|要)?|今后|始终|永远不要",
            re.I,
        ),
    ),
    (
        "correction",
        Kind.SEMANTIC,
        0.65,
        re.compile(
            r"\b((change|switch) (it|that|this) to|(change|switch) (the|our|my) [^,;]{1,60}? to|"
            r"actually,? (it'?s|use|make)|instead of|instead[.!?]?$|not .+ but|correction:)|改成|改为|换成|改用|更正|"
            r"不是.+而是",
            re.I,
        ),
    ),
    (
        "constraint",
        Kind.CONVENTION,
        0.6,
        re.compile(
            r"\b(must|must not|mustn'?t|do not|don'?t|make sure|required?|only use|no more than|at most|"
            r"at least|deadline)\b|必须|不要|不能|务必|一定要|不得|最多|至少|截止",
            re.I,
        ),
    ),
    (
        "preference",
        Kind.PREFERENCE,
        0.55,
        re.compile(
            r"\b(i (prefer|like|love|hate|dislike|want)|i (don'?t|do not) (like|want)|i'?d rather|my favou?rite|"
            r"please use)\b|"
            r"我(更)?(喜欢|偏好|倾向|讨厌|不喜欢|想要)|请用",
            re.I,
        ),
    ),
)

# What the words of a rule also say when they are not one (English). A standing instruction or a constraint
# is addressed to whoever acts on it ("Always export the slides as PDF.", "Don't use bullet points.", "You
# must cite the source."); the same words in what a person says of themselves or of the world are not:
# "I've always been fascinated by …", "it always refreshes my soul", "I'll make sure to bring cash", "I
# don't think so", "you must be so excited" (a guess, not a duty), "must-visit spots". Nor is a question
# ("Can you recommend some must-visit spots?"), unless it asks for one. On the real development
# conversations (LongMemEval-S dev, 27,703 distinct user turns; LoCoMo dev, 788), these left out most of what
# the two rules proposed as conventions, nearly none of it a rule (docs/evaluation.md, "Rules read from a
# conversation").
_QUESTION = re.compile(r"\?\s*$")
# ... but a request in the form of one asks for it: a correction ("Can you make it PPTX instead?"), or a
# rule when the request is the rule's own words ("Can you always answer in French?", not "Can you
# recommend some must-visit spots?").
_ASKS_YOU = r"^\W*(please\s+)?(can|could|would|will)\s+you\b"
_ASKS_FOR_A_CORRECTION = re.compile(_ASKS_YOU, re.I)
_ASKS_FOR_A_RULE = re.compile(_ASKS_YOU + r"\s+(please\s+)?(always|never|make sure)\b", re.I)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_SAID_OF_ONESELF = re.compile(
    # a subject other than the one addressed (and not a team's "we always …", how conventions are often
    # stated), then always / never within the clause, not said to "you" ("I want you to always …") and not
    # of what the speaker wants done ("I always want the totals in euros")
    r"\b(i|i'm|i've|i'd|i'll|he|she|he's|she's|it|it's|they|they're|they've|that|this|there|who|which|"
    r"everyone|everybody|nobody|someone|people)\b(?:(?!\byou\b)[^,;:.!?]){0,24}?\b(always|never)\b"
    r"(?!\s+(want|wants|prefer|prefers|need|needs|expect|expects|use|uses|ask|asks)\b)"
    # what something is, has been or can be ("the design is always so creative", "you can always type skip")
    r"|\b(is|are|was|were|am|has|have|had|can|could|'s|'re)\s+(always|never)\b",
    re.I,
)
# "Don't" and "do not" give an order at the start of a clause ("Don't use bullet points.", "Output it, but do
# not show the word"); after a subject they say what is not so ("I don't think", "things don't go my way").
_ORDER_NOT = re.compile(
    r"(^|[,;:(\[\"\u2014-]\s*|\b(please|and|but|so|just|also|then|or)\s+)(do not|don'?t)\Z", re.I
)
_NOT_A_CONSTRAINT = re.compile(
    # one's own plan or wish ("I'll make sure to …", "I want to make sure …", "so I can make sure …")
    r"\b(i|we)('ll| will| want to| wanted to| need to| have to|'d like to| would like to| try to|'m going to|"
    r" am going to| just want to| really want to| can| could)?( also| just)? make sure\b"
    r"|\b(want|wants|wanted|need|needs|needed|trying|try|tries|hope|hoping|plan|planning) to make sure\b"
    # "must" as a guess or a compound ("you must be thrilled", "it must have been", "must've", "must-see")
    r"|\b(i|you|it|that|this|there|he|she|they|we)\s+must\s+(be|have)\b|\bmust(-|'ve\b)",
    re.I,
)


# "not X but Y" corrects X when X is what was said instead of Y ("not PDF but PPTX", "It's not Monday, but
# Tuesday"); not a hedge or an addition ("I'm not sure the format matters, but …", "not only the format but
# also the notes") nor a verb's negation ("We did not get the format right, but …"). Read as a correction of
# a rule in force, such a sentence was in force for its session in the rule's place (docs/governance.md,
# "Session overrides").
_NOT_BUT = re.compile(
    r"^not\s+(?!(?:only|just|sure|really|quite|too|very|exactly|necessarily|certain|even|much|that|always|"
    r"entirely|totally|completely|particularly|without)\b)",
    re.I,
)
_VERB_NOT = re.compile(
    r"\b(do|does|did|have|has|had|can|could|will|would|should|might|may|must)\s+$"
    r"|\b(don|doesn|didn|haven|hasn|hadn|can|couldn|won|wouldn|shouldn)'?t\s*$",
    re.I,
)


def _is_rule(rule: str, pattern: re.Pattern, sentence: str) -> bool:
    """Whether a sentence that holds a rule's words (`pattern`, the rule's own) is a rule of that kind
    (English only: the Chinese patterns are left as they are)."""
    if _CJK.search(sentence):
        return True
    if rule == "preference":  # "I want to make sure I get it right" is a plan, not a preference
        return any(
            not re.match(r"\s+to make sure\b", sentence[found.end() :], re.I)
            for found in pattern.finditer(sentence)
        )
    if rule == "correction":
        if _QUESTION.search(sentence) and not _ASKS_FOR_A_CORRECTION.search(sentence):
            return False
        for found in pattern.finditer(sentence):
            if not found.group(0).lower().startswith("not"):
                return True
            if _NOT_BUT.match(found.group(0)) and not _VERB_NOT.search(sentence[: found.start()]):
                return True
        return False
    if rule not in ("standing_instruction", "constraint"):
        return True
    if _QUESTION.search(sentence) and not _ASKS_FOR_A_RULE.search(sentence):
        return False
    if rule == "standing_instruction":
        strong = re.search(r"\b(from now on|going forward|in future)\b", sentence, re.I)
        return bool(strong) or not _SAID_OF_ONESELF.search(sentence)
    for found in pattern.finditer(sentence):
        words = found.group(0).lower().replace("\u2019", "'")
        if words in ("do not", "don't", "dont"):
            if _ORDER_NOT.search(sentence[: found.end()]):
                return True
            continue
        if not _NOT_A_CONSTRAINT.search(sentence[max(0, found.start() - 40) : found.end() + 8]):
            return True
    return False


class RuleExtractor:
    name = "rules"

    def extract(self, turns: list[dict]) -> list[Extracted]:
        out: list[Extracted] = []
        for turn in turns:
            if turn.get("role") != "user":
                continue  # only what the user said becomes a candidate; replies and tools are evidence
            for match in _SENTENCE.finditer(turn.get("content") or ""):
                sentence = match.group(0).strip()
                if len(sentence) < 4:
                    continue
                for rule, kind, confidence, pattern in RULES:
                    if pattern.search(sentence) and _is_rule(rule, pattern, sentence):
                        out.append(
                            Extracted(
                                kind=kind,
                                text=sentence,
                                rule=rule,
                                confidence=confidence,
                                meta={"from_ref": turn.get("ref") or ""},
                            )
                        )
                        break
        return out


class LLMExtractor:
    """Asks a language model (any callable prompt → text) for JSON lines {kind, text}."""

    name = "llm"
    PROMPT = (
        "List the durable facts, constraints, preferences and corrections the user stated, one JSON "
        "object per line: {\"kind\": \"convention|preference|semantic\", \"text\": \"...\"}.\n\n"
    )

    def __init__(self, complete):
        self.complete = complete

    def extract(self, turns: list[dict]) -> list[Extracted]:
        convo = "\n".join(f"{t.get('role')}: {t.get('content')}" for t in turns)
        out = []
        for line in self.complete(self.PROMPT + convo).splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if (
                isinstance(item, dict)
                and item.get("kind") in Kind.values
                and str(item.get("text", "")).strip()
            ):
                out.append(
                    Extracted(kind=item["kind"], text=str(item["text"]).strip(), rule="llm", confidence=0.5)
                )
        return out


def get_extractor() -> Extractor:
    name = getattr(settings, "MEMORY_EXTRACTOR", "rules")
    if name == "llm":
        return LLMExtractor(import_string(settings.MEMORY_LLM_EXTRACTOR))
    return RuleExtractor()
