"""memgov.Client and memgov.AsyncClient against the running service."""

from __future__ import annotations

import asyncio

import httpx
import pytest

import memgov
from governance.permissions import DENIAL_REASONS, Action
from governance.services.scope import INVALID_SCOPE_NAME
from tests.conftest import wait_for


def test_agent_writes_a_candidate_a_curator_confirms_it_and_the_packet_has_it_in_force(
    service, agent_token, curator, token_for
):
    agent = memgov.Client(service, agent_token)
    curator_client = memgov.Client(service, token_for(curator))
    written = agent.memories.create(
        scope="acme/slides",
        kind="convention",
        key="export_format",
        text="Export the slides as PDF",
        source_kind="user",
        source_ref="t1",
    )
    assert isinstance(written, memgov.Memory)
    assert written.status == "candidate" and not written.in_force and written.key == "export_format"
    assert agent.memories.get(written.id).text == "Export the slides as PDF"

    state = curator_client.memories.confirm(written.id, reason="the user said so")
    assert isinstance(state, memgov.MemoryState) and state.status == "active"

    ctx = agent.context(
        scope="acme/slides",
        query="which format do we export?",
        budget_tokens=400,
        task="Export deck 42",
        session="s1",
    )
    assert isinstance(ctx, memgov.Context)
    assert [b.memory_id for b in ctx.packet.constraints] == [written.id]
    assert ctx.packet.constraints[0].reason == "pinned: a constraint in force"
    assert ctx.packet.task[0].text.startswith("Goal: Export deck 42")
    assert 0 < ctx.budget.used <= ctx.budget.limit == 400 and ctx.budget.counter
    assert "Export the slides as PDF" in ctx.text
    assert ctx.trace.ms("pack") is not None and ctx.turn_id

    turn = agent.turns.get(ctx.turn_id)
    assert isinstance(turn, memgov.Turn) and turn.text == ctx.text and turn.budget == ctx.budget
    assert turn.packet.constraints[0].memory_id == written.id


def test_superseded_memory_goes_to_negative_context_with_its_replacement(service, curator, token_for):
    client = memgov.Client(service, token_for(curator))
    old = client.memories.create(
        scope="acme/slides",
        kind="convention",
        key="fmt",
        text="Export as PDF",
        status="active",
        source_kind="reviewer",
    )
    new = client.memories.supersede(old.id, text="Export as PPTX", reason="the client changed their mind")
    assert new.revision == 2 and client.memories.get(old.id).status == "superseded"
    ctx = client.context(scope="acme/slides", query="export format", budget_tokens=600)
    assert [b.memory_id for b in ctx.packet.constraints] == [new.id]
    negative = wait_for(
        lambda: client.context(scope="acme/slides", query="Export as PDF", budget_tokens=600).packet.negative,
        timeout=20,
    )
    assert negative[0].memory_id == old.id and negative[0].replaced_by["memory_id"] == new.id


def test_events_recall_and_scopes(service, agent_token):
    client = memgov.Client(service, agent_token)
    task = client.scopes.open(parent="acme/slides", name="deck-42")
    assert task.path == "acme/slides/deck-42" and task.created is True
    assert client.scopes.open(parent="acme/slides", name="deck-42").created is False
    assert "acme/slides/deck-42" in [s.path for s in client.scopes.list()]
    created = client.events.record(
        scope="acme/slides/deck-42",
        session="s1",
        turns=[
            {"role": "user", "content": "From now on, always number the slides.", "ref": "u1"},
            {"role": "assistant", "content": "Will do.", "ref": "a1"},
        ],
    )
    # The answer lists the episodes only (it must not tell which sentence went unextracted because its
    # text was forgotten, issue 20); the extracted candidate is in the memory list.
    assert sorted((m.kind, m.status) for m in created) == [("episodic", "active"), ("episodic", "active")]
    hits = wait_for(
        lambda: client.recall(scope="acme/slides/deck-42", query="number the slides", k=5), timeout=20
    )
    assert isinstance(hits[0], memgov.RecallHit) and "number the slides" in hits[0].text
    page = client.memories.list(scope="acme/slides/deck-42")
    # A standing instruction would last beyond its session: it waits in the review queue at once (proposed).
    candidates = [m for m in page.results if m.status in ("candidate", "proposed")]
    assert any(m.status == "proposed" and "number the slides" in m.text for m in candidates)
    assert page.count == len(created) + len(candidates)
    assert {m.id for m in page.results} == {m.id for m in created} | {m.id for m in candidates}


