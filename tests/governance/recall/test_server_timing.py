"""Where a read's time goes, said by the response itself: `Server-Timing` names the query embedding, each
recall stage, the caller's access check, the service call and the whole request inside Django (`app`),
from the same stage trace the packet carries; and the benchmark's HTTP client reads it back over a real
socket (evaluate_retrieval --http)."""

from __future__ import annotations

import pytest

from governance.evaluation.over_http import ask_all
from governance.runtime import tracing
from governance.runtime.tracing import parse_server_timing
from tests.conftest import token_client

RECALL_PARTS = {
    "access",
    "eligible",
    "lexical",
    "embed",
    "embed_wait",
    "vector",
    "fuse",
    "rank",
    "service",
    "app",
}


def test_the_header_value_reads_back_and_only_a_collecting_request_gathers_timings():
    tracing.timed("outside", 1.0)  # nobody collects: dropped, nothing leaks into the next request
    with tracing.collecting() as timings:
        tracing.timed("embed", 17.25)
        with tracing.timing("vector"):
            pass
    assert [name for name, _ in timings] == ["embed", "vector"]
    value = tracing.server_timing(timings)
    assert value.startswith("embed;dur=17.25, vector;dur=")
    assert parse_server_timing(value)["embed"] == 17.25
    assert parse_server_timing("a;desc=x;dur=2, b;dur=0.5") == {"a": 2.0, "b": 0.5}


def test_recall_says_each_stage_and_the_request_in_server_timing(agent, project_scope, remember):
    remember(project_scope, "The quarterly slides are exported as PPTX for the board")
    response = token_client(agent).post(
        "/api/v1/recall", {"scope": project_scope.path, "query": "board slides export", "k": 5}, format="json"
    )
    assert response.status_code == 200 and response.json()["results"]
    parts = parse_server_timing(response["Server-Timing"])
    assert RECALL_PARTS <= set(parts), parts
    assert all(ms >= 0 for ms in parts.values())
    # The request holds the service call, which holds its stages; the header names no query text.
    assert parts["app"] >= parts["service"] >= parts["vector"] + parts["fuse"]
    assert "board" not in response["Server-Timing"]


def test_context_adds_packing_and_storing_the_turn(agent, project_scope, remember):
    remember(project_scope, "Export the slides as PPTX", kind="convention", key="export_format")
    response = token_client(agent).post(
        "/api/v1/context",
        {"scope": project_scope.path, "query": "export format", "budget_tokens": 300},
        format="json",
    )
    assert response.status_code == 200
    parts = parse_server_timing(response["Server-Timing"])
    assert {"pack", "store", "service", "app"} <= set(parts)
    traced = {s["name"]: s["ms"] for s in response.json()["trace"]["stages"]}
    assert parts["pack"] == pytest.approx(traced["pack"], abs=0.01)  # one mechanism: the stage trace


def test_a_refused_read_names_no_stage(outsider, project_scope):
    response = token_client(outsider).post(
        "/api/v1/recall", {"scope": project_scope.path, "query": "anything", "k": 5}, format="json"
    )
    assert response.status_code == 404
    assert set(parse_server_timing(response["Server-Timing"])) <= {"access", "app"}


@pytest.mark.django_db(transaction=True)
def test_the_http_benchmark_asks_through_a_socket_and_ranks_as_the_service_does(
    live_server, agent, project_scope, remember
):
    from governance.recall import recall_memories
    from governance.services.principal import token_issue

    remember(project_scope, "The board wants the slides as PPTX", source_ref="D1:1")
    remember(project_scope, "Invoices are numbered INV-YYYY-NNNN", source_ref="D1:2")

    class Q:
        scope, question = project_scope.path, "which format for the board slides"
        asked_at = None

    timings, ranked, connections = ask_all(
        live_server.url, token_issue(principal=agent, actor=None), [Q(), Q()], warmup=1
    )
    assert connections >= 1 and len(timings) == 2
    assert {"http", "app", "embed", "after_embedding", "web_server_and_socket"} <= set(timings[0])
    assert timings[0]["http"] >= timings[0]["app"] > 0
    served = recall_memories(principal=agent, scope=project_scope, query=Q.question, k=10)
    assert ranked[0] == [r["source"]["ref"] for r in served] and ranked[0][0] == "D1:1"
