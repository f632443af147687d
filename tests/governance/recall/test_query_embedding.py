"""The query embedding of a context request: cached per (model, text) in a bounded LRU, computed in a
worker thread while the SQL stages run, never touching the database from that thread, and traced
honestly (`embed` is the embedding's own time, `embed_wait` what the request waited for it)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from django.db.backends.signals import connection_created

from governance.embedding import get_embedder
from governance.embedding.base import Embedder
from governance.embedding.cache import QueryEmbeddingCache, embed_query_cached, query_cache
from governance.recall import assemble_context, recall_memories
from governance.recall import packet as packet_mod


@pytest.fixture(autouse=True)
def _empty_cache():
    query_cache.clear()
    yield
    query_cache.clear()


class CountingEmbedder:
    """The real embedder, counting the queries it embeds."""

    def __init__(self, name: str | None = None) -> None:
        self.real = get_embedder()
        self.name = name or self.real.name
        self.queries: list[str] = []

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return self.real.embed_query(text)


def test_a_repeated_query_is_embedded_once_and_gets_the_same_vector():
    embedder = CountingEmbedder()
    first, cached_first = embed_query_cached(embedder, "how do we export the deck?", asker=1)
    second, cached_second = embed_query_cached(embedder, "how do we export the deck?", asker=1)
    assert embedder.queries == ["how do we export the deck?"]
    assert (cached_first, cached_second) == (False, True)
    assert np.array_equal(first, second)
    assert np.array_equal(first, get_embedder().embed_query("how do we export the deck?"))


def test_the_cache_key_holds_the_model_name():
    one, other = CountingEmbedder(name="model-a"), CountingEmbedder(name="model-b")
    embed_query_cached(one, "same words", asker=1)
    embed_query_cached(other, "same words", asker=1)
    assert one.queries == ["same words"] and other.queries == ["same words"]


def test_the_cache_key_holds_who_asked():
    embedder = CountingEmbedder()
    embed_query_cached(embedder, "did anyone ask about the merger?", asker=1)
    _, cached = embed_query_cached(embedder, "did anyone ask about the merger?", asker=2)
    assert cached is False and len(embedder.queries) == 2


def test_a_cache_hit_never_tells_one_principal_what_another_asked(
    project_scope, agent, outsider, other_workspace_scope, remember
):
    """A hit shows in the trace (`embed` ≈ 0) and in the answer time: shared across principals, the cache
    would let an agent of another workspace test whether a question was asked here."""
    remember(project_scope, "The merger closes in March", kind="episodic")
    question = "when does the merger close"
    assemble_context(principal=agent, scope=project_scope, query=question, budget_tokens=300, store=False)
    hits = query_cache.hits
    probe = assemble_context(
        principal=outsider, scope=other_workspace_scope, query=question, budget_tokens=300, store=False
    )
    assert query_cache.hits == hits  # the outsider's question was embedded for the outsider
    assert [s["ms"] for s in probe["trace"]["stages"] if s["name"] == "embed"][0] > 0.5
    again = assemble_context(
        principal=agent, scope=project_scope, query=question, budget_tokens=300, store=False
    )
    assert query_cache.hits == hits + 1 and again["packet"]


def test_cached_vectors_cannot_be_changed_by_a_caller():
    vector, _ = embed_query_cached(CountingEmbedder(), "read only please", asker=1)
    with pytest.raises(ValueError):
        vector[0] = 1.0


def test_the_cache_is_bounded_and_evicts_the_least_recently_used():
    cache = QueryEmbeddingCache(size=2)
    cache.put(("m", "a"), np.zeros(3))
    cache.put(("m", "b"), np.ones(3))
    assert cache.get(("m", "a")) is not None  # "a" is now the most recently used
    cache.put(("m", "c"), np.ones(3))
    assert len(cache) == 2
    assert cache.get(("m", "b")) is None
    assert cache.get(("m", "a")) is not None and cache.get(("m", "c")) is not None


def test_a_context_request_traces_the_embedding_and_the_wait_before_the_vector_stage(
    project_scope, agent, remember
):
    remember(project_scope, "Export the slides as PPTX", kind="convention", key="export_format")
    result = assemble_context(
        principal=agent, scope=project_scope, query="export format", budget_tokens=400, store=False
    )
    names = [s["name"] for s in result["trace"]["stages"]]
    assert names.index("embed") < names.index("embed_wait") < names.index("vector")
    assert names.index("lexical") < names.index("embed_wait")  # the SQL stages ran while it embedded
    assert all(set(s) == {"name", "ms", "in", "out"} for s in result["trace"]["stages"])


def test_a_repeated_context_request_uses_the_cached_embedding_and_returns_the_same_packet(
    project_scope, agent, remember
):
    remember(project_scope, "Invoices are numbered INV-YYYY-NNNN", kind="convention", key="invoice_format")
    remember(project_scope, "The vendor shortlist has three names", kind="episodic")
    kwargs = {
        "principal": agent,
        "scope": project_scope,
        "query": "invoice numbering",
        "budget_tokens": 400,
        "store": False,
    }
    first = assemble_context(**kwargs)
    hits_before = query_cache.hits
    second = assemble_context(**kwargs)
    assert query_cache.hits == hits_before + 1
    assert second["packet"] == first["packet"] and second["text"] == first["text"]


def test_the_embedding_thread_never_opens_a_database_connection(project_scope, agent, remember):
    remember(project_scope, "Tests first, then refactor", kind="convention", key="method")
    opened_in: list[str] = []

    def record(sender, connection, **kwargs):
        opened_in.append(threading.current_thread().name)

    connection_created.connect(record)
    try:
        for i in range(3):
            assemble_context(
                principal=agent,
                scope=project_scope,
                query=f"how do we refactor {i}",
                budget_tokens=300,
                store=False,
            )
    finally:
        connection_created.disconnect(record)
    assert not [name for name in opened_in if name.startswith("query-embed")]


def test_an_embedding_failure_fails_the_request_instead_of_hanging(project_scope, agent, monkeypatch):
    class Broken(Embedder):
        name = "broken"
        dimensions = 384

        def embed_memories(self, texts):
            raise RuntimeError("model crashed")

        def embed_query(self, text):
            raise RuntimeError("model crashed")

    monkeypatch.setattr(packet_mod, "get_embedder", lambda: Broken())
    with pytest.raises(RuntimeError, match="model crashed"):
        recall_memories(principal=agent, scope=project_scope, query="anything at all", k=5)