def test_error_answers_become_typed_exceptions(service, agent_token, other_workspace_scope):
    client = memgov.Client(service, agent_token, max_retries=0)
    with pytest.raises(memgov.NotFound) as not_found:
        client.recall(scope="globex/slides", query="anything")
    assert not_found.value.status == 404 and not_found.value.code == "not_found"

    memory = client.memories.create(scope="acme/slides", text="A guess about the deck")
    with pytest.raises(memgov.Forbidden) as forbidden:
        client.memories.confirm(memory.id)
    assert forbidden.value.message == DENIAL_REASONS[Action.CONFIRM]

    with pytest.raises(memgov.InvalidInput) as invalid:
        client.scopes.open(parent="acme/slides", name="Not A Name")
    assert invalid.value.message == INVALID_SCOPE_NAME

    with pytest.raises(memgov.InvalidInput) as fields:
        client.context(scope="acme/slides", query="x", budget_tokens=0)
    assert "budget_tokens" in fields.value.fields

    with pytest.raises(memgov.NotAuthenticated):
        memgov.Client(service, "mem_not-a-real-token").recall(scope="acme/slides", query="x")


def test_pinned_over_budget_carries_needed_and_budget(service, curator, token_for):
    client = memgov.Client(service, token_for(curator))
    client.memories.create(
        scope="acme/slides",
        kind="convention",
        key="tone",
        status="active",
        text="Write in a formal tone with no exclamation marks at all",
        source_kind="reviewer",
    )
    with pytest.raises(memgov.PinnedOverBudget) as over:
        client.context(scope="acme/slides", query="draft", budget_tokens=5)
    assert over.value.status == 422 and over.value.budget == 5 and over.value.needed > 5


def test_governance_calls_review_grants_tokens_retire_reject_forget(
    service, owner, curator, agent, token_for
):
    owner_client = memgov.Client(service, token_for(owner))
    proposal = owner_client.memories.create(
        scope="acme/slides",
        kind="convention",
        key="deadline",
        text="The deadline is Friday",
        status="proposed",
        source_kind="user",
    )
    queue = owner_client.review.queue(scope="acme/slides")
    assert proposal.id in [item.memory["id"] for item in queue] and queue[0].can_confirm
    assert owner_client.memories.reject(proposal.id, reason="not agreed").status == "rejected"

    grant = owner_client.grants.add(principal="slides-agent", scope="acme/slides/", role="viewer")
    assert grant.role == "viewer" and grant.id in [
        g.id for g in owner_client.grants.list(scope="acme/slides")
    ]
    owner_client.grants.revoke(grant.id, reason="not needed")
    assert grant.id not in [g.id for g in owner_client.grants.list(scope="acme/slides")]

    issued = owner_client.tokens.issue(principal="slides-agent", scope="acme/slides", role="agent")
    assert issued.token.startswith("mem_") and (issued.scope, issued.role) == ("acme/slides", "agent")
    assert memgov.Client(service, issued.token).scopes.list()[0].path == "acme/slides"
    listed = [tok for tok in owner_client.tokens.list(active=True) if tok.principal == "slides-agent"]
    assert listed and listed[0].scope == "acme/slides" and listed[0].role == "agent"
    owner_client.tokens.revoke(listed[0].id, reason="no longer needed")
    with pytest.raises(memgov.errors.NotAuthenticated):
        memgov.Client(service, issued.token).scopes.list()

    fact = owner_client.memories.create(
        scope="acme/slides", text="Deck 7 is archived", status="active", source_kind="reviewer"
    )
    assert owner_client.memories.retire(fact.id, reason="no longer true").status == "retired"
    secret = owner_client.memories.create(
        scope="acme/slides", text="The customer's phone number is 555", source_kind="user"
    )
    forgotten = owner_client.memories.forget(secret.id, reason="personal data", mode="hard")
    assert forgotten.memory.status == "forgotten" and forgotten.mode == "hard"
    after = owner_client.memories.get(secret.id)
    assert after.status == "forgotten" and after.text == ""


def test_async_client_does_the_same_through_the_same_api(service, agent_token, other_workspace_scope):
    async def scenario():
        async with memgov.AsyncClient(service, agent_token) as client:
            scope = await client.scopes.open(parent="acme/slides", name="async-task")
            memory = await client.memories.create(
                scope=scope.path, text="Use the blue template", kind="preference"
            )
            ctx, hits = await asyncio.gather(
                client.context(scope=scope.path, query="template", budget_tokens=300),
                client.recall(scope=scope.path, query="blue template"),
            )
            with pytest.raises(memgov.NotFound):
                await client.context(scope="globex/slides", query="x", budget_tokens=100)
            return memory, ctx, hits

    memory, ctx, hits = asyncio.run(scenario())
    assert memory.status == "candidate" and isinstance(ctx, memgov.Context) and ctx.turn_id
    assert all(b.memory_id != memory.id for b in ctx.packet.preferences)  # a candidate is never in force


def test_url_and_token_come_from_the_environment(service, agent_token, monkeypatch):
    monkeypatch.setenv("MEMGOV_URL", service)
    monkeypatch.setenv("MEMGOV_TOKEN", agent_token)
    assert [s.path for s in memgov.Client().scopes.list()] == ["acme/slides"]
    monkeypatch.delenv("MEMGOV_TOKEN")
    with pytest.raises(ValueError, match="MEMGOV_TOKEN"):
        memgov.Client()


