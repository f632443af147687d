"""An in-process LRU cache of query embeddings, keyed by (embedder name, asker, query text).

Agents repeat their queries (the same goal asked turn after turn), and a query embedding costs more
than every SQL stage of a context request together. The key holds the embedder's name, so switching
EMBEDDING_BACKEND can never hand out a vector of the other model, and who asked (a principal's id; 0
for the service itself): a hit is visible to the caller (the trace's `embed` ≈ 0 ms, a faster answer),
so a cache shared between principals would let one learn whether another — in another workspace too —
recently asked a given question. Entries are read-only arrays, shared by every request of one asker:
nobody may change a vector another request is using."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from governance.embedding.base import Embedder

DEFAULT_SIZE = 1024  # 1024 × 384 float32 ≈ 1.5 MB per process


class QueryEmbeddingCache:
    """A bounded, thread-safe least-recently-used map (model name, text) → vector."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.size = size
        self._items: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: tuple) -> np.ndarray | None:
        with self._lock:
            vector = self._items.get(key)
            if vector is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return vector

    def put(self, key: tuple, vector: np.ndarray) -> np.ndarray:
        vector = np.array(vector, dtype=np.float32, copy=True)
        vector.flags.writeable = False
        if self.size <= 0:
            return vector
        with self._lock:
            self._items[key] = vector
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return vector

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0


query_cache = QueryEmbeddingCache()


def cache_key(embedder: Embedder, asker: int, text: str) -> tuple[str, int, str]:
    return (embedder.name, asker, text)


def asker_of(principal) -> int:
    """The cache's `asker` for a principal (None, the service itself: 0)."""
    return getattr(principal, "pk", None) or 0


def embed_query_cached(embedder: Embedder, text: str, *, asker: int) -> tuple[np.ndarray, bool]:
    """The query's vector and whether it came from `asker`'s own earlier queries (asker_of). Two threads
    missing on the same text at once both embed it; the result is the same, so no lock is held around
    the model call."""
    key = cache_key(embedder, asker, text)
    vector = query_cache.get(key)
    if vector is not None:
        return vector, True
    return query_cache.put(key, embedder.embed_query(text)), False
