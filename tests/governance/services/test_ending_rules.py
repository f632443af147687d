"""Domain rules in the services, not in each caller: an ending (reject, retire, forget, supersede) refuses
an empty reason in the service itself, with one sentence the API and the dashboard both show; and the
four-eyes outcome (an approval or a first request recorded instead of the act) is returned by the
service, so neither the API nor the dashboard infers it."""

from __future__ import annotations

import pytest
from django.test import Client

from governance.errors import InvalidInput
from governance.models import Memory, Role, Status
from governance.services.memory import (
    FOUR_EYES_REQUESTED,
    REASON_REQUIRED,
    MemoryInput,
    memory_confirm,
    memory_forget,
    memory_record,
    memory_reject,
    memory_retire,
    memory_supersede,
)
from governance.services.principal import grant_add, user_ensure
from tests.conftest import token_client


def _rule(scope, *, tier="mid", status="active"):
    return memory_record(
        item=MemoryInput(
            scope=scope,
            kind="convention",
            key="export_format",
            tier=tier,
            text="Export format: PDF.",
            source_kind="user",
            status=status,
        ),
        actor=None,
    )


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_every_ending_service_refuses_an_empty_reason(project_scope, owner, reason):
    active, proposed = _rule(project_scope), _rule(project_scope, status="proposed")
    for call in (
        lambda: memory_reject(memory_id=proposed.pk, actor=owner, reason=reason),
        lambda: memory_retire(memory_id=active.pk, actor=owner, reason=reason),
        lambda: memory_forget(memory_id=active.pk, actor=owner, reason=reason),
        lambda: memory_forget(memory_id=active.pk, actor=owner, reason=reason, hard=True),
        lambda: memory_supersede(
            memory_id=active.pk, text="Export format: PNG.", reason=reason, source_kind="user", actor=owner
        ),
    ):
        with pytest.raises(InvalidInput) as refused:
            call()
        assert (refused.value.message, refused.value.extra["field"]) == (REASON_REQUIRED, "reason")
    assert Memory.objects.get(pk=active.pk).status == Status.ACTIVE
    assert Memory.objects.get(pk=proposed.pk).status == Status.PROPOSED


@pytest.mark.parametrize(
    "path, body",
    [
        ("retire", {"reason": ""}),
        ("forget", {"mode": "soft", "reason": ""}),
        ("forget", {"mode": "hard"}),
    ],
)
def test_the_api_and_the_dashboard_answer_a_missing_reason_with_the_same_sentence(
    project_scope, owner, path, body
):
    memory = _rule(project_scope)
    answer = token_client(owner).post(f"/api/v1/memories/{memory.pk}/{path}", body, format="json")
    assert answer.status_code == 400
    assert (answer.json()["error"], answer.json()["message"]) == ("invalid_input", REASON_REQUIRED)
    page = Client()
    page.force_login(owner.user)
    action = "forget_hard" if body.get("mode") == "hard" else path
    shown = page.post(f"/memories/{memory.pk}/act/", {"action": action, "reason": "", "irreversible": "yes"})
    assert shown.status_code == 400 and REASON_REQUIRED in shown.content.decode()
    assert Memory.objects.get(pk=memory.pk).status == Status.ACTIVE


def test_the_four_eyes_outcome_is_what_the_service_returns(four_eyes_scope, owner, reviewer, second_reviewer):
    second_owner = user_ensure(username="oskar", password="pw-oskar", actor=None)
    grant_add(principal=second_owner, scope=four_eyes_scope, role=Role.OWNER, actor=None)
    rule = _rule(four_eyes_scope, tier="long")
    first = memory_retire(memory_id=rule.pk, actor=owner, reason="obsolete")
    assert first.four_eyes_pending is not None
    assert first.four_eyes_pending.as_dict() == {
        "action": "retire",
        "requested_by": "olivia",
        "approvals": 1,
        "needed": 2,
        "message": FOUR_EYES_REQUESTED.format(action="retire"),
    }
    done = memory_retire(memory_id=rule.pk, actor=second_owner, reason="agreed")
    assert done.four_eyes_pending is None and done.status == Status.RETIRED

    proposal = _rule(four_eyes_scope, tier="long", status="proposed")
    approved = memory_confirm(memory_id=proposal.pk, actor=reviewer, reason="x")
    assert (
        approved.four_eyes_pending.action,
        approved.four_eyes_pending.approvals,
        approved.four_eyes_pending.needed,
    ) == ("confirm", 1, 2)
    assert memory_confirm(memory_id=proposal.pk, actor=second_reviewer, reason="y").four_eyes_pending is None


def test_the_api_answers_with_the_services_outcome(four_eyes_scope, owner):
    rule = _rule(four_eyes_scope, tier="long")
    answer = token_client(owner).post(
        f"/api/v1/memories/{rule.pk}/forget", {"mode": "hard", "reason": "asked"}, format="json"
    )
    assert answer.status_code == 202 and answer.json()["propagation"] is None
    assert answer.json()["four_eyes_pending"] == {
        "action": "forget_hard",
        "requested_by": "olivia",
        "approvals": 1,
        "needed": 2,
        "message": FOUR_EYES_REQUESTED.format(action="hard-forget"),
    }
