"""What of a requirement still stands when a later one replaces part of it.

People say several requirements in one breath: "只处理我确认的 v3,别覆盖原文件,也先不要发布。", "Make a deck, export
it as PDF, and use Source Han Sans.". A later turn usually changes one of them: "可以发布了。" lifts the last
clause, "改成 PPTX。" changes the format. Read as a replacement of the whole sentence, the other clauses left
the packet with it, and the agent was free to overwrite the original file. So a replacement takes the
clauses it touches; the rest stays in force in the session, as the part of the earlier requirement a later
one left standing (services/requirements.py reads it as standing; recall/session_requirements.py pins it).

A clause is touched when the later requirement names a value of a sort the clause names ("PPTX" for "导出 PDF",
"v4" for "只处理 v3"), says the opposite of it (services/opposite.py: "可以发布了" against "先不要发布"), or
takes back what it names (services/retraction.py: "PDF 不用导了"). When it touches no clause by these, it is
not known which part it replaces, and it replaces the whole (as a correction that names nothing did before);
when it touches every clause that asks for something, nothing is left."""

from __future__ import annotations

import re
from functools import lru_cache

from governance.services.extraction import RuleExtractor, asks_for_work
from governance.services.opposite import contradicts
from governance.services.orders import CJK
from governance.services.retraction import withdrawn_words, withdraws
from governance.services.values import values_in

_CLAUSE = re.compile(r"[,，;；]")
_END = re.compile(r"[.!?。！？]+\s*$")
# What joins a clause to the one before it, left out when the clause opens what is left.
_JOIN = re.compile(r"^\s*(?:and|also|but|plus|then|并且|而且|还有|同时|另外|但是?|也|再)\s*", re.I)
# A clause that only leads into a change of mind ("Actually, …", "算了,…"), left out when it joins a rule.
_LEAD = re.compile(
    r"^\s*(?:actually|ok(?:ay)?|wait|well|so|then|hmm|on second thought|算了|其实|那就|好吧|嗯|等等)\s*$",
    re.I,
)
_EXTRACTOR = RuleExtractor()


def _clauses(text: str) -> list[str]:
    return [c.strip() for c in _CLAUSE.split(_END.sub("", text)) if c.strip()]


def _asks(clause: str) -> bool:
    """Whether the clause is a requirement by itself (the extractor reads one from it alone), or asks for
    something to be done without a value ("use Source Han Sans for every slide")."""
    if asks_for_work(clause):
        return True
    turn = {"role": "user", "content": clause, "ref": ""}
    return any(e.meta.get("requirement") for e in _EXTRACTOR.extract([turn]))


def _touches(clause: str, later: str) -> bool:
    sorts = {v.sort for v in values_in(clause)}
    if sorts & {v.sort for v in values_in(later)}:
        return True
    if contradicts(clause, later):
        return True
    words = withdrawn_words(later)
    return bool(words) and withdraws(words, clause, values_in(clause)) > 0


@lru_cache(maxsize=4096)
def standing_part(earlier: str, later: str) -> str:
    """The part of `earlier` that `later` leaves in force: its clauses `later` does not touch, joined again;
    "" when `later` replaces all of it (one clause, every asking clause touched, or none told apart)."""
    clauses = _clauses(earlier)
    if len(clauses) < 2:
        return ""
    touched = [_touches(c, later) for c in clauses]
    if not any(touched):
        return ""
    kept = [c for c, hit in zip(clauses, touched, strict=True) if not hit]
    if not any(_asks(c) for c in kept):
        return ""
    return _joined(kept, earlier)


def _joined(clauses: list[str], like: str) -> str:
    """`clauses` as one sentence in the manner of `like`: its comma, its end, and no joining word first."""
    if not clauses:
        return ""
    chinese = bool(CJK.search(like))
    first = _JOIN.sub("", clauses[0]) or clauses[0]
    if not chinese:
        first = first[:1].upper() + first[1:]
    end = _END.search(like)
    return ("," if chinese else ", ").join([first, *clauses[1:]]) + (end.group(0).strip() if end else "")


def standing_after(earlier: str, laters: list[str]) -> str:
    """What of `earlier` stands after each of `laters` (oldest first) replaced part of it; "" when nothing."""
    text = earlier
    for later in laters:
        text = standing_part(text, later)
        if not text:
            return ""
    return text


def revised(rule: str, correction: str) -> str:
    """What a rule reads once a correction of part of it is confirmed: the clauses the correction leaves
    standing, then the correction's own ("只处理我确认的 v3,别覆盖原文件,可以发布了。"); "" when it replaces the whole."""
    standing = standing_part(rule, correction)
    if not standing:
        return ""
    said = [c for c in _clauses(correction) if not _LEAD.match(c)]
    own = [c if CJK.search(c) or c[1:2].isupper() else c[:1].lower() + c[1:] for c in said]
    return _joined([*_clauses(standing), *own], rule)


def replaced_part(earlier: str, standing: str) -> str:
    """The clauses of `earlier` that are not in `standing` (what the later requirements took)."""
    kept = {_JOIN.sub("", c).lower() for c in _clauses(standing)}
    gone = [c for c in _clauses(earlier) if _JOIN.sub("", c).lower() not in kept]
    return _joined(gone, earlier)


__all__ = ["replaced_part", "revised", "standing_after", "standing_part"]
