"""The values a statement names, and their sort: what lets "改成 PPTX" be read against "最后导出 PDF" (both
name a file format), "we moved to PostgreSQL" against "we use MySQL" (a data store), "v3" against "v2" (a
version). A requirement's value is what a correction changes; two values of one sort in two statements of
one subject are a change, two values of different sorts are not.

Recognised by word lists and patterns, English and Chinese, because the sorts a user's requirements name
are few and closed (formats, languages, versions, days, times, quantities, stores, tools, fonts, colours,
currencies, time zones, who a thing is sent to, file names, chat channels, chart types, indentation,
deployment environments, programming languages, dark or light themes, what a list is sorted by, a number a
setting is set to) and a guess here decides what a correction replaces: a value not recognised leaves a
correction unresolved (a person reads it in the review queue), never resolved against the wrong thing.
A quantity's sort is what its unit measures ("quantity:length", "quantity:duration", ...).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from governance.services.swaps import swapped
from governance.services.value_words import WORDS

# Sorts whose words are everyday English too ("red tape", "a blue mood", "dollars" in a story): they count
# only near a word of their sort ("font", "colour", "currency") or as the object of a requirement's verb.
WEAK_SORTS = frozenset({"colour", "currency", "font", "environment"})
# Sorts whose words are everyday words in Chinese too, and after "用" ("文件名里不要用空格" is no indentation):
# they count only beside a word of their sort, however written.
NOUN_ONLY_SORTS = frozenset({"indentation"})
# A word of a sort that is also a common word or an abbreviation of one stays out unless written as the
# value (upper case, or after "as"/"in"/"to"): "doc", "md", "est", "email".
_AMBIGUOUS = frozenset({"doc", "md", "est", "email", "zip", "s3", "mongo", "oracle", "notion"})
# A product named by a common word counts only capitalised inside a sentence ("Word 格式", "export to Word";
# not "one word", nor "Word count matters.").
_CAPITALISED = frozenset({"word", "go", "rust", "swift", "java", "ruby", "dart"})

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# Patterns for the open sorts: (sort, what the pattern cannot match without, the pattern). What it needs is a
# digit ("digit") or a piece of text: most sentences name no number, and scanning them with every pattern
# cost more than the rest of the extraction.
_PATTERNS: tuple[tuple[str, str, re.Pattern], ...] = (
    ("version", "digit", re.compile(r"(?<![\w.])[vV](\d+(?:\.\d+)*)(?!\w|\.\d)")),
    ("version", "digit", re.compile(r"\bversion\s+(\d+(?:\.\d+)*)\b", re.I)),
    ("version", "版", re.compile(r"第\s*([一二三四五六七八九十\d]+)\s*版")),
    ("version", "版本", re.compile(r"版本\s*(\d+(?:\.\d+)*)")),
    ("time", ":", re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")),
    ("time", "digit", re.compile(r"\b(1[0-2]|0?[1-9])\s*(am|pm)\b", re.I)),
    ("time", "点", re.compile(r"(上午|下午|晚上|早上)?\s*([一二三四五六七八九十\d]{1,3})\s*点(半|钟)?")),
    ("date", "digit", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("date", "月", re.compile(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")),
    (
        "date",
        "digit",
        re.compile(
            # a month's name or its abbreviation as a whole word: "deck 42" and "marketing 5" are no dates
            r"\b(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
            r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b",
            re.I,
        ),
    ),
    # Who a thing goes to: "发给李娜", "抄送给老板", "Email the invoice to Dana", "send it to Kenji" (the value is
    # the name or role alone, so the words before it can negate it: "不要抄送给老板").
    (
        "recipient",
        "给",
        re.compile(
            r"(?:发给|发送给|交给|转给|寄给|提交给|抄送给?)\s*(?!我|你|他|她|它|大家)([\u4e00-\u9fff]{2,3}?|[A-Z][a-z]+)"
            r"(?=就行|就好|就可以|可以吗|行吗|好吗|怎么样|吧|了|呢|看|过目|审|一份|一下|[,，。;；!！?？\s]|$)"
        ),
    ),
    (
        "recipient",
        " to ",
        re.compile(
            r"\b(?:send|email|e-mail|forward|cc|give|hand|assign|submit|deliver|mail)\b"
            r"(?:\s+(?:it|this|that|them|these|those|(?:the|my|our|your)\s+\w+(?:\s+\w+)?))?\s+to\s+((?-i:[A-Z][a-z]+))\b",
            re.I,
        ),
    ),
    # A file named ("report_final.docx") and a chat channel ("#design"; not "#42", an issue's number).
    (
        "filename",
        ".",
        re.compile(
            r"(?<![\w./-])[\w-]+\.(?:docx?|pdf|pptx?|xlsx?|csv|tsv|md|txt|json|ya?ml|html?|png|jpe?g|svg|zip|key)\b",
            re.I,
        ),
    ),
    ("channel", "#", re.compile(r"(?<![\w#&])#(?!\d+\b)[A-Za-z0-9][\w-]{1,40}")),
    (
        "quantity",
        "digit",
        re.compile(
            r"(\d+(?:[.,]\d+)?)\s*(pages?|slides?|words?|characters?|lines?|seconds?|secs?|ms|milliseconds?|"
            r"minutes?|mins?|hours?|days?|weeks?|months?|years?|pt|px|points?|percent|%|mb|gb|kb|rows?|items?|"
            r"毫秒|秒|页|张|字|行|条|分钟|小时|天|周|个月|年|号|磅|像素)",
            re.I,
        ),
    ),
    # What a list or table is sorted or grouped by: an open sort, its value the key ("sort the table by date",
    # "order them by price instead", "表格按日期排序", "按价格倒序排列").
    (
        "order",
        " by ",
        re.compile(
            r"\b(?:sort|order|rank|group|arrange)(?:s|ed|ing)?\b(?:\s+(?!by\b)[\w'-]+){0,4}?\s+by\s+"
            r"(?:the\s+|their\s+|its\s+|each\s+)?((?!the\b|a\b|an\b)[A-Za-z][\w-]*)",
            re.I,
        ),
    ),
    # A setting's number, as a request sets it ("set the batch size to 64", "reduce it to 32", "设成 64"): a
    # number with no unit, right after the words that set it.
    (
        "number",
        "digit",
        re.compile(
            r"\b(?:set|change|keep|raise|lower|increase|reduce|bump|cut|drop|make)\b(?:\s+[\w'-]+){0,4}?\s+(?:to|at)\s+"
            r"(\d+(?:\.\d+)?)(?!\d|[.:]\d|\s*(?:am|pm|%|[A-Za-z]))",
            re.I,
        ),
    ),
    (
        "number",
        "digit",
        re.compile(
            r"(?:设成|设为|设置为|设置成|改成|改为|调到|调成|调为|定为|放宽到|增加到|减少到|降到|提高到|降低到)\s*"
            r"(\d+(?:\.\d+)?)(?!\d|[.:]\d|\s*(?!吧|就|了|呢|啊)[\u4e00-\u9fff%A-Za-z])"
        ),
    ),
    (
        "order",
        "按",
        re.compile(
            r"按照?\s*([\u4e00-\u9fffA-Za-z]{1,6}?)\s*(?:从[^,，。；;]{1,8})?(?:倒序|升序|降序)?(?:排序|排列|排|分组)"
        ),
    ),
)

_SORT_NOUNS = {
    "font": re.compile(r"\bfont|typeface|字体", re.I),
    "colour": re.compile(r"\bcolou?r|颜色|配色|背景|主题色", re.I),
    "currency": re.compile(
        r"\bcurrenc|\bprice|\bamount|\bbudget|\bpaid|\bpay|货币|金额|价格|预算|币种", re.I
    ),
    # tabs and spaces are the indentation's only where it is named, or both are ("Spaces, not tabs.")
    "indentation": re.compile(
        r"\bindent|缩进|\bspaces?\b.*\btabs?\b|\btabs?\b.*\bspaces?\b|空格.*tab|tab.*空格", re.I
    ),
    "environment": re.compile(r"\bdeploy|\bserver|\benvironment|\brelease|\bship|部署|环境|上线|发布", re.I),
}


@dataclass(frozen=True)
class Value:
    sort: str  # format, language, version, store, tool, ..., time, date, quantity
    norm: str  # canonical, for comparing mentions: "pptx", "v3", "postgresql", "14 pt"
    text: str  # as written
    start: int
    end: int


def _canonical_table() -> tuple[dict[str, tuple[str, str]], re.Pattern]:
    """The spellings (lowercased, words joined by one space or hyphen as written) → (sort, canonical), and a
    pattern of the Chinese spellings. English spellings are looked up word by word (a dict, not an
    alternation of hundreds of words: that read every sentence in ~1 ms)."""
    table: dict[str, tuple[str, str]] = {}
    for sort, groups in WORDS.items():
        for group in groups:
            for spelling in group:
                table[spelling] = (sort, group[0])
    chinese = sorted((s for s in table if _CJK.search(s)), key=len, reverse=True)
    return table, re.compile("|".join(re.escape(s).replace(r"\ ", r"\s*") for s in chinese))


_TABLE, _CJK_WORDS = _canonical_table()
_LONGEST = max(len(re.findall(r"[a-z0-9]+", s)) for s in _TABLE)
# The first word of every English spelling: any other word starts none (most words of a sentence).
_FIRST = frozenset(re.findall(r"[a-z0-9]+", s)[0] for s in _TABLE if not _CJK.search(s))
# English words (and the digits in "mp4", "s3"); what joins two words of one spelling.
_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+")
_JOINER = re.compile(r"^[ \t-]+$")


def _spelled(text: str, lowered: str) -> list[tuple[str, int, int]]:
    """(spelling, start, end) of each spelling of the table in `text`, longest first at each place."""
    found = []
    tokens = list(_ASCII_TOKEN.finditer(lowered))
    i = 0
    while i < len(tokens):
        if tokens[i].group(0) not in _FIRST:
            i += 1
            continue
        for n in range(min(_LONGEST, len(tokens) - i), 0, -1):
            span = tokens[i : i + n]
            if any(
                not _JOINER.match(lowered[a.end() : b.start()]) for a, b in zip(span, span[1:], strict=False)
            ):
                continue
            start, end = span[0].start(), span[-1].end()
            if (start and lowered[start - 1] in ".-") or (end < len(lowered) and lowered[end] == "-"):
                continue  # a part of another word ("file.pdf" is a name, "e-mail" a word of its own)
            words = [t.group(0) for t in span]
            spelling = next(
                (s for s in (" ".join(words), "-".join(words), "".join(words)) if s in _TABLE), None
            )
            if spelling is not None:
                found.append((spelling, start, end))
                i += n
                break
        else:
            i += 1
    found += [(" ".join(m.group(0).split()), m.start(), m.end()) for m in _CJK_WORDS.finditer(lowered)]
    return found


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _as_value(text: str, start: int, end: int) -> bool:
    """An ambiguous spelling counts when written as a value: in capitals ("KEY", "PG"), or right after "as",
    "in", "to", "into", "by", "via" or "用/成/为/通过"."""
    word = text[start:end]
    if word.isupper() and len(word) > 1:
        return True
    before = text[max(0, start - 8) : start].lower()
    return bool(re.search(r"(\bas|\bin|\bto|\binto|\bby|\bvia|\bover|用|成|为|到|通过)\s*$", before))


def values_in(text: str) -> list[Value]:
    """Every value `text` names, in order of appearance (one per place). Read once per text (a scope's rules
    are read against every sentence a user says)."""
    return list(_values_in(text))


@functools.lru_cache(maxsize=8192)
def _values_in(text: str) -> tuple[Value, ...]:
    text = _normalise(text)
    found: list[Value] = []
    taken: list[tuple[int, int]] = []
    digits = any(c.isdigit() for c in text)
    for sort, needs, pattern in _PATTERNS:
        if not (digits if needs == "digit" else needs in text):
            continue  # what the pattern must find is not in the text: no scan
        for match in pattern.finditer(text):
            if any(s < match.end() and match.start() < e for s, e in taken):
                continue
            if sort == "time" and _A_LITTLE.match(match.group(0)):
                continue  # "调小一点", "快一点": "a little", not one o'clock
            if sort in ("recipient", "order", "number"):  # the name, role, key or number alone
                name = match.group(1)
                found.append(Value(sort, name.lower(), name, *match.span(1)))
                taken.append(match.span(1))
                continue
            norm = _pattern_norm(sort, match)
            if sort == "quantity":  # 200 words and 500 KB are not two values of one thing
                sort = f"quantity:{_MEASURES.get(norm.split()[-1], norm.split()[-1])}"
            found.append(Value(sort, norm, match.group(0).strip(), *match.span()))
            taken.append(match.span())
    lowered = text.lower()
    for spelling, start, end in _spelled(text, lowered):
        if any(s < end and start < e for s, e in taken):
            continue
        sort, norm = _TABLE[spelling]
        if spelling in _AMBIGUOUS and not _as_value(text, start, end):
            continue
        if spelling in _CAPITALISED and (
            not text[start].isupper()
            or re.search(r"(?:^|[.!?。！？]\s*)$", text[:start])
            and not re.match(r"\s*(?:格式|文档|文件|format|document|file)", text[end:], re.I)
        ):
            continue  # lower case, or capitalised only as a sentence's first word ("Word count matters.")
        if sort in NOUN_ONLY_SORTS and not _SORT_NOUNS[sort].search(text):
            continue
        if sort in WEAK_SORTS and not (
            _SORT_NOUNS[sort].search(text) or _as_value(text, start, end) or _CJK.search(spelling)
        ):
            continue
        found.append(Value(sort, norm, text[start:end], start, end))
        taken.append((start, end))
    found.sort(key=lambda v: v.start)
    return tuple(found)


# "一点" / "两点" alone after a verb or adjective is "a little" far more often than a time of day; with 上午,
# 下午, 晚上, 早上, 钟 or 半 it is a time.
_A_LITTLE = re.compile(r"^\s*[一]\s*点$")

_ZH_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九", start=0)}


def _zh_number(text: str) -> str:
    if text.isdigit():
        return str(int(text))
    if text == "十":
        return "10"
    if text.startswith("十"):
        return str(10 + _ZH_DIGITS.get(text[1:], 0))
    if "十" in text:
        tens, _, ones = text.partition("十")
        return str(_ZH_DIGITS.get(tens, 0) * 10 + _ZH_DIGITS.get(ones, 0))
    return "".join(str(_ZH_DIGITS.get(c, c)) for c in text)


_UNITS = {
    "秒": "second",
    "secs": "second",
    "sec": "second",
    "毫秒": "ms",
    "milliseconds": "ms",
    "millisecond": "ms",
    "条": "item",
    "页": "page",
    "张": "slide",
    "字": "word",
    "行": "line",
    "分钟": "minute",
    "mins": "minute",
    "min": "minute",
    "小时": "hour",
    "天": "day",
    "周": "week",
    "个月": "month",
    "年": "year",
    "号": "size",
    "磅": "pt",
    "points": "pt",
    "point": "pt",
    "像素": "px",
    "%": "percent",
}


# What a quantity's unit measures: a change of a length limit is a length, of a timeout a duration.
_MEASURES = {
    **dict.fromkeys(("page", "slide", "word", "character", "line", "item", "row"), "length"),
    **dict.fromkeys(("ms", "second", "minute", "hour", "day", "week", "month", "year"), "duration"),
    **dict.fromkeys(("kb", "mb", "gb"), "bytes"),
    **dict.fromkeys(("pt", "px", "size"), "type size"),
}


def _pattern_norm(sort: str, match: re.Match) -> str:
    if sort == "version":
        return f"v{_zh_number(match.group(1))}"
    if sort == "quantity":
        unit = match.group(2).lower()
        unit = _UNITS.get(unit, unit.rstrip("s") if len(unit) > 2 else unit)
        return f"{match.group(1).replace(',', '.')} {unit}"
    if sort == "time" and match.re.pattern.startswith("(上午"):
        hour = int(_zh_number(match.group(2)) or 0)
        if match.group(1) in ("下午", "晚上") and hour < 12:
            hour += 12
        return f"{hour:02d}:{30 if match.group(3) == '半' else 0:02d}"
    if sort == "time" and ":" in match.group(0):
        return f"{int(match.group(1)):02d}:{match.group(2)}"
    if sort == "time":
        hour = int(match.group(1)) % 12 + (12 if match.group(2).lower() == "pm" else 0)
        return f"{hour:02d}:00"
    if sort == "date" and match.lastindex == 2:  # "Dec 12", "December 12th", "12月3日": month-day
        month = match.group(1).lower()
        number = _MONTHS.get(month[:3]) if month[:1].isalpha() else int(_zh_number(month) or 0)
        return f"{number:02d}-{int(match.group(2)):02d}"
    return " ".join(match.group(0).lower().split())


_MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)}


def sorts_of(values: list[Value]) -> set[str]:
    return {v.sort for v in values}


def changed(earlier: list[Value], later: list[Value]) -> list[tuple[Value, Value]]:
    """Pairs (was, now) of one sort where the later statement names a value the earlier does not and the
    earlier names one the later does not: a change of that sort's value."""
    out = []
    for sort in sorts_of(earlier) & sorts_of(later):
        was = [v for v in earlier if v.sort == sort]
        now = [v for v in later if v.sort == sort]
        was_norms, now_norms = {v.norm for v in was}, {v.norm for v in now}
        dropped = [v for v in was if v.norm not in now_norms]
        new = [v for v in now if v.norm not in was_norms]
        if dropped and new:
            out.append((dropped[0], new[0]))
    return out


