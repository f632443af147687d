"""Withdrawals: the user takes back something they asked for without asking for anything in its place ("PDF 不用导了。",
"Never mind the word limit.", "No need to sort it.", "预发就跳过吧。", "Don't send it to anyone yet."). Nothing in such a
sentence is a new value, so the reading of changes by value (services/requirements.py) finds nothing to replace;
alone it is not even a requirement. It is one only against what it withdraws: the clause that says so names it by
a value of it ("PDF", "staging"), by the words of its own request ("导出", "sort"), or by the name of the setting
its value sets ("字数" and "word limit" for a length, "主题" for a theme, "send" for a recipient).

`withdrawn_words` reads the sentence: the content words of the clause that withdraws something, or None when no
clause does. `withdraws` weighs them against one standing requirement: every word must name it, so "PDF 不用压缩了"
(don't compress the PDF) withdraws nothing of "最后导出 PDF", and a clause that only says how ("排序不用太复杂")
or is said of another time or person ("他昨天跳过了预发") is no withdrawal. A bare "never mind" or "算了" names
nothing and withdraws nothing: which of several requests it meant is a guess this reading does not make."""

from __future__ import annotations

import re

from governance.models import lexical
from governance.services.orders import MOTIVATION, QUESTION
from governance.services.subject import reports_an_event
from governance.services.values import REMINDER, bare_requirement

# What says that something asked for is withdrawn. English: an imperative at a clause's start (or after the words
# that soften one), or a need denied; Chinese: a need denied ending the clause (with 了/吧 or nothing after the
# verb), or a word that drops what it follows.
_SOFT_EN = (
    r"(?:^|\b(?:please|just|ok(?:ay)?|so|then|actually|and|but|oh|hmm|also|wait|let'?s|(?:we|you) can)\s+)"
)
_WITHDRAW_EN = re.compile(
    rf"{_SOFT_EN}(?:never\s?mind|nvm|forget(?:\s+about)?|skip|drop|scrap|scratch|ditch|cancel|leave out|stop(?= \w+ing)|"
    r"hold off on|don'?t bother(?: with)?)\b"
    r"|\bno need (?:to|for)\b|\bthere'?s no need\b|\b(?:you|we) (?:don'?t|do not|won'?t|will not) (?:need|have) to\b"
    r"|\b(?:i|we) (?:don'?t|do not|won'?t|no longer) need\b"
    r"|\b(?:is|are|will be)(?:n'?t| not| no longer) (?:needed|necessary|required)\b|\bwon'?t be (?:needed|necessary)\b"
    r"|\b(?:doesn'?t|don'?t) matter\b|\blet'?s not\b|\bchanged? my mind about\b|^\s*no\s+(?=\w)"
    r"|\bdon'?t\s+\w+(?:\s+\S+){0,5}?\s+(?:after all|any ?more|yet|for now)\b",
    re.I,
)
_WITHDRAW_ZH = re.compile(
    r"(?:不用|不要|不需要|无需|不必|用不着|没必要|别)(?![太很那么这么过于特别非常担心谢客气着急急忘])"
    r"[^,，。;；!！?？]{0,12}?(?:了|啦|吧)\s*$"
    r"|(?:就|也|先)?(?:算了|免了|跳过|略过|省了|省掉|不做了|不弄了|不搞了|不导了|不发了|不写了|无所谓了?|不重要了|不限了?|取消(?=吧|了|\s*$)|去掉吧)"
    r"|^\s*(?:取消|去掉|不要|不用|不需要|无需|不必|别)"
)
# Never a withdrawal: a reminder ("don't forget the PDF", values.REMINDER), a question, what another person
# did or what was so.
_NOT_EN = re.compile(r"\b(?:he|she|they|it) (?:didn'?t|doesn'?t|don'?t)\b", re.I)
_NOT_ZH = re.compile(
    r"^\s*(?:他|她|他们|她们|它)|已经|曾经|原来|原先|当时|上次|昨天|前天|去年|以前|之前|过了\s*$"
)
_CLAUSE = re.compile(r"[,，;；:：]")
# Words a withdrawing clause holds that say nothing of what it withdraws: its own cue, pronouns, particles.
_CARRIES = frozenset(
    lexical.words(
        "never mind nvm forget about skip drop scrap scratch ditch cancel leave out hold off bother need needed stop "
        "necessary required matter doesn't don't do not won't will be no longer there's is are isn't aren't can let's "
        "changed change my mind you we i it them "
        "this that these those anyone anything anywhere anybody everyone all any more anymore after yet for now please "
        "just ok okay "
        "so then actually and but oh hmm also wait let's one at "
        "不用 不要 不需要 无需 不必 用不着 没必要 别 了 啦 吧 就 也 先 算了 免了 跳过 略过 省了 省掉 不做 不弄 不搞 不 不导 不发 不写 就算 "
        "无所谓 不重要 取消 去掉 它 这个 那个 一下 现在 暂时 直接"
    )
) | {"don", "doesn", "won", "t", "s", "ll"}
# The names of a setting, by the sort of the value that sets it (services/values.py): "字数不用限制了" names the
# length that "200 字以内" sets.
_SORT_NAMES = {
    "format": "format file type export 格式 文件格式 导出",
    "language": "language 语言",
    "programming_language": "language 语言",
    "theme": "theme mode 主题 模式 配色",
    "colour": "colour color 颜色 配色",
    "font": "font 字体",
    "chart": "chart graph plot 图 图表",
    "indentation": "indentation indent 缩进",
    "order": "sort sorting order ordering 排序 顺序 排",
    "recipient": "send email forward recipient 发 发送 收件人",
    "channel": "post channel 发 频道",
    "environment": "deploy deployment environment 部署 环境",
    "timezone": "timezone time zone 时区",
    "currency": "currency 货币 币种",
    "filename": "name file filename 文件名",
    "weekday": "day date schedule 日期 时间",
    "date": "day date deadline 日期 截止",
    "time": "time 时间",
    "number": "number count size 数量 大小",
    "quantity:length": "length limit word words character characters page pages cap 字数 字 长度 篇幅 限制 限",
    "quantity:duration": "duration timeout time limit 时长 超时 时间",
    "quantity:bytes": "size limit 大小 体积 限制",
    "quantity:type size": "size font 字号 大小",
}
_NAMES = {sort: frozenset(lexical.words(words)) for sort, words in _SORT_NAMES.items()}
# Verbs of one act: "Stop sending the weekly report." withdraws "Email the weekly report every Monday."
_ACTS = [
    frozenset(lexical.words(words))
    for words in (
        "send email e-mail mail forward post deliver share submit 发 发送 寄 邮件 发给",
        "export save output convert render produce 导出 输出 保存 转换 生成",
        "write draft compose 写 撰写 起草",
        "sort order rank arrange 排序 排列 排",
        "deploy release ship publish 部署 发布 上线",
        "schedule book 安排 预约",
    )
]
_CJK = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff]+$")