def test_relations_by_hand_and_a_promotion_request(
    service, curator, agent, token_for, project_scope, settings
):
    settings.PROMOTION_MIN_EPISODES = 2
    curator_client = memgov.Client(service, token_for(curator))
    a = curator_client.memories.create(
        scope="acme/slides", text="The launch is on March 3", status="active", source_kind="user"
    )
    b = curator_client.memories.create(
        scope="acme/slides", text="Marketing moved it to March 10", status="active", source_kind="user"
    )
    link = curator_client.relations.link(source=b.id, target=a.id, kind="contradicts", reason="two dates")
    assert (link.kind, link.by_hand, link.actor) == ("contradicts", True, "cora")
    with pytest.raises(memgov.errors.Conflict):
        curator_client.relations.link(source=a.id, target=b.id, kind="contradicts", reason="again")
    assert curator_client.relations.unlink(link.id, reason="reconciled").id == link.id
    agent_client = memgov.Client(service, token_for(agent))
    with pytest.raises(memgov.errors.Forbidden):
        agent_client.relations.link(source=b.id, target=a.id, kind="supports", reason="agents do not curate")
    episodes = [
        m
        for session in ("s1", "s2")
        for m in agent_client.events.record(
            scope="acme/slides",
            session=session,
            turns=[{"role": "user", "content": f"Can I get the deck as PDF ({session})?"}],
        )
        if m.kind == "episodic"
    ]
    candidate = agent_client.memories.create(
        scope="acme/slides", kind="preference", text="Exports as PDF", source_kind="model_inference"
    )
    proposal = agent_client.promotions.request(
        memory=candidate.id, episodes=[e.id for e in episodes], reason="seen twice"
    )
    assert (proposal.status, proposal.tier) == ("proposed", "long")


def test_scopes_export_and_import_through_the_client(service, owner, token_for, project_scope):
    from governance.models import Memory

    client = memgov.Client(service, token_for(owner))
    client.memories.create(
        scope="acme/slides",
        kind="convention",
        key="export_format",
        status="active",
        text="Export the slides as PPTX",
        source_kind="user",
    )
    text = client.scopes.export(project_scope.pk)
    assert text.startswith('{"type":"header"') and "Export the slides as PPTX" in text
    preview = client.scopes.import_file(project_scope.parent_id, text, name="slides-copy", preview=True)
    assert preview["preview"] is True and preview["counts"]["memories"] == 1
    assert not Memory.objects.filter(scope__path="acme/slides-copy").exists()
    done = client.scopes.import_file(project_scope.parent_id, text, name="slides-copy")
    assert done["root"] == "acme/slides-copy" and done["import_id"]
    assert Memory.objects.get(scope__path="acme/slides-copy").text == "Export the slides as PPTX"
    with pytest.raises(memgov.MemgovError) as caught:
        client.scopes.import_file(project_scope.parent_id, "not json\n", name="broken")
    assert caught.value.status == 400 and caught.value.body["line"] == 1


class _AnswerLostOnce(httpx.HTTPTransport):
    """A real transport to the service whose first write's answer is lost on the way back (a proxy answers
    503 after the service stored the write): the client's retry must not write a second time."""

    def __init__(self):
        super().__init__()
        self.sent: list[tuple[str, str | None]] = []

    def handle_request(self, request):
        response = super().handle_request(request)
        self.sent.append((request.method, request.headers.get("Idempotency-Key")))
        if request.method == "POST" and len(self.sent) == 1:
            response.read()
            return httpx.Response(503, headers={"Retry-After": "0"}, json={"error": "service_unavailable"})
        return response


def test_a_write_whose_answer_was_lost_is_retried_with_its_key_and_stored_once(service, agent_token):
    from governance.models import IdempotentRequest, Memory

    transport = _AnswerLostOnce()
    client = memgov.Client(service, agent_token, transport=transport, backoff=0.01)
    memory = client.memories.create(scope="acme/slides", text="Stored once, answered twice.")
    assert memory.text == "Stored once, answered twice."
    (first, key), (second, again) = transport.sent
    assert first == second == "POST" and key and again == key
    assert Memory.objects.filter(text="Stored once, answered twice.").count() == 1
    assert IdempotentRequest.objects.filter(key=key).count() == 1
    client.recall(scope="acme/slides", query="stored once", k=1)
    assert transport.sent[-1][1] is None  # a read carries no key


def test_the_settings_and_the_client_never_show_the_token_in_their_repr(service, agent_token):
    client = memgov.Client(service, agent_token)
    shown = repr(client.settings) + repr(client) + str(client.settings)
    assert agent_token not in shown
    assert client.settings.base_url in repr(client.settings)  # the rest is still there to debug with
    assert [s.path for s in client.scopes.list()] == ["acme/slides"]  # and the token is still used
