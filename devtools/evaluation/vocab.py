"""Phrase banks of the synthetic suite, in English and Chinese. A topic is a keyed requirement with
values, several ways to state it (paraphrase) and several ways to ask about it; noise is small talk
and work chatter that shares no requirement with any topic."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    key: str
    values: dict[str, tuple[str, ...]]  # lang -> values (same order in every language)
    states: dict[str, tuple[str, ...]]  # lang -> statement templates with {v}
    asks: dict[str, tuple[str, ...]]  # lang -> questions (paraphrases, never the statement's wording)
    corrections: dict[str, tuple[str, ...]]  # lang -> "change it to {v}" phrasings


TOPICS: tuple[Topic, ...] = (
    Topic(
        key="export_format",
        values={"en": ("PDF", "PPTX", "PNG", "Keynote"), "zh": ("PDF", "PPTX", "PNG", "Keynote")},
        states={
            "en": ("Always export the slides as {v}.", "Please deliver the deck in {v} format from now on."),
            "zh": ("幻灯片一律导出为{v}格式。", "以后演示文稿都用{v}格式交付。"),
        },
        asks={
            "en": (
                "What file format should the final deck be exported in?",
                "How do I hand over the presentation file?",
            ),
            "zh": ("最终的演示文稿应该导出成什么格式？", "演示文件要以什么形式交付？"),
        },
        corrections={"en": ("Change the export format to {v} instead.",), "zh": ("导出格式改成{v}。",)},
    ),
    Topic(
        key="report_currency",
        values={"en": ("EUR", "USD", "JPY", "GBP"), "zh": ("欧元", "美元", "日元", "英镑")},
        states={
            "en": (
                "All amounts in the quarterly report must be in {v}.",
                "Report every figure of the finance summary in {v}.",
            ),
            "zh": ("季度报告里的所有金额必须使用{v}。", "财务汇总中的每个数字都用{v}表示。"),
        },
        asks={
            "en": (
                "Which currency do we use for the numbers in the report?",
                "What money unit should the finance figures show?",
            ),
            "zh": ("报告里的金额用哪种货币？", "财务数字应该以什么币种显示？"),
        },
        corrections={"en": ("Switch the report currency to {v}.",), "zh": ("报告币种改为{v}。",)},
    ),
    Topic(
        key="deploy_window",
        values={
            "en": ("Tuesday evening", "Friday morning", "Sunday night", "Wednesday noon"),
            "zh": ("周二晚上", "周五上午", "周日深夜", "周三中午"),
        },
        states={
            "en": (
                "Deploy to production only on {v}.",
                "Production releases happen on {v} and at no other time.",
            ),
            "zh": ("只能在{v}部署到生产环境。", "生产发布只安排在{v}，其他时间不发布。"),
        },
        asks={
            "en": (
                "When are we allowed to ship the release to production?",
                "What is our release slot for prod?",
            ),
            "zh": ("什么时候可以把版本上线到生产环境？", "生产环境的发布时间窗口是什么时候？"),
        },
        corrections={"en": ("Move the production deploy window to {v}.",), "zh": ("生产发布窗口改到{v}。",)},
    ),
    Topic(
        key="heading_font",
        values={
            "en": ("Inter", "Helvetica", "Noto Sans", "Georgia"),
            "zh": ("思源黑体", "微软雅黑", "宋体", "楷体"),
        },
        states={
            "en": ("Use the {v} font for every heading.", "Headings must be set in {v}."),
            "zh": ("所有标题都使用{v}字体。", "标题必须用{v}排版。"),
        },
        asks={
            "en": ("Which typeface do the titles use?", "What font should I pick for section titles?"),
            "zh": ("标题用什么字体？", "章节标题应该选哪种字体？"),
        },
        corrections={"en": ("Change the heading font to {v}.",), "zh": ("标题字体换成{v}。",)},
    ),
    Topic(
        key="meeting_timezone",
        values={
            "en": ("UTC", "Shanghai time", "Berlin time", "New York time"),
            "zh": ("UTC", "北京时间", "柏林时间", "纽约时间"),
        },
        states={
            "en": ("Schedule every customer meeting in {v}.", "Meeting invitations always use {v}."),
            "zh": ("所有客户会议都按{v}安排。", "会议邀请一律使用{v}。"),
        },
        asks={
            "en": (
                "In which time zone do I put the client call?",
                "What clock do our meeting invites follow?",
            ),
            "zh": ("客户电话应该按哪个时区约？", "会议邀请按什么时间标准发？"),
        },
        corrections={"en": ("Use {v} for meetings from now on instead.",), "zh": ("会议时间改用{v}。",)},
    ),
    Topic(
        key="page_limit",
        values={"en": ("8 pages", "10 pages", "12 pages", "20 pages"), "zh": ("8页", "10页", "12页", "20页")},
        states={
            "en": ("The final report may not be longer than {v}.", "Keep the written report to at most {v}."),
            "zh": ("最终报告不能超过{v}。", "书面报告最多{v}。"),
        },
        asks={
            "en": (
                "How long is the written report allowed to be?",
                "Is there a length cap on the final write-up?",
            ),
            "zh": ("书面报告允许写多长？", "最终报告有篇幅上限吗？"),
        },
        corrections={"en": ("The page limit is now {v}.",), "zh": ("篇幅上限改为{v}。",)},
    ),
    Topic(
        key="approver",
        values={"en": ("Alice", "Bogdan", "Chen Wei", "Dana"), "zh": ("王芳", "李强", "陈伟", "赵敏")},
        states={
            "en": (
                "Every pull request needs approval from {v} before merging.",
                "{v} signs off on all merges.",
            ),
            "zh": ("每个合并请求都必须经过{v}批准才能合并。", "所有合并都由{v}签字确认。"),
        },
        asks={
            "en": ("Who has to approve a PR before I merge it?", "Whose sign-off do merges need?"),
            "zh": ("合并代码之前需要谁来批准？", "合并请求要找谁签字？"),
        },
        corrections={"en": ("From now on {v} approves the merges.",), "zh": ("以后改由{v}批准合并。",)},
    ),
    Topic(
        key="chart_palette",
        values={
            "en": ("blue and grey", "green and white", "black and orange", "purple and teal"),
            "zh": ("蓝灰", "绿白", "黑橙", "紫青"),
        },
        states={
            "en": ("Charts use the {v} colour palette.", "Draw every chart in {v} colours."),
            "zh": ("图表统一使用{v}配色。", "所有图表都画成{v}两色。"),
        },
        asks={
            "en": ("What colours should the graphs be drawn in?", "Which palette do the figures follow?"),
            "zh": ("图表应该用什么颜色？", "插图遵循哪套配色？"),
        },
        corrections={"en": ("Make the charts {v} instead.",), "zh": ("图表配色改成{v}。",)},
    ),
)

# Work chatter and small talk that states no requirement: the flood a long-lived task accumulates.
NOISE: dict[str, tuple[str, ...]] = {
    "en": (
        "The coffee machine on the third floor is broken again.",
        "Can you remind me what we discussed about the team offsite?",
        "I'll be out for lunch for about an hour.",
        "Did anyone see the football match last night?",
        "The wifi in meeting room B keeps dropping.",
        "Let's grab a whiteboard after the standup.",
        "My laptop needed a restart after the OS update.",
        "Thanks, that summary of the retro was helpful.",
        "The parking garage closes early on Fridays.",
        "Please order more sticky notes for the design room.",
        "I moved my one-on-one to Thursday.",
        "The new intern starts next week in the support team.",
        "Someone left an umbrella in the kitchen.",
        "How was your weekend trip to the mountains?",
        "The fire drill is scheduled for tomorrow at ten.",
        "Could you share the link to the holiday calendar?",
        "I'm reading a book about the history of typography.",
        "The printer on floor two is out of toner.",
        "Let's celebrate the launch with cake on Monday.",
        "The air conditioning is far too cold today.",
        "Remember to submit your travel expenses by the end of the month.",
        "I found a nice recipe for lentil soup.",
        "The elevator is under maintenance this afternoon.",
        "Who is organising the book club this month?",
    ),
    "zh": (
        "三楼的咖啡机又坏了。",
        "提醒我一下团建的事我们聊到哪了？",
        "我去吃午饭，大概一个小时。",
        "昨晚的球赛有人看了吗？",
        "B会议室的无线网络老是掉线。",
        "站会之后我们找块白板讨论一下。",
        "系统更新后我的笔记本需要重启。",
        "谢谢，复盘会的总结很有帮助。",
        "周五停车场关门比较早。",
        "请给设计室再订一些便利贴。",
        "我把一对一面谈改到了周四。",
        "新实习生下周加入客服团队。",
        "有人把雨伞落在茶水间了。",
        "你周末去山里玩得怎么样？",
        "消防演习定在明天上午十点。",
        "能把假期日历的链接发我一下吗？",
        "我在读一本关于字体历史的书。",
        "二楼的打印机没有墨粉了。",
        "周一我们买个蛋糕庆祝上线吧。",
        "今天空调开得太冷了。",
        "记得月底前提交差旅报销。",
        "我找到一个不错的扁豆汤做法。",
        "电梯今天下午维修。",
        "这个月的读书会谁来组织？",
    ),
}

# Facts observed by tools (with the call that produced them) and found in documents (with their URL).
TOOL_FACTS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        (
            "list_invoices returned {n} open invoices for the customer account.",
            "How many invoices are still open for the customer?",
        ),
        (
            "The CI pipeline run {n} failed in the export test with a timeout.",
            "Why did the last build break?",
        ),
        (
            "Disk usage on the database server reached {n} percent.",
            "How full is the database machine's disk?",
        ),
        (
            "The crawler fetched {n} product pages before it stopped.",
            "How many product pages did the crawl get?",
        ),
    ),
    "zh": (
        ("查询发票接口返回客户账户有{n}张未结发票。", "客户还有多少张发票没有结清？"),
        ("持续集成第{n}次构建在导出测试中超时失败。", "上一次构建为什么失败了？"),
        ("数据库服务器的磁盘使用率达到了百分之{n}。", "数据库机器的磁盘用了多少？"),
        ("爬虫在停止前抓取了{n}个商品页面。", "这次抓取拿到了多少个商品页面？"),
    ),
}
DOC_FACTS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        (
            "The brand guide says the logo needs {n} pixels of clear space on every side.",
            "How much empty margin must surround the logo?",
        ),
        (
            "The security policy requires rotating API keys every {n} days.",
            "How often do we have to rotate our keys?",
        ),
        (
            "The vendor contract caps support response time at {n} hours.",
            "What response time did the supplier commit to?",
        ),
    ),
    "zh": (
        ("品牌手册规定标志四周至少留出{n}像素的空白。", "标志周围要留多少空白？"),
        ("安全策略要求每{n}天轮换一次接口密钥。", "密钥多久必须轮换一次？"),
        ("供应商合同规定支持响应时间不超过{n}小时。", "供应商承诺的响应时间是多少？"),
    ),
}
# What an assistant proposes: a guess, never a confirmed fact.
PROPOSALS: dict[str, tuple[str, ...]] = {
    "en": (
        "I suggest we also add a dark theme to the charts.",
        "Maybe we should move the review to next sprint.",
    ),
    "zh": ("我建议图表也加一个深色主题。", "也许我们应该把评审推迟到下个迭代。"),
}
# Short-term traces: true for one session only; they must not harden into rules. (statement, question)
TEMPORARY: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        (
            "For this session only, skip the slow integration tests.",
            "Should I run the integration tests now?",
        ),
        ("Just for today, answer in short bullet points.", "How should the answers be formatted?"),
    ),
    "zh": (
        ("仅限本次会话，先跳过耗时的集成测试。", "现在要跑集成测试吗？"),
        ("只是今天，回答请用简短的要点列出。", "回答应该用什么格式？"),
    ),
}
# A rule with an end date that has passed: it must be gone once its window closes.
EXPIRED: dict[str, tuple[str, ...]] = {
    "en": (
        "Until last Friday, all deploys to production are frozen.",
        "Until the audit ended, nobody may merge to main.",
    ),
    "zh": ("截至上周五，生产环境全部冻结发布。", "审计结束之前，任何人都不得合并到主分支。"),
}
PROPOSAL_PREFIX = {"en": "I suggest a change: ", "zh": "我建议改一下："}
STALE_ASK = {"en": "Is this still the rule: {s}", "zh": "这条规定现在还有效吗：{s}"}
CONFLICT_DOC = {"en": "The old style sheet says: {s}", "zh": "旧版规范写着：{s}"}
ACK = {"en": "Noted.", "zh": "好的，记下了。"}
# How a user first asks for a rule in conversation (the episode a curator then records the rule from).
REQUEST = {"en": "Quick note for this project: {s}", "zh": "这个项目请注意：{s}"}
# Exact-term lookups: one long tool log holds the identifier the question names (an error code or a file
# name) among unrelated lines; ~20 short notes phrased like the question name near-identical identifiers
# (one character more). Dense search ranks the short notes first (measured: the log last of 21 in every
# draw); only the keyword path sees that the log alone holds the exact identifier.
# (log line with {id}, near-duplicate note with {id} and {n}, question with {id}, identifier kind)
EXACT: dict[str, tuple[tuple[str, str, str, str], ...]] = {
    "en": (
        (
            "export failure {id}",
            "Export failure {id} was a disk quota problem ({n} GB).",
            "Export failure {id}?",
            "code",
        ),
        (
            "backup of {id} failed",
            "The backup of {id} failed because the disk was full ({n} GB).",
            "Backup of {id} failed?",
            "file",
        ),
    ),
    "zh": (
        ("导出失败 {id}", "导出失败 {id} 是磁盘配额问题（{n} GB）。", "导出失败 {id}？", "code"),
        ("{id} 备份失败", "{id} 备份失败，因为磁盘满了（{n} GB）。", "{id} 备份失败？", "file"),
    ),
}
LOG_LINES: dict[str, tuple[str, ...]] = {
    "en": (
        "worker {n} started",
        "cache warmed with {n} keys",
        "uploaded chunk {n} of 40",
        "retrying connection to replica {n}",
        "GC pause of {n} ms",
        "queue depth at {n}",
        "health check ok in {n} ms",
        "rotated log file {n}",
        "scheduler tick {n}",
        "synced {n} calendar entries",
    ),
    "zh": (
        "第{n}号进程已启动",
        "缓存预热完成共{n}个键",
        "已上传第{n}块",
        "正在重试连接副本{n}",
        "队列长度为{n}",
        "健康检查正常耗时{n}毫秒",
        "日志文件{n}已轮换",
        "同步了{n}条日程",
    ),
}
LOG_SEPARATOR = {"en": "; ", "zh": "；"}
# Why a rule holds, in words that share nothing with any topic's questions (no "hand over", "sign-off",
# "client", "report", "deploy" …; drafts said "hand-over" and "signed off", and matched "How do I hand over the
# file?" and "Whose sign-off do merges need?"): the review, incident or
# decision behind it. A curator links it to the rule (`supports`); only the link brings it to the packet.
RATIONALE: dict[str, tuple[str, ...]] = {
    "en": (
        "Post-mortem PM-{n}: an escalation last quarter traced back to this; the team agreed on the practice above.",
        "Steering committee minutes #{n}: after two complaints in a row, the sponsor endorsed the current practice.",
        "Incident review IR-{n}: a late change broke a downstream pipeline; root cause and the agreed safeguard are recorded.",
    ),
    "zh": (
        "复盘记录PM-{n}：上季度的一次升级投诉追溯到这里，团队因此商定了现行做法。",
        "指导委员会纪要第{n}号：连续两次投诉后，发起人批准了现行做法。",
        "事故回顾IR-{n}：一次临时变更弄坏了下游流水线，根因和商定的防范措施已记录在案。",
    ),
}

# Unkeyed rules and the user's instruction that says the opposite (conflict detection links them
# `contradicts`: the same words, one negated), with a question about them: correction_in_conversation.
UNKEYED_RULES = {
    "en": (
        (
            "Always attach the raw data file to the weekly report.",
            "From now on, do not attach the raw data file to the weekly report.",
            "Does the weekly report go out with its raw data?",
        ),
        (
            "Always copy the finance team on supplier invoices.",
            "From now on, do not copy the finance team on supplier invoices.",
            "Who gets the supplier invoices by mail?",
        ),
    ),
    "zh": (
        ("每周报告都附上原始数据文件。", "以后每周报告不要附上原始数据文件。", "周报要不要带上原始数据？"),
        ("供应商发票都抄送财务团队。", "以后供应商发票不要抄送财务团队。", "供应商的发票要发给谁？"),
    ),
}
ACK_CORRECTION = {"en": "Understood, I will do it that way from now on.", "zh": "明白，以后就这样做。"}


@dataclass(frozen=True)
class Fact:
    """A plain statement of fact about a subject with one value, with no key: how it is first said, how a
    later message says it changed, a statement about the same subject that changes nothing, and a question."""

    values: tuple[str, ...]  # the same in both languages (product names)
    said: dict[str, tuple[str, ...]]  # {v}
    changed: dict[str, tuple[str, ...]]  # {w}: the wording of a change
    aside: dict[str, str]  # the same subject, no change
    asks: dict[str, tuple[str, ...]]


# unkeyed_contradiction: "We use MySQL." and, days later, "The team has moved to PostgreSQL.".
FACTS: tuple[Fact, ...] = (
    Fact(
        values=("MySQL", "PostgreSQL", "Oracle", "MongoDB"),
        said={
            "en": ("We use {v} for the main database.", "Our main database runs on {v}."),
            "zh": ("我们的主数据库用的是{v}。",),
        },
        changed={
            "en": (
                "The team has moved the main database to {w}.",
                "We switched the main database to {w} last week.",
            ),
            "zh": ("团队已经把主数据库迁移到{w}了。", "主数据库上周换成{w}了。"),
        },
        aside={"en": "The main database backups run every night.", "zh": "主数据库每晚备份一次。"},
        asks={
            "en": ("Which database do we use?", "What is our main database?"),
            "zh": ("我们用的是哪个数据库？", "主数据库是什么？"),
        },
    ),
    Fact(
        values=("Jenkins", "GitHub Actions", "GitLab CI", "CircleCI"),
        said={"en": ("Our builds run on {v}.",), "zh": ("我们的构建跑在{v}上。",)},
        changed={"en": ("The builds now run on {w} instead.",), "zh": ("构建已经改用{w}了。",)},
        aside={"en": "The builds take about twelve minutes.", "zh": "构建大约需要十二分钟。"},
        asks={"en": ("Where do our builds run?",), "zh": ("我们的构建在哪里跑？",)},
    ),
    Fact(
        values=("Slack", "Teams", "Discord", "Zulip"),
        said={"en": ("Team chat runs on {v}.",), "zh": ("团队沟通用的是{v}。",)},
        changed={"en": ("We moved team chat over to {w}.",), "zh": ("团队沟通已经换成{w}了。",)},
        aside={"en": "Team chat is quiet on Fridays.", "zh": "周五团队沟通比较少。"},
        asks={"en": ("Which chat tool does the team use?",), "zh": ("团队用什么聊天工具？",)},
    ),
    Fact(
        values=("AWS", "Azure", "GCP", "Hetzner"),
        said={"en": ("Production is hosted on {v}.",), "zh": ("生产环境部署在{v}上。",)},
        changed={"en": ("Production has migrated to {w}.",), "zh": ("生产环境已经迁移到{w}了。",)},
        aside={"en": "Production deploys happen on Tuesdays.", "zh": "生产环境每周二发布。"},
        asks={"en": ("Where is production hosted?",), "zh": ("生产环境部署在哪里？",)},
    ),
)
# A change of something else: must not be taken for a change of the fact.
OTHER_CHANGE = {"en": "We have moved the stand-up to 10 am.", "zh": "站会改到上午十点了。"}
SETTLE_REASON = {"en": "the later message holds: the team migrated", "zh": "以后一条为准：团队已经迁移"}
