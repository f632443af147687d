"""A user's yes to what the assistant proposed: "要不要改成 PPTX,方便你后面编辑?" — "好的。", "Should I export it as PPTX
instead?" — "Yes please.". The user's turn names nothing, so no reading of it alone finds a requirement, and the
assistant's proposal is never the user's word by itself (docs/governance.md, "What counts as the user's"). Said
together, the proposal is what the user asked for: the user's turn becomes a choice of the values the proposal
names, read against what stands in its session like any other (services/requirements.py: it replaces the
earlier request of that sort, or it is dropped when nothing of the sort stands).

Both must be plain: the user's whole turn is an acceptance and nothing else ("Yes please.", "Sure, go ahead.",
"行,就这么办。"), and the assistant's turn just before it, in this event or the last one stored of the session,
holds a sentence that offers (a question it asks, "I suggest …", "要不要 …", "建议 …") and names a value. A
"no", an acceptance of an offer without a value ("Should I continue?" — "Yes."), or an assistant's statement
("已经导出 PDF 了。" — "好的。") change nothing."""

from __future__ import annotations

import re

from governance.models import Kind, Memory, SourceKind, Status
from governance.services.extraction import SENTENCE, Extracted
from governance.services.values import bare_requirement, values_in

MAX_CHARS = 40  # an acceptance is a few words; a longer turn says something of its own
_ACCEPTS = re.compile(
    r"^\W*(?:(?:yes|yeah|yep|yup|sure|ok(?:ay)?|alright|all right|sounds good|good idea|great|perfect|fine|"
    r"absolutely|of course|go ahead|go for it|please do|do it|do that|that works|let'?s do (?:it|that)|please)\b[\s,.!]*)+"
    r"(?:thanks|thank you)?[\s.!]*$"
    r"|^\s*(?:(?:好的?|好啊|好吧|行|可以|没问题|就这么办|就这样|嗯嗯?|对|是的|同意|听你的|按你说的|改吧|换吧|用吧|那就这样|"
    r"需要|要|就它了|就用它|就这个|用这个)[吧啊呀的,，。!！\s]*)+"
    r"(?:谢谢)?[。!！\s]*$",
    re.I,
)
# An offer, in a sentence of the assistant's: a question that proposes, or a suggestion.
_OFFERS = re.compile(
    r"\b(?:should i|shall i|do you want me to|would you like me to|want me to|how about|what about|"
    r"i (?:could|can|suggest|'d suggest|would suggest|recommend|'d recommend)|may i|we could|maybe we should)\b"
    r"|要不要|是否|需不需要|要我|我可以|我来|建议|不如|换成|改成|改用|(?:可以|好|行)吗",
    re.I,
)
_CLAUSE = re.compile(r"(?<=[,，;；])")
# A pick of one of the values the assistant's question offers as alternatives ("导出 PDF 还是 PPTX?" — "后者。",
# "Should it be PDF or PPTX?" — "The second one."): the first or the last of them.
_PICKS = re.compile(
    r"^\W*(?:(?:the\s+)?(?P<first>former|first(?: one)?)|(?:the\s+)?(?:latter|second(?: one)?|last one))"
    r"(?:,?\s*(?:please|thanks|thank you))?[\s.!]*$"
    r"|^\s*(?:(?:就|要|用)?(?P<zh_first>前者|第一个|第一种|前面那个)|(?:就|要|用)?(?:后者|第二个|第二种|后面那个|后一个))"
    r"(?:吧|啊|呀|就行|就好)?(?:[,，]?\s*谢谢)?[。!！\s]*$",
    re.I,
)
_ALTERNATIVES = re.compile(r"还是|或者|或是|\bor\b", re.I)


def picked(text: str, offered: str | None) -> str | None:
    """The value a user's whole turn picks from the alternatives the assistant's last question offers (of
    one sort, two or more, joined by "or" / "还是"), or None."""
    found = _PICKS.match((text or "").strip()) if len(text or "") <= MAX_CHARS else None
    if found is None or not offered:
        return None
    asked = [m.group(0) for m in SENTENCE.finditer(offered) if "?" in m.group(0) or "？" in m.group(0)]
    if not asked or not _ALTERNATIVES.search(asked[-1]):
        return None
    values = values_in(asked[-1])
    if len(values) < 2 or len({v.sort for v in values}) != 1:
        return None
    return (values[0] if found.group("first") or found.group("zh_first") else values[-1]).text


def accepts(text: str) -> bool:
    """Whether a user's whole turn is an acceptance and nothing else."""
    return len(text) <= MAX_CHARS and bool(_ACCEPTS.match(text.strip()))


def offer_in(text: str) -> str | None:
    """What the last offer of an assistant's turn offers: the clause of its sentence that offers something and
    names a value ("我发给李娜可以吗?" of "张伟在休假,我发给李娜可以吗?": 张伟 is the reason, not the offer), or None."""
    found = None
    for match in SENTENCE.finditer(text or ""):
        for clause in _CLAUSE.split(match.group(0)):
            if _OFFERS.search(clause) and values_in(clause):
                found = clause.strip().rstrip(",，;；")
    return found


def accepted_offers(*, scope, session: str, turns: list[dict]) -> list[Extracted]:
    """A choice for each user turn of `turns` that accepts the offer of the assistant's turn just before it (in
    `turns`, or the session's last stored assistant turn when the user's turn opens the event)."""
    out = []
    before: dict | None = None
    for turn in turns:
        role = turn.get("role")
        if role == "assistant":
            before = turn
        elif role == "user":
            content = turn.get("content") or ""
            if accepts(content) or _PICKS.match(content.strip()):
                offered = before["content"] if before is not None else _last_assistant(scope, session)
                offer = picked(content, offered) if not accepts(content) else offer_in(offered or "")
                if (extracted := _choice(turn, offer)) is not None:
                    out.append(extracted)
            before = None  # the user spoke: an earlier offer is no longer the one answered
    return out


def _last_assistant(scope, session: str) -> str | None:
    if not session:
        return None
    return (
        Memory.objects.filter(
            scope=scope,
            session=session,
            kind=Kind.EPISODIC,
            source_kind=SourceKind.ASSISTANT,
            status=Status.ACTIVE,  # a forgotten turn offers nothing
            purged_at__isnull=True,
        )
        .order_by("-occurred_at", "-id")
        .values_list("text", flat=True)
        .first()
    )


def _choice(turn: dict, offer: str | None) -> Extracted | None:
    if offer is None:
        return None
    text = f"{turn['content'].strip()} ({offer})"
    requirement = bare_requirement("choice", offer)  # its values ("要不要改成 PPTX" does not negate PPTX)
    return Extracted(
        kind=Kind.CONVENTION,
        text=text,
        rule="choice",
        confidence=0.6,
        meta={
            "from_ref": turn.get("ref") or "",
            "accepts": {"text": offer},
            "requirement": requirement,
        },
    )


__all__ = ["accepted_offers", "accepts", "offer_in", "picked"]