# Words before a value that name it to be avoided or replaced ("not PDF", "instead of PDF", "别用 PDF").
def as_dict(value: Value) -> dict:
    """A value as a requirement records it (meta["requirement"]: values, negated, stage)."""
    return {"sort": value.sort, "norm": value.norm, "text": value.text}


def named(values: list[Value], negated: list[Value]) -> dict:
    """A requirement's `values` (those it names, the negated ones aside) and `negated`."""
    return {
        "values": [as_dict(v) for v in values if v not in negated],
        "negated": [as_dict(v) for v in negated],
    }


def bare_requirement(kind: str, sentence: str, *, conversational: bool = True) -> dict:
    """A requirement of `kind` read from the values of `sentence` alone: no stage, not lasting (a choice, a
    withdrawal, an accepted offer: each is one only against what it replaces, services/requirements.py)."""
    values = values_in(sentence)
    return {
        "type": kind,
        **named(values, negated_values(sentence, values)),
        "stage": [],
        "lasting": False,
        "conversational": conversational,
    }


# A reminder is no negation: "Don't forget the PDF at the end.", "别忘了最后导出 PDF。" ask for the PDF.
REMINDER = re.compile(r"\b(?:don'?t|do not|never) forget\b|别忘|不要忘|千万别忘", re.I)
_NEGATES = re.compile(
    r"(\bnot|\bno|\bnever|\bdon'?t use|\bdo not use|\binstead of|\brather than|\bother than|\bno more|"
    r"\bno longer|\bskip|\bdrop|\bforget(?: about)?|\bwithout|\bno need for|\bdo(?:n'?t| not) (?:need|want)|"
    r"不要用?|别用?|不用|不再用?|而不是|不是|取消)\s*(?:the\s+|a\s+|an\s+)?(?:\w+\s+)?$"
    r"|(?:不要|别|不用|不再)[\u4e00-\u9fff]{1,2}(?:到|成|给)?\s*$"
    # a bare 不 before the verb of the work ("导出 PPTX,不导 PDF 了"); not 不同 / 不错 / 不少 (other words)
    r"|不再?(?:导出?|输出|发|用|做|交|转|存|写|生成|给)(?:成|到|给)?\s*$",
    re.I,
)
# ... or after it: "PDF 就不要了", "PDF 算了", "PDF 不行", "the PDF isn't needed", "PDF won't work". A 不要
# after the value that ends its clause drops it; one that goes on to a verb is about what to do with it
# ("PDF 不要压缩": keep the PDF); so does a verdict that ends its clause ("PDF 不行,换 PPTX"), while one
# that goes on says something else ("PDF 不行的话…", "PDF 不好打开").
_NEGATED_AFTER = re.compile(
    r"^\s*(?:就|也|都|先|还是)?\s*(?:(?:不要|不用|不需要)了?\s*(?=[,，。;；!！?？]|$)|算了|免了|取消"
    r"|(?:别|不要|不用|不再|不)(?:导出?|输出|发|做|生成|交|给|用)了)"
    r"|^\s*(?:就|也|还是|肯定|恐怕)?\s*(?:不行|不太行|不好|不太好|不合适|不太合适|不好使|不方便)了?\s*(?=[,，。;；!！]|$)"
    r"|^\s*(?:is|are)?\s*(?:not|no longer) needed\b|^\s*is(?:n'?t| not) (?:needed|necessary)\b"
    r"|^\s*(?:won'?t|will not|wouldn'?t|would not) (?:work|do)\b|^\s*(?:is|'s) (?:no good|not ideal)\b",
    re.I,
)


# An A-not-A question ("要不要改成 PPTX", "用不用 PDF") asks whether: its 不 negates nothing.
A_NOT_A = re.compile(r"([\u4e00-\u9fff])不\1")


def _blank(match: re.Match) -> str:
    return " " * len(match.group(0))


def negated_values(sentence: str, values: list[Value]) -> list[Value]:
    """The values of `sentence` it names to be avoided or replaced: "not PDF", "instead of PDF", "别用 PDF",
    "skip the PDF", "PDF 就不要了", "PDF 改 PPTX" (services/swaps.py); not one a reminder names ("don't forget the
    PDF", "别忘了导出 PDF")."""
    moved = swapped(sentence, values) if len(values) > 1 else ()
    return [
        v
        for v in values
        if (
            _NEGATES.search(before := A_NOT_A.sub(_blank, sentence[max(0, v.start - 24) : v.start]))
            and not REMINDER.search(before)
        )
        or _NEGATED_AFTER.match(sentence[v.end :])
        or v in moved
    ]


__all__ = [
    "A_NOT_A",
    "REMINDER",
    "Value",
    "as_dict",
    "bare_requirement",
    "changed",
    "named",
    "negated_values",
    "sorts_of",
    "values_in",
]
