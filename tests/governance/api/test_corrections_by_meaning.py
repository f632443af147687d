"""A user's correction of a rule a person confirmed, and a changed fact, found by what they are about, not by
the key's words (issue 48): Chinese statements under English keys, corrections worded as a permission with a
condition, and facts whose value changed worded otherwise than any test of the replay suite. Through the public
API with an agent's token; a person wrote only the rules."""

from __future__ import annotations

import pytest

from governance.models import Dispute, Memory, Relation
from governance.propagation import run_delivery

from .test_session_requirements import ask, pinned, say, set_aside


def _rule(client, text: str, key: str, scope: str = "acme/slides") -> int:
    made = client.post(
        "/api/v1/memories",
        {
            "scope": scope,
            "kind": "convention",
            "key": key,
            "text": text,
            "status": "active",
            "source": {"kind": "user", "ref": "kickoff"},
        },
        format="json",
    )
    assert made.status_code == 201, made.json()
    assert made.json()["status"] == "active"
    return made.json()["id"]


# (the rule a person confirmed, its key, what the user says in a conversation, a question about it)
CORRECTIONS = [
    pytest.param(
        "支付模块风险太高,暂时不要重构。",
        "payment_refactor",
        "支付模块可以重构,但必须先补测试。",
        "支付模块现在能重构吗?",
        id="zh-payment",
    ),
    pytest.param(
        "The payment module is too risky: do not refactor it for now.",
        "payment_refactor",
        "You can refactor the payment module now, but write the tests first.",
        "Can we refactor the payment module?",
        id="en-payment",
    ),
    pytest.param(
        "发票一律抄送财务部。",
        "invoice_cc",
        "以后发票不用抄送财务部了。",
        "发票要抄送给谁?",
        id="zh-invoices",
    ),
    pytest.param(
        "Never deploy the billing service on Fridays.",
        "billing_deploys",
        "Deploying the billing service on Fridays is fine now, as long as someone is on call.",
        "Can I deploy billing today, it's Friday?",
        id="en-deploys",
    ),
]


@pytest.mark.parametrize(("rule", "key", "said", "question"), CORRECTIONS)
def test_a_correction_of_a_confirmed_rule_under_an_english_key_holds_in_its_session(
    client_for, owner, agent, project_scope, rule, key, said, question
):
    rule_id = _rule(client_for(owner), rule, key)
    client = client_for(agent)
    say(client, said, session="s1", ref="t7")
    body = ask(client, question, session="s1")
    assert said in pinned(body) and rule not in pinned(body), body["text"]
    assert rule in set_aside(body)
    correction = next(b for b in body["packet"]["constraints"] if b["text"] == said)
    assert correction["session_override"]["replaces"]["memory_id"] == rule_id
    # The correction takes the rule's key, so a person's confirmation supersedes the rule for everyone.
    assert Memory.objects.get(pk=correction["memory_id"]).key == key
    # Another conversation keeps the rule, and its block names the pending change by id only.
    other = ask(client, question, session="s2")
    assert rule in pinned(other) and said not in pinned(other)
    held = next(b for b in other["packet"]["constraints"] if b["text"] == rule)
    assert [p["memory_id"] for p in held["pending_changes"]] == [correction["memory_id"]]


