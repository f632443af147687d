"""A change from one value to another said in one sentence: "PDF 改 PPTX 吧", "把 PDF 换成 PPTX", "格式从 PDF 改成
PPTX", "PDF → PPTX", "Switch from PDF to PPTX", "Change the PDF to PPTX", "Replace PDF with PPTX", "用 PPTX 代替
PDF", and the old value judged beside the new one: "PDF 不方便编辑,用 PPTX", "PDF 编辑不了,换 PPTX", "PDF is hard
to edit, use PPTX", "PDF doesn't work for me, PPTX please". Such a sentence names both values of one sort; the
one it moves away from is named to be replaced (services/values.negated_values), so the sentence replaces a
request for it instead of reading as a repeat of it.

Only between two values of the same sort, and only in the words of a change: "work Monday to Friday", "from
Monday to Friday", "PDF 和 PPTX 都要" or "PDF is hard to edit" alone change nothing."""

from __future__ import annotations

import re

# Between the old value and the new: "PDF 改 PPTX", "PDF 的格式换成 PPTX", "PDF → PPTX", "PDF to PPTX" (the
# English "to" only after a verb of change, below).
_BETWEEN_ZH = re.compile(
    r"^\s*(?:的)?(?:格式|文件|版本|版)?\s*(?:就|都|也|先)?\s*(?:改成|换成|改为|换为|转成|转为|变成|改用|换用|改到|换到|挪到|移到|调到|推到|改|换|转)"
    r"\s*(?:成|为|个|一个|一下)?\s*$"
)
_ARROW = re.compile(r"^\s*(?:->|→|=>|⇒)\s*$")
_BETWEEN_EN = re.compile(r"^\s*(?:format|file|version|one)?\s*(?:to|for|with|into)\s*(?:a|an|the)?\s*$", re.I)
_CHANGE_EN = re.compile(
    r"\b(?:change|changing|switch|switching|swap|swapping|replace|replacing|convert|converting|turn|move|go)"
    r"\s+(?:it\s+|that\s+|this\s+|the\s+\w+\s+)?(?:from\s+)?(?:the\s+|a\s+|an\s+)?$",
    re.I,
)
# Between the new value and the old: "用 PPTX 代替 PDF", "PPTX in place of PDF".
_INSTEAD = re.compile(
    r"^\s*(?:来)?(?:代替|替换|替代|取代|顶替)(?:掉)?\s*$|^\s*in place of\s*(?:the\s+)?$", re.I
)
# The old value judged as unfit for the work, beside a new one ("PDF 不方便编辑", "PDF is a pain to edit").
_UNFIT = re.compile(
    r"^\s*(?:就|也|还是|太|真的|实在|根本|完全)?\s*(?:不方便|不好|不太好|不行|不太行|不合适|不适合|没法|没办法|不能|不支持|不好用|"
    r"太难|很难|难以|太[\u4e00-\u9fff]|来不及|赶不上|[\u4e00-\u9fff]{1,2}不了)"
    r"|^\s*(?:is|are|'s)?\s*(?:just\s+|too\s+|really\s+|kind of\s+|a bit\s+|so\s+)?(?:too\s+\w+|hard|difficult|impossible|"
    r"a pain|annoying|awkward|clunky|useless|no good|not editable|not great|not ideal)\b"
    r"|^\s*(?:doesn'?t|does not|won'?t|will not|can'?t|cannot|isn'?t|is not)\s+(?:work|do|be edited|editable|"
    r"going to work)\b",
    re.I,
)
# A fallback is no change: "PDF 不行的话用 PPTX", "if PDF doesn't work, use PPTX".
_IF = re.compile(r"如果|要是|假如|万一|的话|\bif\b|\bin case\b|\bunless\b|\bwhen\b", re.I)


def _one_sort(a, b) -> bool:
    """Of one sort, or a bare number beside a quantity ("200 字太少了,放宽到 500": the number is in its unit)."""
    return a.sort == b.sort or {a.sort.split(":")[0], b.sort.split(":")[0]} == {"quantity", "number"}


def swapped(sentence: str, values) -> list:
    """The values of `sentence` it moves away from, each to another value of its sort that it names."""
    out = []
    if _IF.search(sentence):
        return out
    for old in values:
        for new in values:
            if new is old or not _one_sort(old, new) or new.norm == old.norm:
                continue
            if old.end <= new.start:
                between = sentence[old.end : new.start]
                if (
                    _BETWEEN_ZH.match(between)
                    or _ARROW.match(between)
                    or (_BETWEEN_EN.match(between) and _CHANGE_EN.search(sentence[: old.start]))
                ):
                    out.append(old)
                    break
            elif _INSTEAD.match(sentence[new.end : old.start]):
                out.append(old)
                break
            if _UNFIT.match(sentence[old.end :]) and not _UNFIT.match(sentence[new.end :]):
                out.append(old)
                break
    return out


__all__ = ["swapped"]
