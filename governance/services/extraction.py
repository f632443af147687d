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
from governance.services.choices import choice_of
from governance.services.orders import (
    ASKS_FOR_A_RULE,
    ASKS_YOU,
    CJK,
    LIMITS,
    MOTIVATION,
    QUESTION,
    SENTENCE,
    addressed_to_the_agent,
    clauses_marked,
)
from governance.services.retraction import withdrawal, withdrawn_words
from governance.services.subject import says_how_things_are, tells_how_it_behaves
from governance.services.values import Value, as_dict, named, negated_values, values_in


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


RULES: tuple[tuple[str, str, float, re.Pattern], ...] = (
    (
        "standing_instruction",
        Kind.CONVENTION,
        0.7,
        re.compile(
            r"\b(from now on|going forward|in future|always|never(?!\s?mind))\b|从现在(开始|起)|以后(都|请|要)?|今后|始终|永远不要",
            re.I,
        ),
    ),
    (
        "correction",
        Kind.SEMANTIC,
        0.65,
        re.compile(
            r"\b((change|switch) (it|that|this) to|(change|switch) (the|our|my) [^,;]{1,60}? to|"
            r"actually,? (it'?s|use|make)|instead of|instead[.!?]?$|not .+ but|correction:|"
            # the elliptical kind, naming only the new value ("make that Markdown", "switch it to PPTX"):
            # a value must follow (_is_rule), so "make it better" is none
            r"(make|turn|convert|switch|change) (it|that|this|them|those) (in)?to\b|make (it|that|this|them)\b)|"
            r"改成|改为|换成|改用|改回|换回|改到|挪到|推迟到|提前到|更正|还是用|不是.+而是",
            re.I,
        ),
    ),
    (
        "constraint",
        Kind.CONVENTION,
        0.6,
        re.compile(
            r"\b(must|must not|mustn'?t|do not|don'?t|make sure|required?|only use|no more than|at most|"
            r"at least|deadline)\b|必须|不要|不能|务必|一定要|不得|最多|至少|截止|禁止|不准|不许|"
            # "别" and "只" give an order at the start of a clause ("别覆盖原文件", "只处理 v3") or, "别", before
            # a short verb that ends it ("原文件别动"); elsewhere they are other words (别人, 特别, 只是)
            r"(^|[,，;；:：]|也|就|先|都|千万|可|请)\s*(别|只(?=处理|用|改|发|做|保留|要|看|修改|动|导出|使用|交))|仅限"
            r"|(?<![特区分告级性类派识离个道差鉴])别(?![人的处])(?=[\u4e00-\u9fff]{1,3}了?\s*[。!！]?\s*$)",
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
# the two rules proposed as conventions, nearly none of it a rule (docs/evaluation-log.md, "Rules read from a
# conversation").
# ... but a request in the form of one asks for it: a correction ("Can you make it PPTX instead?"), or a
# rule when the request is the rule's own words ("Can you always answer in French?", not "Can you
# recommend some must-visit spots?").
_ASKS_FOR_A_CORRECTION = re.compile(ASKS_YOU, re.I)
_SAID_OF_ONESELF = re.compile(
    # a subject other than the one addressed (and not a team's "we always …", how conventions are often
    # stated), then always / never within the clause, not said to "you" ("I want you to always …") and not
    # of what the speaker wants done ("I always want the totals in euros")
    r"\b(i|i'm|i've|i'd|i'll|he|she|he's|she's|it|it's|they|they're|they've|that|this|there|who|which|"
    r"everyone|everybody|nobody|someone|people)\b(?:(?!\byou\b)[^,;:.!?]){0,24}?\b(always|never)\b"
    r"(?!\s+(want|wants|prefer|prefers|need|needs|expect|expects|use|uses|ask|asks)\b)"
    # what something is, has been or can be ("the design is always so creative", "you can always type skip")
    r"|\b(is|are|was|were|am|has|have|had|can|could|'s|'re|isn't|aren't|wasn't|weren't|doesn't)\s+(always|never)\b",
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
# "The session's requirements").
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


_ELLIPTICAL = re.compile(r"(make|turn|convert|switch|change) (it|that|this|them|those)\b|make\b", re.I)


def _is_rule(rule: str, pattern: re.Pattern, sentence: str) -> bool:
    """Whether a sentence that holds a rule's words (`pattern`, the rule's own) is a rule of that kind
    (English only: the Chinese patterns are left as they are)."""
    if CJK.search(sentence):  # an open question ("要不要重构?") orders nothing
        return rule not in ("standing_instruction", "constraint") or says_how_things_are(sentence)
    if rule == "preference":  # "I want to make sure I get it right" is a plan, not a preference
        return any(
            not re.match(r"\s+to make sure\b", sentence[found.end() :], re.I)
            for found in pattern.finditer(sentence)
        )
    if rule == "correction":
        if QUESTION.search(sentence) and not _ASKS_FOR_A_CORRECTION.search(sentence):
            return False
        for found in pattern.finditer(sentence):
            if _ELLIPTICAL.match(found.group(0)):
                # "make that Markdown" corrects; "make it better", "switch it off" do not: a value follows
                if values_in(sentence[found.end() :]):
                    return True
                continue
            if not found.group(0).lower().startswith("not"):
                return True
            if _NOT_BUT.match(found.group(0)) and not _VERB_NOT.search(sentence[: found.start()]):
                return True
        return False
    if rule not in ("standing_instruction", "constraint"):
        return True
    if QUESTION.search(sentence) and not ASKS_FOR_A_RULE.search(sentence):
        return False
    if rule == "standing_instruction":
        strong = re.search(r"\b(from now on|going forward|in future)\b", sentence, re.I)
        return bool(strong) or not (_SAID_OF_ONESELF.search(sentence) or tells_how_it_behaves(sentence))
    for found in pattern.finditer(sentence):
        words = found.group(0).lower().replace("\u2019", "'")
        if words in ("do not", "don't", "dont"):
            if _ORDER_NOT.search(sentence[: found.end()]):
                return True
            continue
        if not _NOT_A_CONSTRAINT.search(sentence[max(0, found.start() - 40) : found.end() + 8]):
            return True
    return False


# --- The user's requirements ------------------------------------------------------------------------------
# What the user states about their own task (docs/governance.md, "The session's requirements"): a request
# that names a value ("最后导出 PDF", "write it in English"), a boundary ("别覆盖原文件", "don't publish yet"),
# a correction ("改成 PPTX", "make that Markdown"), a standing instruction ("from now on …"), and a stage
# fact the conversation establishes ("v3 is the confirmed version"). Each extracted sentence that is one
# carries meta["requirement"]: its type, the values it names (values.py) and those it names negated, the
# stage facts it states, and whether it would last beyond the session (`lasting`: a standing instruction
# or a boundary said in conversation; a correction is decided when it is resolved, services/requirements.py).

# A request's verb, at the start of a clause or after a word that asks for it; a value must follow it.
_ASK_EN = (
    r"(?:^|[,;:]\s*|\b(?:please|and|then|also|just|so|now|okay|ok|but|finally|lastly|first)\s+"
    r"|\b(?:can|could|would|will) you\s+(?:please\s+)?|\bi (?:need|want|'d like|would like) you to\s+"
    r"|\blet'?s\s+)"
)
_REQUEST_EN = re.compile(
    _ASK_EN + r"(export|save|send|deliver|output|write|render|convert|produce|give|make|use|format|answer|"
    r"reply|respond|translate|switch|set|put|draft|prepare|create|build|generate|keep|store|schedule|book|"
    r"move|host|deploy|publish|present|share|submit|print|attach|email|e-mail|forward|cc|assign|hand|post|"
    r"name|call|indent|limit|cap|shorten|trim|sort|order|rank|group|arrange|code|implement|rewrite|draw|plot|increase|reduce|raise|"
    r"lower|extend|expand|bump|relax|cut|return|show|display|list|include|add|label|title|highlight|align|"
    r"encode|compile|run|target|chart|style|colou?r)\b",
    re.I,
)
# "I need it in English", "the deck should be PPTX", "everything must be in UTC"
_NEEDS_EN = re.compile(
    r"\bi (?:need|want|'d like|would like) (?:it|them|this|that|the \w+|everything|all \w+) (?:in|as)\b"
    r"|\b(?:it|they|this|that|everything|the \w+)(?: \w+)? (?:should|must|needs? to|has to|have to) be\b",
    re.I,
)
# Chinese marks a request by position, not form: the verb opens the clause ("用中文回答"), follows a word
# that asks ("请", "帮我", "最后"), or follows the thing it is about ("幻灯片导出成 PDF", "数据用 CSV 交付").
# The same verb after a person ("我用MySQL", "他们用 Slack") or done already ("已经迁到", "导出了") tells
# what is, not what to do.
_VERB_ZH = (
    r"(导出|导成|导为|(?<![引指主报领向辅教])导(?=\s*[A-Za-z])|输出|保存为|保存成|存成|存为|做成|生成|转成|转换成|转为|(?<![不别])使用|(?<![不别])用|采用|写成|翻译成|发成|交付|提交|回复|回答|"
    r"处理|发到|发给|发送|安排在|定在|放在|改到|挪到|部署到|部署在|发布到|上线到|控制在|限制在|限定在|压缩到|缩短到|排序|排列|"
    r"分组|设成|设为|设置为|设置成|调成|定为|返回|显示|展示|列出|标成|标为|画成|放宽到|增加到|减少到|缩减到|提高到|降低到|调到|调整到|调整为|扩大到|(?<!预)发(?![现生展挥明烧表觉了过]))"
)
_REQUEST_ZH = re.compile(_VERB_ZH + r"(?![了过])")
_NOT_A_REQUEST_ZH = re.compile(
    r"^\s*(我|我们|他|她|他们|她们|它们|大家都)(?!要求|需要你|希望你)|已经|已|曾经|了\s*$|过\s*$"
    # what was so before ("旧接口以前返回 XML", "原来的列表按热度排序"); not a deadline ("周五之前发给客户")
    r"|原来|原先|当时|上次|昨天|前天|去年|那时|(?<![\d一二三四五六七八九十日号天点月年底末周班会前后])(?:以前|之前)"
)
# A date the work is due by is a requirement, said as a fact ("The deadline is Friday", "截止日期是周五").
_DUE = re.compile(r"\b(deadline|due date|due)\b|截止|期限|交付日期|交稿", re.I)
# A stage the conversation establishes: a value with a word that settles it ("v3 is final", "我确认的 v3").
_SETTLED_EN = (
    r"confirmed|approved|final|finali[sz]ed|signed[- ]off|locked|chosen|agreed|the one we (?:use|keep)"
)
_STAGE_BEFORE = re.compile(
    rf"\b(?:{_SETTLED_EN}|we (?:chose|picked|go with|are going with|settled on)|go(?:ing)? with|stick to|"
    r"only (?:work on|use|process|touch|edit))\b(?:\s+(?:the|version|on|with|to))*\s*$"
    r"|(?:确认|定稿|最终|敲定|选定|决定用|确定|批准|只处理|只用|只改)(?:了|的|好的)?\s*(?:版本|这版|那版)?\s*$",
    re.I,
)
_STAGE_AFTER = re.compile(
    rf"^\s*(?:is|was|has been|are)\s+(?:now\s+)?(?:the\s+)?(?:{_SETTLED_EN})\b"
    r"|^\s*(?:已经|已)?(?:确认|定稿|敲定|定了|是最终版|是定稿)",
    re.I,
)
# Pasted material (a document, a prompt) holds a requirement's words without the user stating one: read from a
# turn this long, or of this many sentences, it is pinned for its session but not sent to review as lasting.
CONVERSATIONAL_CHARS = 600
CONVERSATIONAL_SENTENCES = 6
# A boundary or standing instruction counts when it is about the work: it names a value (a format, a
# version, a day …) or a thing or act of the work below. The same words of an order said about a person's
# life are encouragement, advice or thanks ("Don't give up!", "Don't forget to take breaks", "Thanks for
# always being there"): on the real LoCoMo dev file, a conversation between two friends, they were all of
# the 40 boundaries and standing instructions read before this test (docs/evaluation.md, "The user's
# requirements on the real files").
_WORK_EN = re.compile(
    r"\b(?:files?|documents?|docs|reports?|decks?|slides?|presentations?|pages?|charts?|tables?|spreadsheets?|"
    r"sheets?|data|datasets?|databases?|code|modules?|functions?|tests?|branch(?:es)?|commits?|pull requests?|"
    r"scripts?|services?|config\w*|schemas?|migrations?|jobs?|queues?|drivers?|librar(?:y|ies)|packages?|"
    r"prs?|merge|deploy\w*|releases?|publish\w*|builds?|pipelines?|servers?|apis?|endpoints?|e-?mails?|"
    r"messages?|invoices?|clients?|customers?|contracts?|budgets?|meetings?|calendar|deadlines?|schedul\w*|"
    r"backups?|originals?|cop(?:y|ies)|versions?|drafts?|formats?|export(?:s|ed|ing|ers?)?|import(?:s|ed|ing|ers?)?|upload\w*|download\w*|"
    r"send|sent|share|attach\w*|cc|bcc|folders?|repos?|repository|projects?|tickets?|tasks?|repl(?:y|ies)|"
    r"answers?|responses?|respond|summar(?:y|ies|ise|ize)|translat\w*|fonts?|titles?|headings?|bullets?|"
    r"paragraphs?|words?|sentences?|cite|citations?|sources?|links?|images?|photos?|logos?|design|layout|"
    r"templates?|style|tone|notes?|outline|chapters?|sections?|lists?|refactor\w*|payments?|passwords?|"
    r"credentials?|secrets?|keys?|accounts?|orders?|quotes?|prices?|overwrite|delete|remove|rename|edit\w*|"
    r"write|writing|format\w*|apologi[sz]e|explain|examples?|code blocks?|markdown|output|print|log|logs)\b",
    re.I,
)
_WORK_ZH = re.compile(
    r"文件|文档|报告|演示|幻灯片|页|图表|表格|数据|代码|模块|函数|测试|分支|提交|合并|部署|发布|上线|构建|服务器|接口|"
    r"邮件|消息|发票|客户|合同|预算|会议|日程|截止|备份|原稿|原件|副本|版本|草稿|格式|导出|导入|上传|下载|发送|发给|"
    r"附件|抄送|文件夹|仓库|项目|任务|回复|回答|摘要|总结|翻译|字体|字号|标题|段落|引用|来源|链接|图片|设计|排版|模板|"
    r"风格|语气|重构|支付|密码|账号|订单|报价|价格|覆盖|删除|修改|编辑|输出|日志|需求|方案|流程|审批|财务|脚本|配置|驱动"
)


def about_the_work(sentence: str, values: list[Value] | None = None) -> bool:
    """Whether an order is about the work (a value, or a thing or act of it) rather than a person's life."""
    if MOTIVATION.search(sentence):
        return False
    if values is None:
        values = values_in(sentence)
    return bool(values) or bool(_WORK_EN.search(sentence) or _WORK_ZH.search(sentence))


def _requests_a_value(sentence: str, values: list[Value]) -> bool:
    """Whether the sentence asks for something and names the value it asks for after the asking words."""
    if not values or (QUESTION.search(sentence) and not _ASKS_FOR_A_CORRECTION.search(sentence)):
        return False
    for pattern in (_REQUEST_EN, _NEEDS_EN, _REQUEST_ZH, _DUE):
        for found in pattern.finditer(sentence):
            if pattern is _REQUEST_ZH and _NOT_A_REQUEST_ZH.search(
                _clause_of(sentence, found.start())[: found.start() - _clause_start(sentence, found.start())]
            ):
                continue
            if pattern is _REQUEST_ZH:
                # Chinese may name the value before the verb ("周五前把报告发给客户"): the clause's values count.
                start = _clause_start(sentence, found.start())
                end = start + len(_clause_of(sentence, found.start()))
                if any(start <= v.start < end for v in values):
                    return True
            elif any(v.start >= found.end() - 1 for v in values):
                if pattern is not _DUE or any(v.sort in ("weekday", "date", "time") for v in values):
                    return True
    return False


def asks_for_work(clause: str) -> bool:
    """Whether a clause asks for something to be done, with a value or without ("add a footer to each slide")."""
    found = _REQUEST_ZH.search(clause)
    zh = bool(found) and not _NOT_A_REQUEST_ZH.search(clause[: found.start()])
    return not QUESTION.search(clause) and (zh or bool(_REQUEST_EN.search(clause)))


def _clause_start(sentence: str, at: int) -> int:
    return max(sentence.rfind(c, 0, at + 1) for c in ",，;；:：") + 1


def _clause_of(sentence: str, at: int) -> str:
    """The clause of `sentence` that holds position `at` (between commas or semicolons)."""
    ends = [i for i in (sentence.find(c, at + 1) for c in ",，;；:：") if i >= 0]
    return sentence[_clause_start(sentence, at) : min(ends) if ends else len(sentence)]


def _stage_facts(sentence: str, values: list[Value]) -> list[dict]:
    facts = []
    for value in values:
        before, after = sentence[max(0, value.start - 40) : value.start], sentence[value.end : value.end + 40]
        settled = _STAGE_BEFORE.search(before) or _STAGE_AFTER.search(after)
        if settled:
            facts.append({**as_dict(value), "state": settled.group(0).strip()})
    return facts


def requirement_of(rule: str | None, sentence: str, turn_text: str) -> dict | None:
    """What a user's sentence requires of the task (see above), or None when it requires nothing: a
    preference said of oneself, a question, a story. `rule` is the extractor rule that matched, if any."""
    values = values_in(sentence)
    negated = negated_values(sentence, values)
    stage = _stage_facts(sentence, values)
    if rule == "correction":
        kind = "correction"
    elif rule in ("standing_instruction", "constraint") and about_the_work(sentence, values):
        kind = "standing" if rule == "standing_instruction" else "boundary"
    elif _requests_a_value(sentence, values):
        kind = "request"
    elif stage:
        kind = "stage_fact"
    else:
        return None
    conversational = _conversational(turn_text)
    return {
        "type": kind,
        **named(values, negated),
        "stage": stage,
        # a correction lasts when it is resolved against what it corrects (services/requirements.py)
        "lasting": conversational
        and kind in ("standing", "boundary")
        and addressed_to_the_agent(sentence)
        and (kind == "standing" or bool(LIMITS.search(sentence))),
        "conversational": conversational,
    }


def _conversational(turn_text: str) -> bool:
    return (
        len(turn_text) <= CONVERSATIONAL_CHARS
        and len(SENTENCE.findall(turn_text)) <= CONVERSATIONAL_SENTENCES
    )


def user_sentences(turns: list[dict]) -> list[tuple[str, str, str]]:
    """(turn ref, sentence, the turn's text) for each sentence of the users' conversational turns (a pasted
    document's sentences are not the user speaking to the task), as the extractor reads them."""
    out = []
    for turn in turns:
        content = turn.get("content") or ""
        if turn.get("role") != "user" or len(content) > CONVERSATIONAL_CHARS:
            continue
        for match in SENTENCE.finditer(content):
            sentence = match.group(0).strip()
            if len(sentence) + len(CJK.findall(sentence)) >= 4:
                out.append((turn.get("ref") or "", sentence, content))
    return out


# Every type a requirement may have (meta["requirement"]["type"]; "choice" only until it is resolved).
REQUIREMENT_TYPES = ("request", "boundary", "correction", "standing", "stage_fact", "withdrawal")
# The kind a requirement read by no other rule is stored as.
REQUIREMENT_KINDS = dict.fromkeys(("request", "choice", "withdrawal"), Kind.CONVENTION)
REQUIREMENT_KINDS["stage_fact"] = Kind.STAGE_FACT


class RuleExtractor:
    name = "rules"

    def extract(self, turns: list[dict]) -> list[Extracted]:
        out: list[Extracted] = []
        for turn in turns:
            if turn.get("role") != "user":
                continue  # only what the user said becomes a candidate; replies and tools are evidence
            content = turn.get("content") or ""
            for match in SENTENCE.finditer(content):
                sentence = clauses_marked(text := match.group(0).strip())  # read; `text` is what is kept
                if len(sentence) + len(CJK.findall(sentence)) < 4:  # "发布吧" is an order
                    continue
                meta = {"from_ref": turn.get("ref") or ""}
                gone = withdrawn_words(sentence)  # what it takes back, if anything (services/retraction.py)
                for rule, kind, confidence, pattern in RULES:
                    if pattern.search(sentence) and _is_rule(rule, pattern, sentence):
                        requirement = requirement_of(rule, sentence, content)
                        if requirement is None and rule == "preference":  # "I'd rather have PPTX"
                            requirement = choice_of(sentence, content, negated_values)
                        requirement = withdrawal(requirement, sentence, _conversational(content), gone)
                        if requirement:
                            meta["requirement"] = requirement
                        out.append(
                            Extracted(kind=kind, text=text, rule=rule, confidence=confidence, meta=meta)
                        )
                        break
                else:
                    requirement = requirement_of(None, sentence, content) or choice_of(
                        sentence, content, negated_values
                    )
                    requirement = withdrawal(requirement, sentence, _conversational(content), gone)
                    if requirement:
                        out.append(
                            Extracted(
                                kind=REQUIREMENT_KINDS[requirement["type"]],
                                text=text,
                                rule=requirement["type"],
                                confidence=0.6,
                                meta={**meta, "requirement": requirement},
                            )
                        )
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