def withdrawn_words(sentence: str) -> frozenset[str] | None:
    """The content words of the clause of `sentence` that withdraws something (its cue, pronouns and particles
    left out), or None when no clause withdraws anything. Empty when the clause names nothing ("Never mind.")."""
    if QUESTION.search(sentence) or "？" in sentence or REMINDER.search(sentence):
        return None
    if _NOT_EN.search(sentence) or MOTIVATION.search(sentence) or reports_an_event(sentence):
        return None
    for clause in _CLAUSE.split(sentence):
        text = clause.strip().rstrip("。.!！")
        if not text:
            continue
        if _WITHDRAW_EN.search(text) or (_WITHDRAW_ZH.search(text) and not _NOT_ZH.search(text)):
            return frozenset(w for w in lexical.words(text) if w not in _CARRIES)
    return None


def withdrawal(requirement: dict | None, sentence: str, conversational: bool, words) -> dict | None:
    """`requirement` (the extractor's reading of `sentence`, or None) with the words it withdraws (`words`, of
    withdrawn_words); a sentence that is no requirement otherwise becomes a withdrawal, which stands only when
    it finds what it withdraws (services/requirements.py)."""
    if not words:
        return requirement
    if requirement is None:
        requirement = bare_requirement("withdrawal", sentence, conversational=conversational)
    return {**requirement, "withdraws": sorted(words)}


def withdraws(words: frozenset[str], text: str, values) -> int:
    """How surely the withdrawn `words` name the requirement `text` (with its `values`): 3 by a value of it, 2 by
    its own words or its setting's name, 0 when a word names something else or none names anything."""
    if not words:
        return 0
    own = set(lexical.words(text))
    value_words = {w for v in values for w in lexical.words(v.text)} | {v.norm.lower() for v in values}
    names = set().union(*(_NAMES.get(v.sort, frozenset()) for v in values)) if values else set()
    by_value = False
    for word in words:
        if word in value_words:
            by_value = True
        elif not (word in own or word in names or _said_in(word, text, own) or _same_act(word, own)):
            return 0
    return 3 if by_value else 2


def _same_act(word: str, own: set[str]) -> bool:
    return any(word in act and act & own for act in _ACTS)


def _said_in(word: str, text: str, own: set[str]) -> bool:
    """A Chinese word of the requirement that the word segmenter cut otherwise ("翻译" in "翻译成法语"), or its verb
    said short ("导" for "导出", "排" for "排序")."""
    if not _CJK.match(word):
        return False
    if len(word) > 1:
        return word in text
    return any(w.startswith(word) and len(w) > 1 for w in own)


__all__ = ["withdrawal", "withdrawn_words", "withdraws"]
