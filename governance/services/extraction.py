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
            r"actually,? (it'?s|use|make)|instead of|instead[.!]?$|not .+ but|correction:)|改成|改为|换成|改用|更正|"
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
            r"\b(i (prefer|like|love|hate|dislike|want)|i'?d rather|my favou?rite|please use)\b|"
            r"我(更)?(喜欢|偏好|倾向|讨厌|不喜欢|想要)|请用",
            re.I,
        ),
    ),
)


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
                    if pattern.search(sentence):
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
