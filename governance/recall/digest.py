"""A long turn as a digest with a locator: what the packet carries of a tool's log or a long reply instead of
the whole text or nothing. A render log of a thousand characters is ten times the sentence that matters
beside it; whole, four of them filled the recent slot and pushed the user's words out, and dropped, the
agent lost that the call happened at all.

The digest keeps the text's distinct parts in their order (a part repeated is kept once, with its count:
"glyph 缺失 U+4E2D (×12)"), preferring the parts that hold the request's words and the parts that report a
failure or a warning, up to a length; the block says how long the whole text is and where to fetch it (the
memory's id, its call and turn), so nothing is cut silently."""

from __future__ import annotations

import re

from governance.models import lexical

# Where a log's parts end: lines, and the separators a one-line log uses.
_PARTS = re.compile(r"\n+|(?<=[;；。])\s*|(?<=\.)\s+(?=[A-Z\u4e00-\u9fff])")
# Parts that report something went wrong are kept before others.
_NOTABLE = re.compile(
    r"\b(?:error|errors|failed|failure|fails|exception|traceback|warning|warn|timed? ?out|denied|refused|"
    r"not found|missing)\b|失败|报错|错误|异常|超时|拒绝|警告|缺失|未找到",
    re.IGNORECASE,
)
ELLIPSIS = " …"


def _parts(text: str) -> list[tuple[str, int]]:
    """Distinct parts in order of first appearance, each with how many times it appears."""
    counts: dict[str, int] = {}
    for raw in _PARTS.split(text):
        part = " ".join(raw.split()).strip(" ;；")
        if part:
            counts[part] = counts.get(part, 0) + 1
    return list(counts.items())


def digest(text: str, limit: int, query: str = "") -> str | None:
    """The digest of `text` within about `limit` characters, or None when the text is short enough whole."""
    if len(text) <= limit:
        return None
    parts = _parts(text)
    wanted = set(lexical.terms(query)) if query else set()

    def rank(item: tuple[int, tuple[str, int]]) -> tuple[int, int]:
        index, (part, _count) = item
        if index == 0:
            return 0, index  # the first part says what the text is
        if wanted and set(lexical.terms(part)) & wanted:
            return 1, index
        if _NOTABLE.search(part):
            return 2, index
        return 3, index

    chosen: list[int] = []
    used = 0
    for index, (part, count) in sorted(enumerate(parts), key=rank):
        shown = part if count == 1 else f"{part} (×{count})"
        if used + len(shown) + 2 > limit:
            if not chosen:  # one part longer than the limit: its head
                chosen.append(index)
                used = limit
            continue
        chosen.append(index)
        used += len(shown) + 2
    out = []
    for index in sorted(chosen):
        part, count = parts[index]
        shown = part if count == 1 else f"{part} (×{count})"
        out.append(shown if len(shown) <= limit else shown[: max(1, limit - 1)].rstrip() + "…")
    body = "; ".join(out)
    return body + (ELLIPSIS if len(chosen) < len(parts) else "")


__all__ = ["digest"]
