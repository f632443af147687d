"""Turn retention: stored turns past a policy's age or count limit are archived and deleted from the turn
table, turns someone points to stay, a hard forget reaches the archive, and the figures reach /metrics."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from governance import propagation
from governance.models import (
    AuditEvent,
    Memory,
    Outbox,
    ReinforcementEvent,
    RetentionPolicy,
    Turn,
    TurnArchive,
    TurnMemory,
)
from governance.recall.packet import assemble_context
from governance.selectors.ops import turn_retention_totals
from governance.services.audit import AuditEntry, audit_record, audit_verify_chain
from governance.services.memory import MemoryInput, memory_forget, memory_record
from governance.services.retention import retention_policy_set
from governance.services.turn_retention import turns_prune, turns_prune_all
from governance.tasks import embed_outbox, propagate_outbox, prune_turns
from tests.conftest import token_client
from tests.governance.propagation.helpers import postgres_hits, unique_marker


def run_pending():
    for outbox_id in Outbox.objects.filter(state="pending").order_by("pk").values_list("pk", flat=True):
        propagate_outbox(outbox_id)
        embed_outbox(outbox_id)


def remember(scope, text, **kw):
    kw.setdefault("kind", "convention")
    kw.setdefault("status", "active")
    return memory_record(item=MemoryInput(scope=scope, text=text, source_kind="user", **kw), actor=None)


def make_turn(scope, *, days_ago: float, session="s1", cites=(), query="q"):
    turn = Turn.objects.create(
        scope=scope,
        session=session,
        query=query,
        packet={
            "evidence": [
                {"memory_id": m.pk, "text": m.text, "kind": m.kind, "status": m.status} for m in cites
            ]
        },
        text="\n".join(f"- {m.text}" for m in cites),
    )
    Turn.objects.filter(pk=turn.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    TurnMemory.objects.bulk_create([TurnMemory(turn=turn, memory=m, slot="evidence") for m in cites])
    return Turn.objects.get(pk=turn.pk)


def test_turns_past_the_age_limit_are_archived_with_their_citations_and_deleted(
    project_scope, workspace_scope, owner
):
    rule = remember(project_scope, "Slides are exported as PDF")
    old = make_turn(project_scope, days_ago=40, cites=[rule])
    fresh = make_turn(project_scope, days_ago=1, cites=[rule])
    ReinforcementEvent.objects.create(memory=rule, at=old.created_at, weight=1.0, reason="used", turn=old)
    policy = retention_policy_set(scope=workspace_scope, actor=owner, turns_max_age_days=30)

    assert turns_prune(policy=policy) == {"pruned": 1, "archived": 1}
    assert list(Turn.objects.filter(scope=project_scope).values_list("pk", flat=True)) == [fresh.pk]
    archived = TurnArchive.objects.get(turn_id=old.pk)
    assert archived.cited == [rule.pk] and archived.packet == old.packet and archived.text == old.text
    assert (archived.scope_id, archived.session, archived.created_at) == (
        project_scope.pk,
        "s1",
        old.created_at,
    )
    assert not TurnMemory.objects.filter(turn_id=old.pk).exists()
    assert ReinforcementEvent.objects.get(memory=rule).turn_id is None  # the reinforcement stays, unlinked
    policy.refresh_from_db()
    assert (policy.turns_pruned, policy.turns_archived) == (1, 1)
    event = AuditEvent.objects.get(action="turns.prune")
    assert event.data == {"pruned": 1, "archived": 1, "first_turn": old.pk, "last_turn": old.pk}
    assert "older than 30 days" in event.reason and event.actor_name == "system"
    assert turns_prune(policy=policy) == {"pruned": 0, "archived": 0}  # idempotent
    assert audit_verify_chain().ok


def test_each_scope_keeps_its_newest_turns_and_turns_someone_points_to(
    project_scope, sibling_scope, workspace_scope, owner
):
    turns = [make_turn(project_scope, days_ago=10 - i, session=f"s{i}") for i in range(7)]  # oldest first
    others = [make_turn(sibling_scope, days_ago=5 - i) for i in range(2)]
    # A proposal waiting for review, written after turns[0] in its session: turns[0] is its origin turn.
    proposal = remember(project_scope, "Client prefers PPTX", status="proposed", session="s0")
    Memory.objects.filter(pk=proposal.pk).update(created_at=turns[0].created_at + timedelta(minutes=1))
    # An audit event names turns[1]; turns[2] was replayed.
    audit_record(actor=owner, entry=AuditEntry("turn.flag", "turn", str(turns[1].pk), project_scope.path))
    Turn.objects.create(scope=sibling_scope, query="again", replay_of=turns[2])
    policy = retention_policy_set(scope=workspace_scope, actor=owner, turns_max_count=3, archive_turns=False)

    result = turns_prune(policy=policy)
    left = set(Turn.objects.filter(scope=project_scope).values_list("pk", flat=True))
    assert left == {turns[0].pk, turns[1].pk, turns[2].pk, turns[4].pk, turns[5].pk, turns[6].pk}
    # archive_turns off: deleted, not archived. The sibling scope had 3 turns: under the limit.
    assert result == {"pruned": 1, "archived": 0} and not TurnArchive.objects.exists()
    assert Turn.objects.filter(scope=sibling_scope).count() == 3 and all(
        Turn.objects.filter(pk=t.pk).exists() for t in others
    )

    # Once the proposal is decided, its origin turn is no longer held.
    Memory.objects.filter(pk=proposal.pk).update(status="rejected")
    retention_policy_set(scope=workspace_scope, actor=owner, turns_max_count=3)
    assert turns_prune_all() == {"policies": 1, "pruned": 1, "archived": 1}
    assert TurnArchive.objects.filter(turn_id=turns[0].pk).exists()
    assert turn_retention_totals() == (2, 1)


def test_a_policy_without_turn_limits_or_disabled_prunes_nothing(project_scope, workspace_scope, owner):
    make_turn(project_scope, days_ago=400)
    policy = retention_policy_set(scope=workspace_scope, actor=owner, retire_unused_days=30)
    assert turns_prune(policy=policy) == {"pruned": 0, "archived": 0}
    retention_policy_set(scope=workspace_scope, actor=owner, turns_max_age_days=1, enabled=False)
    assert prune_turns() == {"policies": 0, "pruned": 0, "archived": 0}
    assert Turn.objects.filter(scope=project_scope).count() == 1


def test_a_hard_forget_redacts_archived_turns_and_the_reconciler_finds_one_left(
    project_scope, workspace_scope, owner
):
    marker = unique_marker()
    secret = remember(project_scope, f"The vault code is {marker}", kind="semantic")
    run_pending()
    packets = [
        assemble_context(
            principal=owner,
            scope=project_scope,
            query="what is the vault code?",
            budget_tokens=800,
            session="s1",
        )
        for _ in range(2)
    ]
    assert all(marker in p["text"] for p in packets)
    Turn.objects.filter(pk=packets[0]["turn_id"]).update(created_at=timezone.now() - timedelta(days=90))
    policy = retention_policy_set(scope=workspace_scope, actor=owner, turns_max_age_days=30)
    assert turns_prune(policy=policy)["archived"] == 1
    archived = TurnArchive.objects.get(turn_id=packets[0]["turn_id"])
    assert secret.pk in archived.cited and marker in archived.text

    # The forget commits but no delivery runs: the drift check sees the archived copy (and the live one).
    memory_forget(memory_id=secret.pk, actor=owner, reason="asked", hard=True)
    assert {(archived.turn_id, secret.pk), (packets[1]["turn_id"], secret.pk)} <= set(
        propagation.turns_still_holding_purged()
    )
    run_pending()
    assert postgres_hits(marker) == []
    archived.refresh_from_db()
    assert propagation.REDACTED in archived.text and marker not in json.dumps(archived.packet)
    assert propagation.turns_still_holding_purged() == []


def test_turn_limits_are_set_through_the_api_by_an_owner_only(
    project_scope, workspace_scope, owner, curator, outsider
):
    body = {"scope": "acme", "turns_max_age_days": 90, "turns_max_count": 5000, "archive_turns": True}
    response = token_client(owner).put("/api/v1/retention", body, format="json")
    assert response.status_code == 200, response.content
    assert response.json() | body == response.json()
    policy = RetentionPolicy.objects.get(scope=workspace_scope)
    assert (policy.turns_max_age_days, policy.turns_max_count, policy.archive_turns) == (90, 5000, True)

    bad = token_client(owner).put("/api/v1/retention", {**body, "turns_max_count": 0}, format="json")
    assert bad.status_code == 400 and "turns_max_count" in json.dumps(bad.json())
    # Past the 32-bit columns: a 400 naming the field, not the database's "integer out of range" 500.
    for field in ("turns_max_count", "turns_max_age_days", "retire_unused_days"):
        huge = token_client(owner).put("/api/v1/retention", {**body, field: 2**40}, format="json")
        assert huge.status_code == 400 and field in json.dumps(huge.json())
    denied = token_client(curator).put("/api/v1/retention", {**body, "scope": "acme/slides"}, format="json")
    assert denied.status_code == 403
    unknown = token_client(outsider).put("/api/v1/retention", body, format="json")
    nowhere = token_client(outsider).put("/api/v1/retention", {**body, "scope": "nowhere"}, format="json")
    assert unknown.status_code == nowhere.status_code == 404 and unknown.json() == nowhere.json()
    from rest_framework.test import APIClient

    assert APIClient().put("/api/v1/retention", body, format="json").status_code == 401
    policy.refresh_from_db()
    assert (policy.turns_max_age_days, policy.turns_max_count) == (
        90,
        5000,
    )  # refused requests changed nothing


@pytest.mark.parametrize("field", ["turns_max_age_days", "turns_max_count"])
def test_the_service_refuses_a_turn_limit_below_one(workspace_scope, owner, field):
    from governance.errors import InvalidInput

    with pytest.raises(InvalidInput):
        retention_policy_set(scope=workspace_scope, actor=owner, **{field: 0})


@pytest.mark.parametrize("field", ["turns_max_age_days", "turns_max_count", "retire_unused_days"])
def test_the_service_refuses_a_limit_its_column_cannot_hold(workspace_scope, owner, field):
    """The dashboard's scope settings form reaches the service without a serializer: the bound is the service's."""
    from governance.errors import InvalidInput

    with pytest.raises(InvalidInput) as refused:
        retention_policy_set(scope=workspace_scope, actor=owner, **{field: 2**40})
    assert refused.value.extra["field"] == field
    assert not RetentionPolicy.objects.exists()


def test_metrics_show_the_turns_pruned_and_archived(project_scope, workspace_scope, owner, client, settings):
    settings.METRICS_ALLOWED_IPS = ["127.0.0.1"]
    make_turn(project_scope, days_ago=50)
    make_turn(project_scope, days_ago=40)
    turns_prune(policy=retention_policy_set(scope=workspace_scope, actor=owner, turns_max_age_days=30))
    text = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    assert "memory_turns_pruned_total 2.0" in text and "memory_turns_archived_total 2.0" in text
    with connection.cursor() as cur:  # the figure is a policy-row sum, not a scan of the archive
        cur.execute("SELECT count(*) FROM governance_turnarchive")
        assert cur.fetchone()[0] == 2


@pytest.mark.django_db(transaction=True)
def test_two_runs_at_once_archive_each_turn_exactly_once(project_scope, workspace_scope, owner):
    from tests.governance.services.test_concurrency import race

    for i in range(60):
        make_turn(project_scope, days_ago=40 + i)
    policy = retention_policy_set(scope=workspace_scope, actor=owner, turns_max_age_days=30)

    results = race(3, lambda i: turns_prune(policy=RetentionPolicy.objects.get(pk=policy.pk), batch=7))

    assert all(isinstance(r, dict) for r in results), results
    assert sum(r["pruned"] for r in results) == sum(r["archived"] for r in results) == 60
    assert TurnArchive.objects.count() == 60 and not Turn.objects.filter(scope=project_scope).exists()
    policy.refresh_from_db()
    assert (policy.turns_pruned, policy.turns_archived) == (60, 60)
    assert audit_verify_chain().ok


def test_the_benchmark_prunes_the_older_half_and_prints_its_cost(db):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("bench_turn_retention", "--turns", "40", "--rounds", "1", stdout=out)
    text = out.getvalue()
    assert "beat run with nothing due" in text and "archive + delete" in text and "30 citations" in text
    pruned = int(text.split("archive + delete")[1].split()[0])
    assert 15 <= pruned <= 25  # the turns older than half a year of a year's spread
    assert not Turn.objects.filter(scope__path="bench/turns").exists()  # each round cleans up


def test_a_turn_pointed_to_after_the_run_read_what_is_due_stays(
    project_scope, workspace_scope, owner, monkeypatch
):
    from governance.services import turn_retention

    flagged, other = make_turn(project_scope, days_ago=50), make_turn(project_scope, days_ago=45)
    read_due = turn_retention._due_turn_ids

    def then_someone_points(*args):
        due = read_due(*args)
        assert set(due) == {flagged.pk, other.pk}
        # Between the run's read and its claim an audit event names one turn: the claim must honour it.
        audit_record(actor=owner, entry=AuditEntry("turn.flag", "turn", str(flagged.pk), project_scope.path))
        return due

    monkeypatch.setattr(turn_retention, "_due_turn_ids", then_someone_points)
    policy = retention_policy_set(scope=workspace_scope, actor=owner, turns_max_age_days=30)
    assert turns_prune(policy=policy) == {"pruned": 1, "archived": 1}
    assert Turn.objects.filter(pk=flagged.pk).exists() and not Turn.objects.filter(pk=other.pk).exists()
