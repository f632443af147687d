"""Four-eyes by meaning, not by key alone (issue 50): in a scope that asks for two reviewers, a write that
sets aside a long-term commitment of the scope or above it — under its key, or unkeyed: its negation, or
another value for the same subject — needs the same two approvals, in English and Chinese. A statement about
something else is still one person's to write."""

from __future__ import annotations

import pytest

from governance.models import Memory, Status, Tier
from governance.services.memory import MemoryInput, memory_record
from tests.conftest import token_client

COMMITMENTS = {
    "en": ("retention", "Client files are kept for 7 years."),
    "zh": ("retention", "客户档案保存7年。"),
}
SETS_ASIDE = [
    pytest.param("en", "Client files are never kept for 7 years.", id="en-negation"),
    pytest.param("en", "Client files are kept for 3 years.", id="en-other-value"),
    pytest.param("zh", "客户档案不再保存7年。", id="zh-negation"),
    pytest.param("zh", "客户档案只保存3年。", id="zh-other-value"),
]
UNRELATED = [
    pytest.param("en", "Slides use the 16:9 format.", id="en"),
    pytest.param("en", "Support tickets are kept for 3 years.", id="en-other-subject"),
    pytest.param("zh", "演示文稿统一用16:9。", id="zh"),
]


@pytest.fixture
def commitment(workspace_scope, project_scope):
    def make(lang: str) -> Memory:
        workspace_scope.require_two_reviewers = True
        workspace_scope.save(update_fields=["require_two_reviewers"])
        key, text = COMMITMENTS[lang]
        return memory_record(
            item=MemoryInput(
                scope=workspace_scope,
                kind="convention",
                key=key,
                text=text,
                source_kind="user",
                status="active",
                tier=Tier.LONG,
            ),
            actor=None,
        )

    return make


def _write(principal, text: str, scope: str = "acme/slides", status: str = "active"):
    return token_client(principal).post(
        "/api/v1/memories",
        {
            "scope": scope,
            "kind": "convention",
            "text": text,
            "source": {"kind": "user"},
            "status": status,
            "tier": "mid",
        },
        format="json",
    )


@pytest.mark.parametrize(("lang", "text"), SETS_ASIDE)
@pytest.mark.parametrize("scope", ["acme", "acme/slides"])
def test_an_unkeyed_write_that_sets_aside_a_keyed_commitment_needs_two_people(
    commitment, owner, reviewer, lang, text, scope
):
    kept = commitment(lang)
    response = _write(owner, text, scope=scope)
    assert (response.status_code, response.json().get("error")) == (409, "four_eyes_required"), (
        response.json()
    )
    assert not Memory.objects.filter(text=text).exists()
    # Proposed instead, it waits for two different people.
    proposed = _write(owner, text, scope=scope, status="proposed")
    assert proposed.status_code == 201
    pk = proposed.json()["id"]
    assert Memory.objects.get(pk=pk).meta.get("approvals_needed") == 2
    first = token_client(owner).post(f"/api/v1/memories/{pk}/confirm", {"reason": "ok"}, format="json")
    assert first.json()["status"] == Status.PROPOSED
    assert Memory.objects.get(pk=kept.pk).status == Status.ACTIVE


@pytest.mark.parametrize(("lang", "text"), UNRELATED)
def test_a_statement_about_something_else_is_one_persons_to_write(commitment, owner, lang, text):
    commitment(lang)
    response = _write(owner, text)
    assert (response.status_code, response.json()["status"]) == (201, Status.ACTIVE), response.json()
