"""Small talk: a conversation turn with nothing to remember ("ok", "thanks!", "haha nice", "好的，谢谢").
Such a turn is still stored as the episode it is (the conversation's record, its recent turns), but it is
not embedded and has no keyword text, so recall never brings it back as evidence.

The rule is general, not fitted to a data set: a short turn (at most MAX_CHARS characters, MAX_WORDS
words) every word of which is an acknowledgement, greeting or reaction form (ACK_WORDS, or a laugh or
stretched "ok" such as "hahaha", "okkk") or a function word (governance.models.lexical.STOPWORDS and a few
intensifiers); in Chinese, a turn that is nothing but acknowledgement phrases (ACK_ZH) and particles.
Anything with a content word (a name, a number, a noun, a verb that is not a reaction) is kept. Only
user and assistant turns are judged: a tool's "ok" is the result of a call."""

from __future__ import annotations

import re
import unicodedata

from governance.models.lexical import STOPWORDS

MAX_CHARS = 60
MAX_WORDS = 8

ACK_WORDS = frozenset(
    "ok okay okey k kk alright allright right sure fine yes yeah yea yep yup ya no nope nah "
    "thanks thank thx ty tysm cheers welcome np "
    "hi hello hey hiya howdy bye goodbye byebye cya later morning night evening afternoon "
    "good great nice cool awesome perfect wonderful amazing sweet lovely excellent fantastic brilliant "
    "neat wow whoa oh ooh ah aha ahh hmm hm um uh mhm uh-huh yay woo woohoo omg "
    "haha hahaha hehe lol lmao rofl xd "
    "got it sounds see ya indeed totally agreed agree exactly absolutely definitely sounds noted "
    "love glad happy hear take care".split()
)
# Function words and intensifiers that carry no content of their own in a reaction ("that's so cool").
FILLER = frozenset(
    "it's that's thats its s very so too really much lot all just quite pretty again well "
    "will would can could".split()
)
_LAUGH = re.compile(r"^(?:a*(?:ha|he|hi|ah)+h?|l+o+l+|x+d+|o+k+a*y*|k+|y+a+y+|w+o+w+|h+m+|u+m+|a+h+|o+h+)$")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+", re.UNICODE)

ACK_ZH = sorted(
    "好的 好滴 好吧 好嘞 好啊 好 行 可以 没问题 没事 不客气 谢谢 谢了 多谢 感谢 谢谢你 谢谢您 辛苦了 "
    "哈哈 呵呵 嘿嘿 嘻嘻 嗯 嗯嗯 哦 噢 喔 收到 明白 明白了 了解 知道了 懂了 对 对的 是的 是 "
    "拜拜 再见 你好 您好 早 早上好 晚安 太好了 太棒了 厉害 棒 赞 不错 挺好 真好 好棒 ok".split(),
    key=len,
    reverse=True,
)
_ZH_PARTICLES = re.compile(r"[了呢啊吧呀哦嘛啦哈的你您我也很真太]")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_ZH_ACK = re.compile("|".join(map(re.escape, ACK_ZH)))

JUDGED_ROLES = frozenset({"user", "assistant"})


def is_small_talk(text: str) -> bool:
    """True when the turn has nothing a later question could be answered from (see the module doc)."""
    text = unicodedata.normalize("NFKC", text or "").strip().lower()
    if len(text) > MAX_CHARS:
        return False
    if _CJK.search(text):
        rest = _ZH_ACK.sub("", text)
        rest = _ZH_PARTICLES.sub("", rest)
        return not _CJK.search(rest) and not _WORD.search(rest)
    words = _WORD.findall(text)
    if len(words) > MAX_WORDS:
        return False
    for word in words:
        if word.isdigit():
            return False
        if word in ACK_WORDS or word in STOPWORDS or word in FILLER or _LAUGH.match(word):
            continue
        return False
    return True  # every word a reaction or a function word, or none at all (an emoji, "!!", "...")


def small_talk_turn(text: str, role: str) -> bool:
    """The write-time judgement for one conversation turn of `role` (tool turns are never small talk)."""
    return role in JUDGED_ROLES and is_small_talk(text)