PAYMENT_ZH = "支付模块风险太高,暂时不要重构。"
PAYMENT_EN = "The payment module is too risky: do not refactor it for now."


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        # the same wording about another module
        pytest.param(PAYMENT_ZH, "报表模块可以重构,但必须先补测试。", id="zh-other-module"),
        pytest.param(
            PAYMENT_EN,
            "You can refactor the reporting module now, but write the tests first.",
            id="en-other-module",
        ),
        # a question, "regardless", a hedge: they say nothing of how things are
        pytest.param(PAYMENT_ZH, "支付模块要不要重构,你怎么看?", id="zh-question"),
        pytest.param(PAYMENT_ZH, "不管支付模块重不重构,先把文档写好。", id="zh-regardless"),
        pytest.param(PAYMENT_EN, "Should we refactor the payment module at some point?", id="en-question"),
        pytest.param(
            PAYMENT_EN,
            "I'm not sure the payment module matters here, let's start on the docs.",
            id="en-hedge",
        ),
    ],
)
def test_what_is_not_a_correction_of_the_rule_sets_nothing_aside(
    client_for, owner, agent, project_scope, rule, said
):
    _rule(client_for(owner), rule, "payment_refactor")
    client = client_for(agent)
    say(client, said, session="s1", ref="t3")
    body = ask(client, "Can we refactor the payment module? 支付模块现在能重构吗?", session="s1")
    assert rule in pinned(body)
    assert not set_aside(body)
    assert not Memory.objects.filter(key="payment_refactor", status__in=("candidate", "proposed")).exists()


def _fact(client, text: str, scope: str = "acme/slides") -> int:
    made = client.post(
        "/api/v1/memories",
        {"scope": scope, "kind": "semantic", "text": text, "status": "active", "source": {"kind": "user"}},
        format="json",
    )
    assert made.status_code == 201, made.json()
    return made.json()["id"]


def _deliver_embeddings() -> None:
    from governance.models import OutboxDelivery

    for delivery in OutboxDelivery.objects.filter(store="embedding").exclude(state=OutboxDelivery.State.DONE):
        run_delivery(delivery)


CHANGED_FACTS = [
    pytest.param("我用MySQL", "我们团队已经迁到PostgreSQL了", id="zh-seed-004"),
    pytest.param("订单服务的数据存在MySQL里。", "订单服务现在把数据放在PostgreSQL上。", id="zh-orders"),
    pytest.param("客户周报由张伟负责。", "客户周报以后交给李娜负责。", id="zh-owner"),
    pytest.param(
        "The orders service keeps its data in MySQL.",
        "These days the orders service stores everything in PostgreSQL.",
        id="en-store",
    ),
    pytest.param(
        "Our nightly backups go to S3.",
        "Nightly backups are written to Azure Blob Storage now.",
        id="en-backups",
    ),
    pytest.param(
        "The quarterly offsite is held in Lisbon.",
        "This year the quarterly offsite takes place in Porto.",
        id="en-place",
    ),
]


@pytest.mark.parametrize(("older", "newer"), CHANGED_FACTS)
def test_two_confirmed_facts_with_a_changed_value_of_one_subject_are_disputed(
    client_for, owner, project_scope, older, newer
):
    client = client_for(owner)
    old_id = _fact(client, older)
    new_id = _fact(client, newer)
    _deliver_embeddings()
    disputed = set(Dispute.objects.values_list("newer_id", "older_id")) | set(
        Relation.objects.filter(kind="contradicts").values_list("source_id", "target_id")
    )
    assert (new_id, old_id) in disputed, (older, newer)


UNRELATED = [
    pytest.param("我用MySQL", "我们团队下周去杭州团建。", id="zh-team-trip"),
    pytest.param("订单服务的数据存在MySQL里。", "报表服务的数据存在ClickHouse里。", id="zh-other-service"),
    pytest.param(
        "The orders service keeps its data in MySQL.",
        "The analytics service keeps its data in ClickHouse.",
        id="en-other-service",
    ),
    pytest.param(
        "Our nightly backups go to S3.", "Our nightly build runs on Jenkins.", id="en-other-subject"
    ),
]


@pytest.mark.parametrize(("older", "newer"), UNRELATED)
def test_facts_of_two_subjects_are_not_disputed(client_for, owner, project_scope, older, newer):
    client = client_for(owner)
    old_id = _fact(client, older)
    new_id = _fact(client, newer)
    _deliver_embeddings()
    assert not Dispute.objects.filter(newer_id=new_id, older_id=old_id).exists()
    assert not Relation.objects.filter(kind="contradicts", source_id=new_id, target_id=old_id).exists()
