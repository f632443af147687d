"""A reviewer confirms the user's correction of one clause of a keyed rule a person wrote ("可以发布了。" for
"只处理我确认的 v3,别覆盖原文件,也先不要发布。"), relayed by an agent alone. The rule's next revision is the rule as
the correction leaves it: the clauses it did not touch, then its own words, in every session. Confirming the
correction's words alone as the rule would have dropped "别覆盖原文件" everywhere. The review queue says what
confirming puts in force; four-eyes, the dashboard's confirm and its bulk confirm take the same path; a correction
that replaces the whole rule is confirmed as it is (services/review.proposal_confirm)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from governance.models import AuditEvent, Memory, Relation, RelationKind, Status
from tests.governance.api.test_elliptical_choices import _relay
from tests.governance.api.test_session_overrides import _rule
from tests.governance.api.test_session_requirements import ask, pinned, section
from tests.memoryui.conftest import signed_in

BOUNDARY_ZH = "只处理我确认的 v3,别覆盖原文件,也先不要发布。"
BOUNDARY_EN = "Only work on the v3 I confirmed, don't overwrite the original file, and don't publish yet."
REPORT_EN = "Write the report in English, keep it under 500 words, and send it to Kenji by Friday."

CASES = [
    ("zh", BOUNDARY_ZH, "可以发布了。", "只处理我确认的 v3,别覆盖原文件,可以发布了。", "先不要发布"),
    (
        "en",
        BOUNDARY_EN,
        "You can publish it now.",
        "Only work on the v3 I confirmed, don't overwrite the original file, you can publish it now.",
        "don't publish yet",
    ),
    (
        "en",
        REPORT_EN,
        "Actually, make it 800 words.",
        "Write the report in English, and send it to Kenji by Friday, make it 800 words.",
        "500 words",
    ),
    ("zh", "报告用英文写,控制在 500 字以内,周五前发给 Kenji。", "改成周一。", None, "周五"),
]


def _proposal(text: str) -> Memory:
    return Memory.objects.get(text=text, status=Status.PROPOSED)


def _queue_item(client, memory_id: int) -> dict:
    queue = client.get("/api/v1/review", {"scope": "acme/slides"}).json()
    items = queue["results"] if isinstance(queue, dict) else queue
    return next(i for i in items if i["memory"]["id"] == memory_id)


@pytest.mark.parametrize(("lang", "rule", "change", "revision", "gone"), CASES)
def test_confirming_a_one_clause_correction_keeps_the_rest_of_the_rule_in_every_session(
    client_for, owner, reviewer, agent, project_scope, lang, rule, change, revision, gone
):
    made = _rule(client_for(owner), text=rule, key="house_rules")
    agent_client = client_for(agent)
    _relay(agent_client, lang, [change])
    proposal = _proposal(change)
    if revision is None:  # "改成周一" touches only the day: the rest stands, said in the rule's manner
        revision = "报告用英文写,控制在 500 字以内,改成周一。"
    item = _queue_item(client_for(reviewer), proposal.pk)
    assert item["requirement"]["revision"] == revision
    assert item["conflicting"]["id"] == made["id"]

    confirmed = client_for(reviewer).post(
        f"/api/v1/memories/{proposal.pk}/confirm", {"reason": "ok"}, format="json"
    )
    assert confirmed.status_code == 200, confirmed.json()
    body = confirmed.json()
    assert body["status"] == "active" and body["key"] == "house_rules"
    new = Memory.objects.get(pk=body["id"])
    # the next revision after the proposal's own (rejected: confirmed as this one instead)
    assert body["revision"] == proposal.revision + 1 and proposal.revision == made["revision"] + 1
    assert new.text == revision and new.confirmed_by_id == reviewer.pk
    assert Memory.objects.get(pk=made["id"]).status == Status.SUPERSEDED
    proposal.refresh_from_db()
    assert proposal.status == Status.REJECTED
    assert Relation.objects.filter(source=new, target_id=made["id"], kind=RelationKind.DERIVED_FROM).exists()
    assert Relation.objects.filter(source=new, target=proposal, kind=RelationKind.DERIVED_FROM).exists()
    rejected = AuditEvent.objects.get(action="memory.reject", target_id=str(proposal.pk))
    assert "revision 1 with this correction" in rejected.reason

    # Another chat: the rule as the correction leaves it, nothing of what it took.
    other = ask(agent_client, "继续。" if lang == "zh" else "Go on.", session="s9")
    assert revision in pinned(other) and rule not in pinned(other), other["text"]
    assert gone not in section(other["text"], "Constraints in force").replace(revision, "")


def test_a_correction_that_replaces_the_whole_rule_is_confirmed_as_it_is(
    client_for, owner, reviewer, agent, project_scope
):
    made = _rule(client_for(owner), text="最后导出 PDF。", key="export_format")
    _relay(client_for(agent), "zh", ["改成 PPTX。"])
    proposal = _proposal("改成 PPTX。")
    assert _queue_item(client_for(reviewer), proposal.pk)["requirement"]["revision"] is None
    body = (
        client_for(reviewer)
        .post(f"/api/v1/memories/{proposal.pk}/confirm", {"reason": ""}, format="json")
        .json()
    )
    assert body["id"] == proposal.pk and body["status"] == "active" and body["revision"] == 2
    assert Memory.objects.get(pk=made["id"]).status == Status.SUPERSEDED


def test_under_four_eyes_the_merged_revision_waits_for_a_second_reviewer(
    client_for, owner, reviewer, second_reviewer, agent, project_scope
):
    made = _rule(client_for(owner), text=BOUNDARY_ZH, key="house_rules", tier="long")
    project_scope.require_two_reviewers = True  # four-eyes from now on: the rule was written before
    project_scope.save(update_fields=["require_two_reviewers"])
    _relay(client_for(agent), "zh", ["可以发布了。"])
    proposal = _proposal("可以发布了。")
    first = client_for(reviewer).post(
        f"/api/v1/memories/{proposal.pk}/confirm", {"reason": "ok"}, format="json"
    )
    assert first.status_code == 200, first.json()
    waiting = first.json()
    assert waiting["status"] == "proposed" and waiting["approvals_needed"] == 2, waiting
    assert waiting["id"] != proposal.pk
    assert Memory.objects.get(pk=waiting["id"]).text == "只处理我确认的 v3,别覆盖原文件,可以发布了。"
    assert Memory.objects.get(pk=made["id"]).status == Status.ACTIVE  # still in force meanwhile
    again = client_for(reviewer).post(
        f"/api/v1/memories/{waiting['id']}/confirm", {"reason": "ok"}, format="json"
    )
    assert again.status_code >= 400  # the same person twice is no second pair of eyes
    second = client_for(second_reviewer).post(
        f"/api/v1/memories/{waiting['id']}/confirm", {"reason": "ok"}, format="json"
    )
    assert second.status_code == 200 and second.json()["status"] == "active", second.json()
    assert second.json()["id"] == waiting["id"]  # the merged revision itself, not merged again
    assert Memory.objects.get(pk=made["id"]).status == Status.SUPERSEDED


def test_only_a_reviewer_of_the_scope_confirms_and_nothing_changes_otherwise(
    client_for, owner, agent, outsider, project_scope
):
    made = _rule(client_for(owner), text=BOUNDARY_ZH, key="house_rules")
    _relay(client_for(agent), "zh", ["可以发布了。"])
    proposal = _proposal("可以发布了。")
    before = Memory.objects.count()
    for client in (client_for(agent), client_for(outsider)):
        refused = client.post(f"/api/v1/memories/{proposal.pk}/confirm", {"reason": "ok"}, format="json")
        assert refused.status_code in (403, 404), refused.json()
    assert Memory.objects.count() == before
    assert Memory.objects.get(pk=made["id"]).status == Status.ACTIVE
    proposal.refresh_from_db()
    assert proposal.status == Status.PROPOSED


def test_the_dashboard_shows_what_confirming_puts_in_force_and_its_confirm_merges(
    client_for, owner, agent, project_scope
):
    _rule(client_for(owner), text=BOUNDARY_EN, key="house_rules")
    _relay(client_for(agent), "en", ["You can publish it now."])
    proposal = _proposal("You can publish it now.")
    browser = signed_in(owner, "pw-olivia")
    page = browser.get(reverse("dashboard:review"), {"scope": "acme/slides"})
    assert page.status_code == 200
    merged = (
        "Only work on the v3 I confirmed, don&#x27;t overwrite the original file, you can publish it now."
    )
    assert "Confirming puts in force" in page.content.decode() and merged in page.content.decode()
    done = browser.post(
        reverse("dashboard:review-decide", args=[proposal.pk]), {"decision": "confirm", "reason": ""}
    )
    assert done.status_code == 302
    new = Memory.objects.get(key="house_rules", status=Status.ACTIVE)
    assert new.revision == 3 and "don't overwrite the original file" in new.text and new.pk != proposal.pk


def test_the_dashboards_bulk_confirm_merges_too(client_for, owner, agent, project_scope):
    _rule(client_for(owner), text=BOUNDARY_ZH, key="house_rules")
    _relay(client_for(agent), "zh", ["可以发布了。"])
    proposal = _proposal("可以发布了。")
    browser = signed_in(owner, "pw-olivia")
    done = browser.post(
        reverse("dashboard:review-act"), {"decision": "confirm", "reason": "", "memory": [proposal.pk]}
    )
    assert done.status_code == 302
    new = Memory.objects.get(key="house_rules", status=Status.ACTIVE)
    assert new.text == "只处理我确认的 v3,别覆盖原文件,可以发布了。"


def _unkeyed_rule(client, text: str, scope: str = "acme/slides") -> dict:
    made = client.post(
        "/api/v1/memories",
        {
            "scope": scope,
            "kind": "convention",
            "text": text,
            "status": "active",
            "source": {"kind": "user", "ref": "k"},
        },
        format="json",
    )
    assert made.status_code == 201, made.json()
    return made.json()


UNKEYED = [
    ("zh", BOUNDARY_ZH, "可以发布了。", "只处理我确认的 v3,别覆盖原文件,可以发布了。"),
    (
        "en",
        BOUNDARY_EN,
        "You can publish it now.",
        "Only work on the v3 I confirmed, don't overwrite the original file, you can publish it now.",
    ),
    ("zh", "先不要发布。", "可以发布了。", None),  # the whole rule: confirmed as said
    ("en", "Don't publish yet.", "You can publish it now.", None),
]


@pytest.mark.parametrize(("lang", "rule", "change", "revision"), UNKEYED)
def test_confirming_a_correction_of_an_unkeyed_rule_ends_the_rule_and_keeps_what_it_left(
    client_for, owner, reviewer, agent, project_scope, lang, rule, change, revision
):
    made = _unkeyed_rule(client_for(owner), rule)
    agent_client = client_for(agent)
    _relay(agent_client, lang, [change])
    proposal = _proposal(change)
    assert _queue_item(client_for(reviewer), proposal.pk)["requirement"]["revision"] == revision
    body = client_for(reviewer).post(
        f"/api/v1/memories/{proposal.pk}/confirm", {"reason": "ok"}, format="json"
    )
    assert body.status_code == 200, body.json()
    new = Memory.objects.get(pk=body.json()["id"])
    assert new.status == Status.ACTIVE and new.key is None
    assert new.text == (revision or change) and (new.pk == proposal.pk) == (revision is None)
    assert Memory.objects.get(pk=made["id"]).status == Status.SUPERSEDED
    assert Relation.objects.filter(source=new, target_id=made["id"], kind=RelationKind.SUPERSEDES).exists()
    other = ask(agent_client, "继续。" if lang == "zh" else "Go on.", session="s9")
    assert new.text in pinned(other) and rule not in pinned(other), other["text"]


def test_a_rule_of_the_scope_above_is_not_ended_by_a_confirmation_in_a_project(
    client_for, owner, reviewer, agent, project_scope
):
    made = _unkeyed_rule(client_for(owner), BOUNDARY_ZH, scope="acme")
    _relay(client_for(agent), "zh", ["可以发布了。"])
    proposal = Memory.objects.filter(text="可以发布了。").exclude(kind="episodic").first()
    if proposal is None or proposal.status != Status.PROPOSED:
        pytest.fail(
            f"the correction of the workspace's rule waits for review: {proposal and proposal.status}"
        )
    assert _queue_item(client_for(owner), proposal.pk)["requirement"]["revision"] is None
    client_for(owner).post(f"/api/v1/memories/{proposal.pk}/confirm", {"reason": "ok"}, format="json")
    assert (
        Memory.objects.get(pk=made["id"]).status == Status.ACTIVE
    )  # it holds in the workspace's other projects
