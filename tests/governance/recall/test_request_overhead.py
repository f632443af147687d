"""What a context request costs outside its stages: the token's use is written at most once a minute,
permission checks are one query each (group grants included), and the turn is stored in one statement
yet readable right after the response."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from governance.models import ApiToken, Role, Turn, TurnMemory
from governance.permissions import reading_scope_ids, roles_at
from governance.recall import assemble_context, recall_memories
from governance.services.principal import grant_add, principal_ensure
from tests.conftest import token_client


def test_a_token_records_its_use_at_most_once_a_minute(agent, project_scope):
    client = token_client(agent)
    token = ApiToken.objects.get(principal=agent)
    assert token.last_used_at is None
    assert client.get("/api/v1/memories").status_code == 200
    first = ApiToken.objects.get(pk=token.pk).last_used_at
    assert first is not None
    assert client.get("/api/v1/memories").status_code == 200
    assert ApiToken.objects.get(pk=token.pk).last_used_at == first
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now() - timedelta(minutes=2))
    assert client.get("/api/v1/memories").status_code == 200
    assert ApiToken.objects.get(pk=token.pk).last_used_at > first


def test_permission_checks_are_one_query_each_and_count_group_grants(
    project_scope, workspace_scope, django_assert_num_queries
):
    member = principal_ensure(name="nina-agent", kind="agent", actor=None)
    team = principal_ensure(name="slides-bots", kind="group", actor=None)
    grant_add(principal=team, scope=project_scope, role=Role.AGENT, actor=None)
    with django_assert_num_queries(1):
        assert roles_at(member, project_scope) == set()
    with django_assert_num_queries(1):
        assert reading_scope_ids(member, project_scope) == []
    member.groups.add(team)
    with django_assert_num_queries(1):
        assert roles_at(member, project_scope) == {Role.AGENT}
    with django_assert_num_queries(1):
        assert set(reading_scope_ids(member, project_scope)) == {project_scope.pk, workspace_scope.pk}
    assert roles_at(member, workspace_scope) == set()  # a grant covers its subtree, never what is above


def test_the_turn_and_its_cited_memories_are_stored_in_one_statement(agent, project_scope, remember):
    used = remember(
        project_scope, "Invoices are numbered INV-YYYY-NNNN", kind="convention", key="invoice_format"
    )
    with CaptureQueriesContext(connection) as queries:
        result = assemble_context(
            principal=agent, scope=project_scope, query="invoice numbering", budget_tokens=300
        )
    writes = [q["sql"] for q in queries.captured_queries if "governance_turn" in q["sql"]]
    assert len(writes) == 1 and writes[0].startswith("WITH turn AS (INSERT")
    turn = Turn.objects.get(pk=result["turn_id"])
    assert turn.packet == result["packet"] and turn.trace == result["trace"] and turn.principal_id == agent.pk
    assert TurnMemory.objects.filter(turn=turn, memory=used, slot="constraints", included=True).exists()


def test_a_context_turn_is_readable_right_after_the_response(agent, project_scope, remember):
    remember(project_scope, "Export the slides as PPTX", kind="convention", key="export_format")
    client = token_client(agent)
    response = client.post(
        "/api/v1/context",
        {"scope": project_scope.path, "query": "export format", "budget_tokens": 300},
        format="json",
    )
    assert response.status_code == 200
    turn = client.get(f"/api/v1/turns/{response.json()['turn_id']}")
    assert turn.status_code == 200 and turn.json()["packet"] == response.json()["packet"]


def test_scope_access_agrees_with_the_separate_checks_for_every_principal_and_scope(
    owner,
    reviewer,
    agent,
    outsider,
    workspace_scope,
    project_scope,
    sibling_scope,
    other_workspace_scope,
    django_assert_num_queries,
):
    from governance.errors import NotFound
    from governance.permissions import scope_access
    from governance.selectors.memory import scope_visible

    for principal in (owner, reviewer, agent, outsider):
        for scope in (workspace_scope, project_scope, sibling_scope, other_workspace_scope):
            with django_assert_num_queries(1):
                access = scope_access(principal, f"/{scope.path}/")
            try:
                visible = scope_visible(principal, scope.path) == scope
            except NotFound:
                visible = False
            assert access.scope == scope
            assert access.visible == visible, (principal, scope)
            assert access.roles == roles_at(principal, scope), (principal, scope)
            if access.roles:
                assert set(access.scope_ids) == set(reading_scope_ids(principal, scope))
    assert scope_access(owner, "acme/no-such-scope") is None


def test_context_and_recall_keep_their_answers_for_callers_without_the_right(
    reviewer, outsider, project_scope, workspace_scope
):
    viewer = principal_ensure(name="view-only", kind="agent", actor=None)
    grant_add(principal=viewer, scope=project_scope, role=Role.VIEWER, actor=None)
    body = {"scope": project_scope.path, "query": "anything", "budget_tokens": 100}
    assert token_client(outsider).post("/api/v1/context", body, format="json").status_code == 404
    assert token_client(outsider).post("/api/v1/recall", body, format="json").status_code == 404
    denied = token_client(viewer).post("/api/v1/context", body, format="json")
    assert denied.status_code == 403 and denied.json()["error"] == "permission_denied"
    # Above its grant the reviewer sees the scope exists (scope_visible) but holds no role there.
    above = {**body, "scope": workspace_scope.path}
    assert token_client(reviewer).post("/api/v1/context", above, format="json").status_code == 404
    assert (
        token_client(reviewer)
        .post("/api/v1/context", {**body, "scope": "acme/nothing"}, format="json")
        .status_code
        == 404
    )
    assert token_client(reviewer).post("/api/v1/context", body, format="json").status_code == 200


def _after_the_vector_search(agent, scope, query: str) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        assert recall_memories(principal=agent, scope=scope, query=query, k=5)
    sql = [q["sql"] for q in queries.captured_queries]
    assert not [s for s in sql if "set_config" in s]  # exact search needs no planner settings
    vector_search = [i for i, s in enumerate(sql) if s.startswith("WITH q AS MATERIALIZED")]
    assert len(vector_search) == 1
    return sql[vector_search[0] + 1 :]


def test_after_the_query_embedding_a_recall_sends_the_vector_search_and_one_row_read_at_most(
    agent, project_scope, remember
):
    """The embedding is the longest stage; what follows it is on every request's critical path. The keyword
    stages read their rows (and what adjudication needs of them: relations, stale citations) while the
    query is embedded; after it come the vector search and one prepared read of the rows only it listed
    (recall._fetch_missing), none when the keyword stages had read them all. Fusion and adjudication need
    no query of their own when nothing is superseded."""
    remember(project_scope, "Invoices are numbered INV-YYYY-NNNN", kind="convention", key="invoice_format")
    remember(project_scope, "We sent the invoice for March late", kind="episodic")
    remember(project_scope, "The invoice template lives in the finance folder")
    # every memory holds the word: the keyword stage read each row the vector search lists
    assert _after_the_vector_search(agent, project_scope, "invoice") == []
    other = remember(project_scope, "Quarterly reports go to the board in May", kind="episodic")
    after = _after_the_vector_search(agent, project_scope, "invoice")
    # the one row without the word, listed by the vector search alone, read by its id
    assert len(after) == 1 and f"m.id = ANY('{{{other.pk}}}'" in after[0], after


def test_adjudication_still_reads_relations_of_a_row_read_without_them(agent, project_scope, remember):
    """A row that did not come through the search stages' select list (no `relations` column) is asked for
    its relations: the shortcut never drops a supersedes link."""
    from governance.recall.adjudicate import _pool_relations
    from governance.recall.state import Hit
    from governance.services.memory import memory_supersede

    old = remember(project_scope, "Export the slides as PDF", kind="convention", key="export_format")
    new = memory_supersede(
        memory_id=old.pk,
        text="Export the slides as PPTX",
        reason="user: PPTX now",
        source_kind="user",
        actor=None,
    )
    bare = {"id": old.pk, "status": "superseded"}  # as read by a query without the relation columns
    with CaptureQueriesContext(connection) as queries:
        relations = _pool_relations({old.pk: Hit(id=old.pk, row=bare)})
    assert len(queries.captured_queries) == 1
    assert [(r["source_id"], r["target_id"], r["kind"]) for r in relations] == [
        (new.pk, old.pk, "supersedes")
    ]
    carried = {"id": old.pk, "status": "superseded", "relations": relations}
    with CaptureQueriesContext(connection) as queries:
        assert _pool_relations({old.pk: Hit(id=old.pk, row=carried)}) == relations
    assert queries.captured_queries == []


def test_the_api_starts_the_query_embedding_before_it_reads_the_callers_access(
    agent, project_scope, outsider, monkeypatch
):
    """The embedding overlaps the access check; a caller without access still gets a plain 404."""
    import threading

    from governance.api.context import views as context_api
    from governance.embedding.cache import query_cache
    from governance.recall import packet as packet_mod

    started = threading.Event()
    real_embed, real_access = packet_mod._embed_timed, context_api.scope_access
    seen: list[bool] = []

    def embed(query, asker, threads):
        started.set()
        return real_embed(query, asker, threads)

    def access(principal, path):
        seen.append(started.wait(10))
        return real_access(principal, path)

    monkeypatch.setattr(packet_mod, "_embed_timed", embed)
    monkeypatch.setattr(context_api, "scope_access", access)
    query_cache.clear()
    ok = token_client(agent).post(
        "/api/v1/recall", {"scope": project_scope.path, "query": "a fresh question 1"}, format="json"
    )
    assert ok.status_code == 200 and seen == [True]
    started.clear()
    denied = token_client(outsider).post(
        "/api/v1/recall", {"scope": project_scope.path, "query": "a fresh question 2"}, format="json"
    )
    assert denied.status_code == 404 and seen == [True, True]
    assert denied.json()["error"] == "not_found"
