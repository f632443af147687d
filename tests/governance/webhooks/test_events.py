"""Which events a change makes and what their bodies say, fanned out here and now (the worker and the
HTTP side are test_delivery's): grants with their role and change, team membership in each workspace the
team holds a grant in, supersedes naming the new revision, a batch of proposals one event each."""

from __future__ import annotations

from governance.models import Outbox, Role, WebhookDelivery
from governance.services.grant_membership import group_member_add, group_member_remove
from governance.services.memory import MemoryInput, memory_record_batch, memory_supersede
from governance.services.principal import grant_add, grant_revoke, principal_ensure, user_ensure
from governance.services.scope import scope_ensure
from governance.tasks import propagate_outbox
from tests.governance.webhooks.conftest import remember, subscribe

URL = "https://hooks.example.net/memgov"


def _fan_out_all() -> None:
    for outbox_id in Outbox.objects.filter(state="pending").order_by("pk").values_list("pk", flat=True):
        propagate_outbox(outbox_id)


def _bodies(event_type: str, workspace: str = "acme") -> list[dict]:
    return [
        d.body
        for d in WebhookDelivery.objects.filter(event_type=event_type).order_by("pk")
        if d.body["workspace"] == workspace
    ]


def test_a_grant_added_and_revoked_says_who_what_role_and_which_change(owner, project_scope):
    subscribe(project_scope, URL, owner, ["grant.changed"])
    colleague = user_ensure(username="wendy", password="pw-wendy", actor=None)
    grant = grant_add(principal=colleague, scope=project_scope, role=Role.REVIEWER, actor=owner)
    grant_revoke(grant_id=grant.pk, actor=owner, reason="moved team")
    _fan_out_all()
    added, revoked = (b["data"] for b in _bodies("grant.changed"))
    assert added == {"scope": "acme/slides", "principal": "wendy", "change": "added", "role": "reviewer"}
    assert revoked == {"scope": "acme/slides", "principal": "wendy", "change": "revoked", "role": "reviewer"}
    assert {b["actor"] for b in _bodies("grant.changed")} == {"olivia"}


def test_a_team_membership_change_reaches_each_workspace_where_the_team_holds_a_grant(
    owner, outsider, project_scope
):
    globex = scope_ensure(path="globex", actor=None)
    grant_add(principal=outsider, scope=globex, role=Role.OWNER, actor=None)
    subscribe(project_scope, URL, owner, ["grant.changed"])
    subscribe(globex, URL + "/globex", outsider, ["grant.changed"])
    team = principal_ensure(name="slides-team", kind="group", actor=None)
    grant_add(principal=team, scope=project_scope, role=Role.REVIEWER, actor=None)
    _fan_out_all()
    WebhookDelivery.objects.all().delete()
    # A person: an agent may not join a team that holds a role above the agent role (issue 20).
    member = principal_ensure(name="helper", kind="user", actor=None)
    group_member_add(group=team, member=member, actor=owner)
    group_member_remove(group=team, member=member, actor=owner, reason="done")
    _fan_out_all()
    bodies = _bodies("grant.changed")
    assert [b["data"] for b in bodies] == [
        {"change": "member_added", "group": "slides-team", "member": "helper"},
        {"change": "member_removed", "group": "slides-team", "member": "helper"},
    ]
    assert _bodies("grant.changed", "globex") == []  # the team holds nothing there


def test_a_superseded_memory_names_the_revision_that_replaced_it(owner, project_scope):
    subscribe(project_scope, URL, owner, ["memory.superseded", "memory.confirmed"])
    old = remember(project_scope, "Export as PDF", key="export_format", actor=owner)
    new = memory_supersede(
        memory_id=old.pk, text="Export as PPTX", reason="client asked", source_kind="user", actor=owner
    )
    _fan_out_all()
    superseded = _bodies("memory.superseded")
    assert [b["data"]["memory"]["id"] for b in superseded] == [old.pk]
    assert superseded[0]["data"]["memory"]["superseded_by"] == new.pk
    assert [b["data"]["memory"]["id"] for b in _bodies("memory.confirmed")] == [old.pk, new.pk]
    assert all("Export as" not in str(d.body) for d in WebhookDelivery.objects.all())


def test_a_batch_of_proposals_makes_one_review_event_each_and_episodes_none(owner, agent, project_scope):
    subscribe(project_scope, URL, owner, ["review.waiting", "memory.confirmed"])
    items = [
        MemoryInput(
            scope=project_scope,
            kind="preference",
            text=f"Prefers style {n}",
            source_kind="user",
            status="active",
        )
        for n in range(3)
    ]
    items.append(
        MemoryInput(scope=project_scope, kind="episodic", text="Opened the deck", source_kind="user")
    )
    created = memory_record_batch(items=items, actor=agent)
    _fan_out_all()
    proposals = [m.pk for m in created if m.status == "proposed"]
    assert len(proposals) == 3
    assert sorted(b["data"]["memory"]["id"] for b in _bodies("review.waiting")) == sorted(proposals)
    assert _bodies("memory.confirmed") == []
    assert {b["actor"] for b in _bodies("review.waiting")} == {"slides-agent"}
